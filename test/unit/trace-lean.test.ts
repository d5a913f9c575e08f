// parseTraceForLookups: a trace without its events' bodies. It must agree with the full reader on
// everything the lookups use, refuse the same bad files with the same reasons, and keep every limit while
// it skips the events.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Packr } from "msgpackr";
import { summarizeTrace } from "../../functions/cli/trace/inspect.js";
import { encodeTrace } from "../../functions/cli/trace/trace-writer.js";
import type { Trace } from "../../shared/trace/model.js";
import {
  loadTraceForLookups,
  parseTrace,
  parseTraceForLookups,
  TRACE_MAX_DEPTH,
} from "../../shared/trace/reader.js";
import { MsgpackCursor } from "../../shared/trace/strict-msgpack.js";
import { summarizeEvents } from "../../shared/trace/tables.js";
import { buildBigTrace } from "../bench/big-trace.js";
import { buildTraceBytes, buildTraceValue, findSharedTrace, finished } from "../support/trace-builder.js";
import { assertTraceError, rejectsWithTraceError } from "../support/trace-errors.js";

const MB = 1024 * 1024;

/** Lean and full agree on everything but the event bodies. */
function assertAgree(bytes: Uint8Array): Trace {
  const full = parseTrace(bytes);
  const lean = parseTraceForLookups(bytes);
  assert.equal("events" in lean, false, "the lean trace has no events array");
  assert.equal(lean.version, full.version);
  assert.deepStrictEqual(lean.config, full.config);
  assert.deepStrictEqual(lean.index, full.index);
  assert.deepStrictEqual(lean.podLifecycles, full.podLifecycles);
  assert.deepStrictEqual(lean.eventSummary, summarizeEvents(full.events));
  assert.deepStrictEqual(summarizeTrace(lean), summarizeTrace(full));
  return full;
}

describe("parseTraceForLookups agrees with parseTrace", () => {
  for (const name of ["bare-pods.sktrace", "cronjob.sktrace", "dsb-scaling.sktrace"]) {
    it(`on SimKube's ${name}`, (t) => {
      const path = findSharedTrace(name);
      if (!path) return t.skip(`SimKube's ${name} not found under ../shared/data/simkube-traces`);
      const full = assertAgree(readFileSync(path));
      assert.ok(
        full.events.length > 0 && full.podLifecycles.size + full.index.size > 0,
        "a trace with content",
      );
    });
  }

  it("on a generated trace of bare pods and Deployments, which it reads back as written", () => {
    const model = buildBigTrace({
      barePods: 300,
      deployments: 20,
      podsPerDeployment: 7,
      updatesPerDeployment: 2,
      seed: 3,
    });
    const bytes = encodeTrace(model);
    assertAgree(bytes);
    const lean = parseTraceForLookups(bytes);
    assert.deepStrictEqual(lean.index, model.index);
    assert.deepStrictEqual(lean.podLifecycles, model.podLifecycles);
    const summary = summarizeEvents(model.events);
    assert.deepStrictEqual(lean.eventSummary, summary);
    assert.equal(summary.appliedObjects, 300 + 20 * 3);
    assert.ok(summary.deletedObjects > 0 && summary.startTs !== null && summary.endTs !== null);
    assert.ok(summary.startTs < summary.endTs, "a time span");
  });

  it("on a trace without events: no time span", () => {
    const lean = parseTraceForLookups(buildTraceBytes({ events: [] }));
    assert.deepStrictEqual(lean.eventSummary, {
      count: 0,
      appliedObjects: 0,
      deletedObjects: 0,
      startTs: null,
      endTs: null,
    });
  });
});

/** A trace whose field `name` is replaced by `value` (undefined: left out), encoded as the test helpers encode traces. */
function traceWith(name: string, value: unknown, spec = {}): Uint8Array {
  const trace = buildTraceValue(spec);
  if (value === undefined) trace.delete(name);
  else trace.set(name, value);
  return new Packr({ useRecords: false, variableMapSize: true }).pack(trace);
}

