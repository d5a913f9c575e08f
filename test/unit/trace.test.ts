import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { formatGvk, GvkError, gvkOfOwner, parseGvk } from "../../shared/trace/gvk.js";
import { parseTrace } from "../../shared/trace/reader.js";
import { getPodLifecycles, hasObject, indexSize, lifecycleOwners } from "../../shared/trace/tables.js";
import {
  buildTrace,
  buildTraceBytes,
  buildTraceValue,
  encodeMsgpack,
  findSharedTrace,
  finished,
  running,
} from "../support/trace-builder.js";
import { assertTraceError } from "../support/trace-errors.js";

const U64_MAX = "18446744073709551615";
const TWO_POW_53_PLUS_1 = "9007199254740993";

function readShared(name: string): Uint8Array | undefined {
  const path = findSharedTrace(name);
  return path ? readFileSync(path) : undefined;
}

/** Encodes a valid trace after `edit` has changed its msgpack-shaped value. */
function corrupted(edit: (value: Map<string, unknown>) => unknown): Uint8Array {
  const value = buildTraceValue({
    events: [
      { ts: 100, applied: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns" } }] },
    ],
    index: { "v1.Pod": ["ns/p"] },
    podLifecycles: [{ gvk: "v1.Pod", nsName: "ns/p", hash: "5", lifecycles: [finished(1, 2)] }],
  });
  return encodeMsgpack(edit(value) ?? value);
}

describe("parseTrace: SimKube's example traces", () => {
  it("reads bare-pods.sktrace", (t) => {
    const bytes = readShared("bare-pods.sktrace");
    if (!bytes) return t.skip("shared trace bare-pods.sktrace not found");
    const trace = parseTrace(bytes);

    assert.equal(trace.version, 2);
    assert.deepEqual(trace.config, {
      trackedObjects: { "v1.Pod": { podSpecTemplatePaths: [""], trackLifecycle: true, skipOwned: true } },
    });
    assert.equal(trace.events.length, 4);
    assert.deepEqual(
      trace.events.map((e) => [e.ts, e.appliedObjs.length, e.deletedObjs.length]),
      [
        [1781282468, 1, 0],
        [1781282510, 1, 0],
        [1781282570, 1, 0],
        [1781282630, 1, 0],
      ],
    );
    const pod = trace.events[0]?.appliedObjs[0];
    assert.equal(Object.getPrototypeOf(pod), Object.prototype, "objects are plain, not Maps");
    assert.equal(pod?.kind, "Pod");
    assert.equal(pod?.metadata?.name, "bare-pod-1781282449");
    assert.equal(pod?.metadata?.namespace, "testing");
    assert.doesNotThrow(() => JSON.stringify(trace.events), "events are JSON-safe");

    assert.equal(indexSize(trace), 16);
    assert.ok(hasObject(trace, "v1.Pod", "testing/bare-pod-1781282630"));
    assert.ok(!hasObject(trace, "v1.Pod", "testing/no-such-pod"));
    // Above 2^63: only exact through bigint.
    assert.equal(trace.index.get("v1.Pod")?.get("testing/bare-pod-1780371934"), "17744887352825418200");

    assert.equal(trace.podLifecycles.size, 4);
    for (const { gvk, nsName } of lifecycleOwners(trace)) {
      assert.equal(gvk, "v1.Pod");
      assert.deepEqual([...(getPodLifecycles(trace, gvk, nsName)?.keys() ?? [])], ["2151974655102796215"]);
    }
    const byHash = (nsName: string) => getPodLifecycles(trace, "v1.Pod", nsName)?.get("2151974655102796215");
    assert.deepEqual(byHash("testing/bare-pod-1781282570"), [finished(1781282571, 1781282601)]);
    assert.deepEqual(byHash("testing/bare-pod-1781282449"), [finished(1781282468, 1781282480)]);
    assert.deepEqual(byHash("testing/bare-pod-1781282630"), [running(1781282631)]);
  });

  it("reads cronjob.sktrace", (t) => {
    const bytes = readShared("cronjob.sktrace");
    if (!bytes) return t.skip("shared trace cronjob.sktrace not found");
    const trace = parseTrace(bytes);

    assert.deepEqual(trace.config.trackedObjects, {
      "apps/v1.Deployment": { trackLifecycle: false, skipOwned: false },
      "batch/v1.CronJob": { trackLifecycle: true, skipOwned: false },
      "apps/v1.StatefulSet": { trackLifecycle: false, skipOwned: false },
    });
    assert.deepEqual(
      trace.events.map((e) => [e.ts, e.appliedObjs.length, e.deletedObjs.length]),
      [
        [1743286823, 0, 0],
        [1743286823, 1, 0],
        [1743287028, 0, 1],
      ],
    );
    assert.equal(trace.events[2]?.deletedObjs[0]?.kind, "CronJob");
    assert.equal(indexSize(trace), 1);
    assert.equal(trace.index.get("batch/v1.CronJob")?.get("default/hello-simkube"), "17156035354639895998");
    assert.deepEqual(lifecycleOwners(trace), [{ gvk: "batch/v1.CronJob", nsName: "default/hello-simkube" }]);
    const byHash = getPodLifecycles(trace, "batch/v1.CronJob", "default/hello-simkube");
    assert.deepEqual(
      byHash,
      new Map([
        [
          "10855072724872030168",
          [
            finished(1743286861, 1743286891),
            finished(1743286921, 1743286951),
            finished(1743286981, 1743287011),
          ],
        ],
      ]),
    );
  });

  it("reads dsb-scaling.sktrace", (t) => {
    const bytes = readShared("dsb-scaling.sktrace");
    if (!bytes) return t.skip("shared trace dsb-scaling.sktrace not found");
    const trace = parseTrace(bytes);

    assert.equal(trace.events.length, 19);
    assert.equal(
      trace.events.reduce((n, e) => n + e.appliedObjs.length, 0),
      46,
    );
    assert.equal(trace.events.at(-1)?.ts, 1710893272);
    assert.equal(indexSize(trace), 27);
    assert.deepEqual([...trace.index.keys()], ["apps/v1.Deployment"]);
    assert.ok(hasObject(trace, "apps/v1.Deployment", "dsb/nginx-thrift"));
    assert.equal(trace.index.get("apps/v1.Deployment")?.get("dsb/nginx-thrift"), "1803874470746433046");
    assert.equal(trace.podLifecycles.size, 0);
    assert.deepEqual(Object.keys(trace.config.trackedObjects), ["apps/v1.Deployment"]);
  });
});

describe("parseTrace: synthetic traces", () => {
  it("round-trips u64 hashes exactly, small and large", () => {
    const hashes = ["0", "7", "4294967295", "4294967296", TWO_POW_53_PLUS_1, "9223372036854775808", U64_MAX];
    const bytes = buildTraceBytes({
      index: { "example.com/v1.Widget": Object.fromEntries(hashes.map((h) => [`ns/w-${h}`, h])) },
      podLifecycles: hashes.map((h, i) => ({
        gvk: "example.com/v1.Widget",
        nsName: "ns/w",
        hash: h,
        lifecycles: [finished(i, i + 10)],
      })),
    });
    // u64::MAX is written as msgpack uint64, as rmp_serde writes it.
    assert.ok(Buffer.from(bytes).includes(Buffer.from("cfffffffffffffffff", "hex")));

    const trace = parseTrace(bytes);
    const index = trace.index.get("example.com/v1.Widget");
    for (const h of hashes) assert.equal(index?.get(`ns/w-${h}`), h);
    const byHash = getPodLifecycles(trace, "example.com/v1.Widget", "ns/w");
    assert.deepEqual([...(byHash?.keys() ?? [])], hashes);
    assert.deepEqual(byHash?.get(U64_MAX), [finished(6, 16)]);
    assert.deepEqual(byHash?.get(TWO_POW_53_PLUS_1), [finished(4, 14)]);
    assert.equal(byHash?.get("9007199254740992"), undefined, "2^53 is a different hash than 2^53+1");
  });

  it("keeps several owners and hashes apart, and every lifecycle variant", () => {
    const trace = buildTrace({
      podLifecycles: [
        { gvk: "apps/v1.Deployment", nsName: "ns/a", hash: 1, lifecycles: [finished(0, 5), running(7)] },
        { gvk: "apps/v1.Deployment", nsName: "ns/a", hash: 2, lifecycles: [{ kind: "Empty" }] },
        { gvk: "apps/v1.StatefulSet", nsName: "ns/a", hash: 1, lifecycles: [running(3)] },
      ],
    });
    assert.deepEqual(lifecycleOwners(trace), [
      { gvk: "apps/v1.Deployment", nsName: "ns/a" },
      { gvk: "apps/v1.StatefulSet", nsName: "ns/a" },
    ]);
    assert.deepEqual(
      getPodLifecycles(trace, "apps/v1.Deployment", "ns/a"),
      new Map([
        ["1", [finished(0, 5), running(7)]],
        ["2", [{ kind: "Empty" }]],
      ]),
    );
    assert.deepEqual(getPodLifecycles(trace, "apps/v1.StatefulSet", "ns/a"), new Map([["1", [running(3)]]]));
    assert.equal(getPodLifecycles(trace, "apps/v1.ReplicaSet", "ns/a"), undefined);
  });

  it("accepts the old core spelling /v1.Pod and stores it as v1.Pod", () => {
    const trace = buildTrace({
      config: { trackedObjects: { "/v1.Pod": { trackLifecycle: true } } },
      index: { "/v1.Pod": ["ns/p"] },
      podLifecycles: [{ gvk: "/v1.Pod", nsName: "ns/p", hash: 3, lifecycles: [running(1)] }],
    });
    assert.deepEqual(Object.keys(trace.config.trackedObjects), ["v1.Pod"]);
    assert.deepEqual([...trace.index.keys()], ["v1.Pod"]);
    assert.ok(hasObject(trace, "v1.Pod", "ns/p"));
    assert.ok(hasObject(trace, "/v1.Pod", "ns/p"));
    assert.deepEqual(lifecycleOwners(trace), [{ gvk: "v1.Pod", nsName: "ns/p" }]);
    assert.ok(getPodLifecycles(trace, "/v1.Pod", "ns/p"));
  });

  it("takes the deprecated podSpecTemplatePath when the list is absent", () => {
    const bytes = corrupted((v) => {
      const tracked = (v.get("config") as Map<string, Map<string, unknown>>).get("trackedObjects");
      tracked?.set("example.com/v1.Widget", new Map([["podSpecTemplatePath", "/spec/template"]]));
    });
    assert.deepEqual(parseTrace(bytes).config.trackedObjects["example.com/v1.Widget"], {
      podSpecTemplatePaths: ["/spec/template"],
      trackLifecycle: false,
      skipOwned: false,
    });
  });

  it("reads an empty trace", () => {
    const trace = buildTrace();
    assert.deepEqual(
      { ...trace },
      { version: 2, config: { trackedObjects: {} }, events: [], index: new Map(), podLifecycles: new Map() },
    );
  });

  it("keeps a __proto__ key in an object as data", () => {
    const bytes = corrupted((v) => {
      const events = v.get("events") as Array<Map<string, unknown>>;
      events[0]?.set("applied_objs", [new Map([["__proto__", new Map([["polluted", true]])]])]);
    });
    const obj = parseTrace(bytes).events[0]?.appliedObjs[0];
    assert.equal(Object.getPrototypeOf(obj), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyNames(obj), ["__proto__"]);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });

  it("turns integers in objects beyond 2^53 into decimal strings, never rounded numbers", () => {
    const bytes = corrupted((v) => {
      const events = v.get("events") as Array<Map<string, unknown>>;
      events[0]?.set("applied_objs", [
        new Map([
          ["big", 2n ** 64n - 1n],
          ["small", 2n ** 40n],
        ]),
      ]);
    });
    assert.deepEqual(parseTrace(bytes).events[0]?.appliedObjs[0], { big: U64_MAX, small: 2 ** 40 });
  });
});

describe("parseTrace: versions", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["version 1", 1, /unsupported trace format version 1: this function reads version 2 \(SimKube >= 2\.0\)/],
    ["version 3", 3, /unsupported trace format version 3/],
    ["version as a string", "2", /invalid trace: version: expected an integer, got the string "2"/],
  ];
  for (const [name, version, message] of cases) {
    it(`rejects ${name}`, () => {
      assertTraceError(() => parseTrace(buildTraceBytes({ version })), message);
    });
  }

  it("rejects a trace without a version", () => {
    const bytes = corrupted((v) => {
      v.delete("version");
    });
    assertTraceError(() => parseTrace(bytes), /missing field "version".*SimKube >= 2\.0/);
  });

  it("recognises a pre-version-2 trace (a 4-element array)", () => {
    const bytes = encodeMsgpack([new Map(), [], new Map(), new Map()]);
    assertTraceError(() => parseTrace(bytes), /pre-version-2 trace \(SimKube <= 1\.1\.1/);
  });
});

