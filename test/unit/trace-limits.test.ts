// Hostile traces: a few hundred bytes must not take the process down, and SimKube's real traces must
// decode exactly as they did before the decoder became strict.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Packr, Unpackr } from "msgpackr";
import { parseTrace, TRACE_MAX_DEPTH } from "../../shared/trace/reader.js";
import { decodeMsgpack } from "../../shared/trace/strict-msgpack.js";
import { buildTraceValue, findSharedTrace } from "../support/trace-builder.js";
import { assertTraceError } from "../support/trace-errors.js";

const MB = 1024 * 1024;

/** A valid trace whose first event applies `obj`, encoded by `packr`. */
function traceWithObject(obj: unknown, packr: Packr): Uint8Array {
  const value = buildTraceValue({ events: [{ ts: 1 }] });
  (value.get("events") as Array<Map<string, unknown>>)[0]?.set("applied_objs", [new Map([["spec", obj]])]);
  return packr.pack(value);
}

/** RSS growth while `fn` runs; what the process keeps after a bomb is what would have taken it down. */
function rssGrowth(fn: () => void): number {
  const before = process.memoryUsage().rss;
  fn();
  return process.memoryUsage().rss - before;
}

describe("parseTrace: trace bombs", () => {
  it("rejects a ~500-byte back-reference bomb with bounded memory", () => {
    // 32 levels of [x, x], each x a pointer to the level below: 2^32 leaves once walked. Records on too.
    let dag: unknown = [0];
    for (let i = 0; i < 32; i++) dag = [dag, dag];
    const bytes = traceWithObject(dag, new Packr({ structuredClone: true, useRecords: true }));
    assert.ok(bytes.length < 600, `the bomb is ${bytes.length} bytes`);

    const growth = rssGrowth(() =>
      assertTraceError(
        () => parseTrace(bytes),
        /invalid trace: not readable msgpack: extension type 105 is not allowed: .* \(at byte \d+\)/,
      ),
    );
    assert.ok(growth < 200 * MB, `RSS grew by ${Math.round(growth / MB)} MB`);
  });

  it("rejects msgpackr records, which would turn later small integers into objects", () => {
    const bytes = traceWithObject(
      [
        { a: 1, b: 2 },
        { a: 3, b: 4 },
      ],
      new Packr({ useRecords: true, mapsAsObjects: true }),
    );
    assertTraceError(() => parseTrace(bytes), /extension type 114 is not allowed/);
  });

  it("rejects nesting deeper than the limit, however deep", () => {
    for (const depth of [TRACE_MAX_DEPTH, 1_000_000]) {
      const bytes = traceWithRaw(Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0x01])]));
      assertTraceError(
        () => parseTrace(bytes),
        new RegExp(`not readable msgpack: nesting deeper than ${TRACE_MAX_DEPTH} levels \\(at byte \\d+\\)`),
      );
    }
  });

  it("rejects a file whose decoded size would be far larger than itself", () => {
    // 1 MiB of empty objects: ~190x on the heap, over the 32x budget.
    const count = MB;
    const header = Buffer.from([0xdd, 0, 0, 0, 0]);
    header.writeUInt32BE(count, 1);
    const bytes = traceWithRaw(Buffer.concat([header, Buffer.alloc(count, 0x80)]));
    const growth = rssGrowth(() => assertTraceError(() => parseTrace(bytes), /decoded size would exceed/));
    assert.ok(growth < 200 * MB, `RSS grew by ${Math.round(growth / MB)} MB`);
  });

  it("rejects an element count the file cannot hold, without allocating it", () => {
    const bytes = traceWithRaw(Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]));
    assertTraceError(() => parseTrace(bytes), /array of 4294967295 items cannot fit in the \d+ bytes left/);
  });
});

const PLACEHOLDER = "@@raw-msgpack@@";

/** A valid trace with `raw` (hand-made msgpack) as the spec of its first applied object. */
function traceWithRaw(raw: Uint8Array): Uint8Array {
  const bytes = Buffer.from(traceWithObject(PLACEHOLDER, new Packr({ useRecords: false })));
  const encoded = Buffer.from([0xa0 + PLACEHOLDER.length, ...Buffer.from(PLACEHOLDER)]);
  const at = bytes.indexOf(encoded);
  return Buffer.concat([bytes.subarray(0, at), raw, bytes.subarray(at + encoded.length)]);
}

describe("parseTrace: SimKube's traces decode exactly as with msgpackr", () => {
  const msgpackr = new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false });
  for (const name of ["bare-pods.sktrace", "cronjob.sktrace", "dsb-scaling.sktrace"]) {
    it(name, (t) => {
      const path = findSharedTrace(name);
      if (!path) return t.skip(`shared trace ${name} not found`);
      const bytes = readFileSync(path);
      const strict = decodeMsgpack(bytes, { maxDepth: TRACE_MAX_DEPTH, maxDecodedBytes: 64 * MB });
      assert.deepStrictEqual(strict, msgpackr.unpack(bytes));
      assert.doesNotThrow(() => parseTrace(bytes));
    });
  }
});