describe("parseTraceForLookups refuses what parseTrace refuses, for the same reason", () => {
  const event = (fields: Array<[string, unknown]>) => new Map<string, unknown>(fields);
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ["an empty file", new Uint8Array(), /the file is empty/],
    [
      "bytes that are not msgpack",
      Uint8Array.of(0xc1, 0x00),
      /not readable msgpack: byte 0xc1 is never used/,
    ],
    ["a wrong version", buildTraceBytes({ version: 3 }), /unsupported trace format version 3/],
    ["no version", traceWith("version", undefined), /missing field "version"/],
    ["a pre-version-2 trace", new Packr({ useRecords: false }).pack([1, 2, 3, 4]), /pre-version-2 trace/],
    [
      "events that are not an array",
      traceWith("events", 7),
      /invalid trace: events: expected an array, got the integer 7/,
    ],
    [
      "an event that is not a map",
      traceWith("events", ["x"]),
      /invalid trace: events\[0\]: expected a map, got the string "x"/,
    ],
    [
      "an event without a time",
      traceWith("events", [
        event([
          ["applied_objs", []],
          ["deleted_objs", []],
        ]),
      ]),
      /invalid trace: events\[0\]: missing field "ts"/,
    ],
    [
      "a time that is not an integer",
      traceWith("events", [
        event([
          ["ts", 1.5],
          ["applied_objs", []],
          ["deleted_objs", []],
        ]),
      ]),
      /invalid trace: events\[0\]\.ts: expected an integer, got the number 1.5/,
    ],
    [
      "applied objects that are not maps",
      traceWith("events", [
        event([
          ["ts", 1],
          ["applied_objs", [3]],
          ["deleted_objs", []],
        ]),
      ]),
      /invalid trace: events\[0\]\.applied_objs\[0\]: expected a map, got the integer 3/,
    ],
    [
      "an index that is not a map",
      traceWith("index", []),
      /invalid trace: index: expected a map, got an array of 0/,
    ],
    [
      "a lifecycle of an unknown kind",
      traceWith(
        "pod_lifecycles",
        new Map([[["v1.Pod", "ns/p"], new Map([[1, [new Map([["Paused", 1]])]]])]]),
      ),
      /unknown lifecycle variant the string "Paused"/,
    ],
  ];
  for (const [what, bytes, message] of cases) {
    it(what, () => {
      const full = assertTraceError(() => parseTrace(bytes), message);
      const lean = assertTraceError(() => parseTraceForLookups(bytes), message);
      assert.equal(lean, full);
    });
  }

  it("names the version before a bad event, as the full reader does", () => {
    const bytes = traceWith("events", ["x"], { version: 9 });
    const message = /unsupported trace format version 9/;
    assert.equal(
      assertTraceError(() => parseTraceForLookups(bytes), message),
      assertTraceError(() => parseTrace(bytes), message),
    );
  });

  it("a file cut off inside the events", () => {
    const whole = encodeTrace(
      buildBigTrace({ barePods: 20, deployments: 2, podsPerDeployment: 2, updatesPerDeployment: 0, seed: 1 }),
    );
    const cut = whole.subarray(0, Math.floor(whole.length / 2));
    const message = /invalid trace: not readable msgpack: the data ends early \(truncated file\?\)/;
    assertTraceError(() => parseTraceForLookups(cut), message);
    assertTraceError(() => parseTrace(cut), message);
  });

  it("an events array that claims more events than the file holds", () => {
    // Two events declared, one written: the reader runs into the next field, or out of bytes.
    const bytes = Buffer.from(
      traceWith("events", [
        event([
          ["ts", 1],
          ["applied_objs", []],
          ["deleted_objs", []],
        ]),
      ]),
    );
    const header = bytes.indexOf(Buffer.from([0xa6, ...Buffer.from("events"), 0x91]));
    assert.ok(header > 0);
    bytes[header + 7] = 0x92;
    assertTraceError(() => parseTraceForLookups(bytes), /invalid trace: (events\[1\]|not readable msgpack)/);
  });

  it("does not check the objects' bodies, which it never builds (the full reader does)", () => {
    const bytes = traceWith("events", [
      event([
        ["ts", 1],
        ["applied_objs", [new Map([[7, "an integer key"]])]],
        ["deleted_objs", []],
      ]),
    ]);
    assertTraceError(() => parseTrace(bytes), /expected string keys, got the integer 7/);
    assert.equal(parseTraceForLookups(bytes).eventSummary.appliedObjects, 1);
  });
});

const PLACEHOLDER = "@@raw-msgpack@@";

/** A valid trace with `raw` (hand-made msgpack) as the spec of its first applied object. */
function traceWithRaw(raw: Uint8Array): Uint8Array {
  const value = buildTraceValue({
    events: [{ ts: 1 }],
    podLifecycles: [{ gvk: "v1.Pod", nsName: "a/b", hash: 1, lifecycles: [finished(1, 2)] }],
  });
  (value.get("events") as Array<Map<string, unknown>>)[0]?.set("applied_objs", [
    new Map([["spec", PLACEHOLDER]]),
  ]);
  const bytes = Buffer.from(new Packr({ useRecords: false }).pack(value));
  const encoded = Buffer.from([0xa0 + PLACEHOLDER.length, ...Buffer.from(PLACEHOLDER)]);
  const at = bytes.indexOf(encoded);
  return Buffer.concat([bytes.subarray(0, at), raw, bytes.subarray(at + encoded.length)]);
}