describe("parseTrace: corrupt input", () => {
  it("rejects truncated bytes", (t) => {
    const full = readShared("cronjob.sktrace") ?? buildTraceBytes({ index: { "v1.Pod": ["ns/p"] } });
    if (full.length < 10) return t.skip("no trace to truncate");
    for (const cut of [1, Math.floor(full.length / 2), full.length - 1]) {
      assertTraceError(() => parseTrace(full.subarray(0, cut)), /not readable msgpack: the data ends early/);
    }
  });

  it("rejects empty input and trailing garbage", () => {
    assertTraceError(() => parseTrace(new Uint8Array()), /the file is empty/);
    const bytes = Buffer.concat([buildTraceBytes(), Buffer.from([1, 2, 3])]);
    assertTraceError(() => parseTrace(bytes), /not readable msgpack/);
  });

  it("rejects non-msgpack bytes", () => {
    assertTraceError(
      () => parseTrace(new TextEncoder().encode("apiVersion: v1\nkind: Pod\n")),
      /invalid trace/,
    );
    assertTraceError(
      () => parseTrace(Uint8Array.of(0xc1)),
      /not readable msgpack: byte 0xc1 is never used in msgpack \(at byte 0\)/,
    );
  });

  const cases: Array<[string, (v: Map<string, unknown>) => unknown, RegExp]> = [
    ["a string at the top level", () => "hello", /trace: expected a map, got the string "hello"/],
    ["an array at the top level", () => [1, 2], /trace: expected a map, got an array of 2/],
    ["a missing events field", (v) => void v.delete("events"), /trace: missing field "events"/],
    [
      "a missing pod_lifecycles field",
      (v) => void v.delete("pod_lifecycles"),
      /missing field "pod_lifecycles"/,
    ],
    ["a missing config.trackedObjects", (v) => void v.set("config", new Map()), /config: missing field/],
    ["events that are not an array", (v) => void v.set("events", new Map()), /events: expected an array/],
    [
      "a fractional timestamp",
      (v) => void (v.get("events") as Array<Map<string, unknown>>)[0]?.set("ts", 1.5),
      /events\[0\]\.ts: expected an integer, got the number 1\.5/,
    ],
    [
      "a missing deleted_objs",
      (v) => void (v.get("events") as Array<Map<string, unknown>>)[0]?.delete("deleted_objs"),
      /events\[0\]: missing field "deleted_objs"/,
    ],
    [
      "an object that is not a map",
      (v) => void (v.get("events") as Array<Map<string, unknown>>)[0]?.set("applied_objs", ["pod"]),
      /events\[0\]\.applied_objs\[0\]: expected a map, got the string "pod"/,
    ],
    [
      "an object with a non-string key",
      (v) =>
        void (v.get("events") as Array<Map<string, unknown>>)[0]?.set("applied_objs", [new Map([[1, "x"]])]),
      /events\[0\]\.applied_objs\[0\]: expected string keys, got the integer 1/,
    ],
    [
      "a msgpack timestamp inside an object",
      (v) =>
        void (v.get("events") as Array<Map<string, unknown>>)[0]?.set("applied_objs", [
          new Map([["at", new Date(0)]]),
        ]),
      /not readable msgpack: extension type -1 is not allowed: SimKube's traces are plain msgpack \(at byte \d+\)/,
    ],
    [
      "a bad value deep inside an object",
      (v) =>
        void (v.get("events") as Array<Map<string, unknown>>)[0]?.set("deleted_objs", [
          new Map([["spec", new Map([["containers", [new Map(), new Map([["x", Uint8Array.of(1)]])]]])]]),
        ]),
      /events\[0\]\.deleted_objs\[0\]\.spec\.containers\[1\]\.x: expected a JSON value, got binary data of 1 bytes/,
    ],
    [
      "an index GVK with two slashes",
      (v) => void v.set("index", new Map([["apps/v1/x.Deployment", new Map()]])),
      /index key: invalid GVK "apps\/v1\/x\.Deployment"/,
    ],
    [
      "an index GVK without a kind",
      (v) => void v.set("index", new Map([["Deployment", new Map()]])),
      /index key: invalid GVK "Deployment"/,
    ],
    [
      "a negative index hash",
      (v) => void v.set("index", new Map([["v1.Pod", new Map([["ns/p", -1]])]])),
      /index\["v1\.Pod"\]\["ns\/p"\]: expected an unsigned 64-bit integer, got the integer -1/,
    ],
    [
      "a string index hash",
      (v) => void v.set("index", new Map([["v1.Pod", new Map([["ns/p", "123"]])]])),
      /index\["v1\.Pod"\]\["ns\/p"\]: expected an unsigned 64-bit integer, got the string "123"/,
    ],
    [
      "a pod_lifecycles key that is a string",
      (v) => void v.set("pod_lifecycles", new Map([["v1.Pod", new Map()]])),
      /pod_lifecycles key: expected a \[gvk, "ns\/name"\] pair, got the string "v1\.Pod"/,
    ],
    [
      "a pod_lifecycles key with a bad GVK",
      (v) => void v.set("pod_lifecycles", new Map([[["Pod", "ns/p"], new Map()]])),
      /pod_lifecycles key\[0\]: invalid GVK "Pod"/,
    ],
    [
      "a fractional lifecycle hash",
      (v) => void v.set("pod_lifecycles", new Map([[["v1.Pod", "ns/p"], new Map([[1.5, []]])]])),
      /pod_lifecycles\[\["v1\.Pod","ns\/p"\]\] key: expected an unsigned 64-bit integer, got the number 1\.5/,
    ],
    [
      "an unknown lifecycle variant",
      (v) =>
        void v.set(
          "pod_lifecycles",
          new Map([[["v1.Pod", "ns/p"], new Map([[5, [new Map([["Pending", 3]])]]])]]),
        ),
      /pod_lifecycles\[\["v1\.Pod","ns\/p"\]\]\[5\]\[0\]: unknown lifecycle variant the string "Pending"/,
    ],
    [
      "a Finished lifecycle with three timestamps",
      (v) =>
        void v.set(
          "pod_lifecycles",
          new Map([[["v1.Pod", "ns/p"], new Map([[5, [new Map([["Finished", [1, 2, 3]]])]]])]]),
        ),
      /\[5\]\[0\]\.Finished: expected \[start, end\], got 3 items/,
    ],
    [
      "a lifecycle that is a number",
      (v) => void v.set("pod_lifecycles", new Map([[["v1.Pod", "ns/p"], new Map([[5, [7]]])]])),
      /\[5\]\[0\]: expected "Empty", \{Running: start\} or \{Finished: \[start, end\]\}, got the integer 7/,
    ],
    [
      "a non-boolean trackLifecycle",
      (v) =>
        void v.set(
          "config",
          new Map([["trackedObjects", new Map([["v1.Pod", new Map([["trackLifecycle", "yes"]])]])]]),
        ),
      /config\.trackedObjects\["v1\.Pod"\]\.trackLifecycle: expected a boolean/,
    ],
  ];
  for (const [name, edit, message] of cases) {
    it(`rejects ${name}`, () => {
      assertTraceError(() => parseTrace(corrupted(edit)), message);
    });
  }
});

