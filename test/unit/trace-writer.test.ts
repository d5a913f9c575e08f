// The product encoder: msgpack bytes as SimKube's rmp_serde writes them, and whole traces. The strongest
// check is the round trip on SimKube's own traces: decode, re-encode, compare every byte.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { Unpackr } from "msgpackr";
import {
  encodeMsgpack,
  type MsgpackValue,
  MsgpackWriteError,
} from "../../functions/cli/trace/msgpack-writer.js";
import { encodeTrace } from "../../functions/cli/trace/trace-writer.js";
import { parseTrace } from "../../shared/trace/reader.js";
import { buildTrace, empty, findSharedTrace, finished, running } from "../support/trace-builder.js";

const SIMKUBE_TRACES = ["bare-pods.sktrace", "cronjob.sktrace", "dsb-scaling.sktrace"];
const raw = new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false });

const hex = (value: MsgpackValue) => Buffer.from(encodeMsgpack(value)).toString("hex");

describe("encodeMsgpack: rmp's smallest encodings", () => {
  it("writes non-negative integers as unsigned, in the smallest width", () => {
    const cases: Array<[MsgpackValue, string]> = [
      [0, "00"],
      [127, "7f"],
      [128, "cc80"],
      [255, "ccff"],
      [256, "cd0100"],
      [65535, "cdffff"],
      [65536, "ce00010000"],
      [2 ** 32 - 1, "ceffffffff"],
      [2 ** 32, "cf0000000100000000"],
      // A u64 hash below 2^63 is still `uint 64` (msgpackr's own encoder writes `int 64` here).
      [2n ** 62n, "cf4000000000000000"],
      [2n ** 64n - 1n, "cfffffffffffffffff"],
    ];
    for (const [value, expected] of cases) assert.equal(hex(value), expected, `for ${value}`);
  });

  it("writes negative integers as signed, in the smallest width", () => {
    const cases: Array<[MsgpackValue, string]> = [
      [-1, "ff"],
      [-32, "e0"],
      [-33, "d0df"],
      [-128, "d080"],
      [-129, "d1ff7f"],
      [-32768, "d18000"],
      [-32769, "d2ffff7fff"],
      [-(2 ** 31), "d280000000"],
      [-(2 ** 31) - 1, "d3ffffffff7fffffff"],
      [-(2n ** 63n), "d38000000000000000"],
    ];
    for (const [value, expected] of cases) assert.equal(hex(value), expected, `for ${value}`);
  });

  it("sizes string, array and map headers by their length", () => {
    assert.equal(hex("a".repeat(31)).slice(0, 2), "bf");
    assert.equal(hex("a".repeat(32)).slice(0, 4), "d920");
    assert.equal(hex("a".repeat(256)).slice(0, 6), "da0100");
    assert.equal(hex("a".repeat(65536)).slice(0, 10), "db00010000");
    assert.equal(hex("é"), "a2c3a9", "the header counts UTF-8 bytes");
    assert.equal(hex(new Array(15).fill(0)).slice(0, 2), "9f");
    assert.equal(hex(new Array(16).fill(0)).slice(0, 6), "dc0010");
    assert.equal(hex(new Map([[1, 2]])), "810102");
    assert.equal(hex({ a: 1, skipped: undefined }), "81a16101", "undefined members are absent");
  });

  it("writes null, booleans and non-integral numbers as f64", () => {
    assert.equal(hex([null, true, false]), "93c0c3c2");
    assert.equal(hex(1.5), "cb3ff8000000000000");
  });

  it("refuses what msgpack cannot say exactly", () => {
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /cannot encode undefined/],
      [Number.NaN, /not a JSON number/],
      [2 ** 60, /beyond 2\^53: pass a bigint/],
      [2n ** 64n, /does not fit 64 bits/],
      [new Date(0), /an object of type Date/],
    ];
    for (const [value, message] of bad) {
      assert.throws(
        () => encodeMsgpack(value as MsgpackValue),
        (err: unknown) => {
          assert.ok(err instanceof MsgpackWriteError);
          assert.match(err.message, message);
          return true;
        },
      );
    }
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    assert.throws(() => encodeMsgpack(cyclic as MsgpackValue), /nested deeper than 512 levels/);
  });
});

describe("round trip on SimKube's own traces", () => {
  for (const name of SIMKUBE_TRACES) {
    it(`${name}: msgpack decoded and re-encoded is byte-identical`, (t) => {
      const path = findSharedTrace(name);
      if (!path) return t.skip(`shared trace ${name} not found`);
      const bytes = readFileSync(path);
      assert.ok(Buffer.from(encodeMsgpack(raw.unpack(bytes) as MsgpackValue)).equals(bytes));
    });

    it(`${name}: parseTrace then encodeTrace is byte-identical`, (t) => {
      const path = findSharedTrace(name);
      if (!path) return t.skip(`shared trace ${name} not found`);
      const bytes = readFileSync(path);
      const again = encodeTrace(parseTrace(bytes));
      assert.equal(again.length, bytes.length);
      assert.ok(Buffer.from(again).equals(bytes));
    });
  }
});

describe("encodeTrace", () => {
  it("writes what parseTrace reads back unchanged, u64 hashes and every lifecycle variant included", () => {
    const trace = buildTrace({
      config: {
        trackedObjects: {
          "v1.Pod": { podSpecTemplatePaths: [""], trackLifecycle: true, skipOwned: true },
          "example.com/v1.Widget": {},
        },
      },
      events: [
        { ts: -5, applied: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns" } }] },
        {
          ts: 2 ** 40,
          deleted: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns" } }],
        },
      ],
      index: { "v1.Pod": { "ns/p": "18446744073709551615" }, "example.com/v1.Widget": { "ns/w": 7 } },
      podLifecycles: [
        {
          gvk: "v1.Pod",
          nsName: "ns/p",
          hash: "9223372036854775808",
          lifecycles: [finished(1, 2), running(3)],
        },
        { gvk: "example.com/v1.Widget", nsName: "ns/w", hash: 1, lifecycles: [empty()] },
        { gvk: "example.com/v1.Widget", nsName: "ns/w", hash: 2, lifecycles: [finished(-1, 0)] },
      ],
    });
    assert.deepEqual(parseTrace(encodeTrace(trace)), trace);
  });

  it("refuses a version other than 2 and a hash that is not a u64", () => {
    const trace = buildTrace({});
    assert.throws(() => encodeTrace({ ...trace, version: 3 }), /only write trace format version 2/);
    const badHash = buildTrace({ index: { "v1.Pod": ["ns/p"] } });
    badHash.index.get("v1.Pod")?.set("ns/p", "18446744073709551616");
    assert.throws(
      () => encodeTrace(badHash),
      /hash "18446744073709551616" is not an unsigned 64-bit integer/,
    );
  });
});