describe("parseTraceForLookups keeps every limit while skipping the events", () => {
  it("still reads a trace with something ordinary in the skipped object", () => {
    const lean = parseTraceForLookups(traceWithRaw(Uint8Array.of(0x92, 0x01, 0xa1, 0x61)));
    assert.equal(lean.eventSummary.appliedObjects, 1);
  });

  it("refuses nesting deeper than the limit", () => {
    for (const depth of [TRACE_MAX_DEPTH, 1_000_000]) {
      const bytes = traceWithRaw(Buffer.concat([Buffer.alloc(depth, 0x91), Buffer.from([0x01])]));
      assertTraceError(
        () => parseTraceForLookups(bytes),
        new RegExp(`nesting deeper than ${TRACE_MAX_DEPTH} levels`),
      );
    }
  });

  it("refuses a count the file cannot hold, before allocating anything", () => {
    const bytes = traceWithRaw(Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]));
    assertTraceError(
      () => parseTraceForLookups(bytes),
      /array of 4294967295 items cannot fit in the \d+ bytes left/,
    );
  });

  it("refuses a file of empty maps that would decode far larger than itself, though it builds none", () => {
    const header = Buffer.from([0xdd, 0, 0, 0, 0]);
    header.writeUInt32BE(MB, 1);
    const bytes = traceWithRaw(Buffer.concat([header, Buffer.alloc(MB, 0x80)]));
    assertTraceError(() => parseTrace(bytes), /decoded size would exceed/);
    assertTraceError(() => parseTraceForLookups(bytes), /decoded size would exceed/);
  });

  it("refuses extension types and invalid UTF-8 in what it skips", () => {
    assertTraceError(
      () => parseTraceForLookups(traceWithRaw(Uint8Array.of(0xd6, 0x69, 0, 0, 0, 1))),
      /extension type 105 is not allowed/,
    );
    assertTraceError(
      () => parseTraceForLookups(traceWithRaw(Uint8Array.of(0xa2, 0xc3, 0x28))),
      /a string that is not valid UTF-8/,
    );
    const long = Buffer.concat([Buffer.from([0xd9, 40]), Buffer.alloc(39, 0x61), Buffer.from([0xff])]);
    assertTraceError(() => parseTraceForLookups(traceWithRaw(long)), /a string that is not valid UTF-8/);
  });
});

describe("loadTraceForLookups", () => {
  it("reads a file without its events, and names the file when it is bad", async () => {
    const dir = mkdtempSync(join(tmpdir(), "simkube-fn-lean-"));
    try {
      const good = join(dir, "good.sktrace");
      const bad = join(dir, "bad.sktrace");
      writeFileSync(good, buildTraceBytes({ events: [{ ts: 5, applied: [{ kind: "Pod" }] }] }));
      writeFileSync(bad, buildTraceBytes({ version: 3 }));
      const lean = await loadTraceForLookups(good);
      assert.equal("events" in lean, false);
      assert.deepStrictEqual([lean.eventSummary.count, lean.eventSummary.startTs], [1, 5]);
      await rejectsWithTraceError(
        loadTraceForLookups(bad),
        `${bad}: unsupported trace format version 3: this function reads version 2 (SimKube >= 2.0)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("MsgpackCursor", () => {
  const LIMITS = { maxDepth: 8, maxDecodedBytes: 1e6 };

  it("reads a header only when the next value is of that kind", () => {
    const cursor = new MsgpackCursor(Uint8Array.of(0x91, 0x81, 0xa1, 0x6b, 0x02), LIMITS);
    assert.equal(cursor.mapHeader(1), -1);
    assert.equal(cursor.pos, 0, "nothing read");
    assert.equal(cursor.arrayHeader(1), 1);
    assert.equal(cursor.arrayHeader(2), -1);
    assert.equal(cursor.mapHeader(2), 1);
    assert.equal(cursor.value(3), "k");
    assert.equal(cursor.value(3), 2);
    cursor.expectEnd();
  });

  it("skips exactly what it would decode, and charges the same", () => {
    const bytes = new Packr({ useRecords: false, variableMapSize: true }).pack(
      new Map<unknown, unknown>([
        [
          "a",
          [1, -1, 300, 70_000, 2 ** 40, -(2 ** 40), 1.5, null, true, "é", "x".repeat(300), Uint8Array.of(1)],
        ],
        [[1, 2], new Map([["nested", new Map()]])],
      ]),
    );
    const skipping = new MsgpackCursor(bytes, LIMITS);
    skipping.skip(1);
    skipping.expectEnd();
    const decoding = new MsgpackCursor(bytes, LIMITS);
    decoding.value(1);
    assert.deepStrictEqual(skipping.mark(), decoding.mark());
  });
});