describe("GVK strings", () => {
  it("formats owner references as SimKube does", () => {
    assert.equal(gvkOfOwner("apps/v1", "Deployment"), "apps/v1.Deployment");
    assert.equal(gvkOfOwner("v1", "Pod"), "v1.Pod");
    assert.equal(gvkOfOwner("batch.volcano.sh/v1alpha1", "Job"), "batch.volcano.sh/v1alpha1.Job");
    assert.throws(() => gvkOfOwner("a/b/c", "X"), GvkError);
  });

  it("parses and formats GVK strings", () => {
    assert.deepEqual(parseGvk("apps/v1.Deployment"), { group: "apps", version: "v1", kind: "Deployment" });
    assert.deepEqual(parseGvk("v1.Pod"), { group: "", version: "v1", kind: "Pod" });
    assert.deepEqual(parseGvk("/v1.Pod"), { group: "", version: "v1", kind: "Pod" });
    assert.deepEqual(parseGvk("batch.volcano.sh/v1alpha1.Job"), {
      group: "batch.volcano.sh",
      version: "v1alpha1",
      kind: "Job",
    });
    assert.equal(formatGvk(parseGvk("/v1.Pod")), "v1.Pod");
    for (const bad of ["asdf", "foo/asdf/asdf", "v1.", ".Pod", "a/v1.b.c", ""]) {
      assert.throws(() => parseGvk(bad), GvkError, bad);
    }
  });
});
