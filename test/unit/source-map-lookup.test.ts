// mappingLookup answers every position as node:module's SourceMap.findEntry does (the source it replaces, for
// its memory: source-map-lookup.ts), on random maps with every kind of segment, and on the serve bundle's own
// map when the build made one.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { mappingLookup } from "../../functions/runtime/source-map-lookup.js";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const SERVE_MAP = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../bundle/simkube-fn-serve.cjs.map",
);

function vlq(value: number): string {
  let rest = value < 0 ? (-value << 1) | 1 : value << 1;
  let text = "";
  do {
    let digit = rest & 31;
    rest >>>= 5;
    if (rest > 0) digit |= 32;
    text += BASE64[digit];
  } while (rest > 0);
  return text;
}

/** A deterministic pseudo-random generator (mulberry32), so a failure can be replayed. */
function random(seed: number): (below: number) => number {
  let a = seed;
  return (below) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/** Lines of segments with 1, 4 and 5 fields, empty lines, columns now and then out of order or repeated. */
function randomMappings(seed: number, lines: number): string {
  const next = random(seed);
  const out: string[] = [];
  for (let l = 0; l < lines; l++) {
    const segments: string[] = [];
    const count = next(4) === 0 ? 0 : next(8);
    for (let s = 0; s < count; s++) {
      const column = next(10) === 0 ? -next(3) : next(12);
      const fields = [column];
      const kind = next(5);
      // The last segment of the map has a source: Node reads past the end after a one-field one.
      if (kind > 0 || (l === lines - 1 && s === count - 1))
        fields.push(next(5) - 2, next(21) - 10, next(21) - 10);
      if (kind > 2) fields.push(next(5) - 2);
      segments.push(fields.map(vlq).join(""));
    }
    out.push(segments.join(","));
  }
  return out.join(";");
}

function assertSameAsNode(mappings: string, sources: string[], positions: Array<[number, number]>): void {
  const payload = {
    version: 3,
    file: "x.js",
    sources,
    sourcesContent: [],
    sourceRoot: "",
    names: ["n"],
    mappings,
  };
  const node = new SourceMap(payload);
  const ours = mappingLookup(mappings, sources);
  for (const [line, column] of positions) {
    const entry = node.findEntry(line, column) as {
      originalSource?: string;
      originalLine?: number;
      originalColumn?: number;
    };
    const expected = entry.originalSource
      ? { source: entry.originalSource, line: entry.originalLine, column: entry.originalColumn }
      : undefined;
    assert.deepEqual(ours(line, column), expected, `at ${line}:${column} of ${mappings}`);
  }
}

describe("mappingLookup", () => {
  it("finds what node:module's SourceMap finds, at every position of random maps", () => {
    const sources = ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"];
    for (let seed = 1; seed <= 300; seed++) {
      const lines = 1 + (seed % 9);
      const positions: Array<[number, number]> = [];
      for (let line = 0; line <= lines + 1; line++) {
        for (let column = 0; column < 40; column++) positions.push([line, column]);
      }
      assertSameAsNode(randomMappings(seed, lines), sources, positions);
    }
  });

  it("finds nothing in an empty map or before the first segment", () => {
    assert.equal(mappingLookup("", ["a.ts"])(0, 0), undefined);
    assert.equal(mappingLookup(";;", ["a.ts"])(2, 5), undefined);
    assert.equal(mappingLookup("KAAA", ["a.ts"])(0, 4), undefined);
    assert.deepEqual(mappingLookup("KAAA", ["a.ts"])(0, 5), { source: "a.ts", line: 0, column: 0 });
  });

  it("refuses mappings that are not base64 VLQ", () => {
    assert.throws(() => mappingLookup("A!AA", ["a.ts"])(0, 3), /invalid source map mappings at 1/);
  });

  it("finds what node:module's SourceMap finds in the serve bundle's map", (t) => {
    if (!existsSync(SERVE_MAP)) {
      assert.notEqual(process.env.CI, "true", "CI builds the bundle before the tests");
      return t.skip("no dist/bundle (run npm run build)");
    }
    const map = JSON.parse(readFileSync(SERVE_MAP, "utf8")) as { mappings: string; sources: string[] };
    const next = random(7);
    const lines = map.mappings.split(";").length;
    const positions = Array.from({ length: 2_000 }, (): [number, number] => [next(lines), next(20_000)]);
    assertSameAsNode(map.mappings, map.sources, positions);
  });
});
