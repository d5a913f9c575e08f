// The trace cache of a deployment serving every Simulation: bounded in traces and bytes, a changed trace
// reloaded after the recheck interval, a failure kept only briefly, one load per location, loads of different
// locations at once (up to a bound), each within a deadline well inside the webhook's timeout (issue 35).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createTraceCache,
  type LoadIfChanged,
  TraceLocationRefused,
} from "../../functions/mutate-create/trace-cache.js";
import type { TraceTables } from "../../shared/trace/model.js";
import type { LoadedTrace } from "../../shared/trace/reader.js";

function tables(label: string): TraceTables {
  return { index: new Map([["label", new Map([[label, "0"]])]]), podLifecycles: new Map() };
}

interface Call {
  location: string;
  known: string | undefined;
}

/** A loader whose traces are `bytes` long, at the version `versions` says for each location (default v1). */
function recordingLoader(bytes = 10, versions = new Map<string, string>()) {
  const calls: Call[] = [];
  const load: LoadIfChanged = async (location, _options, known) => {
    calls.push({ location, known });
    const version = versions.get(location) ?? "v1";
    if (known === version) return undefined;
    return { trace: tables(`${location}@${version}`), version, bytes } satisfies LoadedTrace;
  };
  return { load, calls, versions };
}

const allowAll = () => true;

describe("trace cache", () => {
  it("keeps at most maxTraces locations, however many distinct ones (query strings included) are asked for", async () => {
    const { load } = recordingLoader();
    const cache = createTraceCache({ isAllowed: allowAll, load, maxTraces: 4, maxBytes: 1000 });
    for (let i = 0; i < 200; i++) {
      await cache.get(`https://traces.example/t.sktrace?X-Amz-Signature=${i}`);
      assert.ok(cache.size() <= 4, `after ${i + 1} locations the cache holds ${cache.size()}`);
    }
    assert.equal(cache.size(), 4);
  });

  it("keeps at most maxBytes of trace files, dropping the least recently used", async () => {
    const { load, calls } = recordingLoader(100);
    const cache = createTraceCache({
      isAllowed: allowAll,
      load,
      maxTraces: 100,
      maxTraceBytes: 100,
      maxBytes: 350,
    });
    for (const name of ["a", "b", "c"]) await cache.get(`/t/${name}`);
    await cache.get("/t/a"); // a is now the most recently used
    await cache.get("/t/d"); // over 350 bytes: b goes
    assert.equal(cache.size(), 3);
    assert.equal(cache.bytes(), 300);
    calls.length = 0;
    await cache.get("/t/a");
    await cache.get("/t/b");
    assert.deepEqual(
      calls.map((c) => c.location),
      ["/t/b"],
      "a was kept, b was dropped and loaded again",
    );
  });

  it("keeps a trace as big as the cap even when maxBytes is set below it", async () => {
    const { load, calls } = recordingLoader(1000);
    const cache = createTraceCache({ isAllowed: allowAll, load, maxTraceBytes: 1000, maxBytes: 10 });
    await cache.get("/t/big");
    await cache.get("/t/big");
    assert.equal(calls.length, 1);
  });

  it("uses a trace for recheckMs, then asks its source, and reloads it only when its version changed", async () => {
    let now = 1_000_000;
    const { load, calls, versions } = recordingLoader();
    const cache = createTraceCache({ isAllowed: allowAll, load, recheckMs: 30_000, now: () => now });
    const first = await cache.get("/t/a");
    now += 29_000;
    assert.equal(await cache.get("/t/a"), first);
    assert.equal(calls.length, 1, "not asked again within the interval");
    now += 2_000;
    assert.equal(await cache.get("/t/a"), first, "unchanged: the same tables");
    assert.deepEqual(calls[1], { location: "/t/a", known: "v1" });
    versions.set("/t/a", "v2");
    now += 31_000;
    const second = await cache.get("/t/a");
    assert.notEqual(second, first);
    assert.deepEqual(second, tables("/t/a@v2"));
    assert.deepEqual(calls[2], { location: "/t/a", known: "v1" });
    now += 1_000;
    assert.equal(await cache.get("/t/a"), second);
    assert.equal(calls.length, 3);
  });

  it("keeps a failure for failureCacheMs only: then the next admission loads again; a failed recheck drops the old trace", async () => {
    let now = 1_000_000;
    let failing = true;
    let loads = 0;
    const load: LoadIfChanged = async (_location, _options, known) => {
      loads++;
      if (failing) throw new Error("unreachable");
      return known === "v1" ? undefined : { trace: tables("a"), version: "v1", bytes: 1 };
    };
    const cache = createTraceCache({
      isAllowed: allowAll,
      load,
      recheckMs: 1000,
      failureCacheMs: 5000,
      now: () => now,
    });
    await assert.rejects(cache.get("/t/a"), /unreachable/);
    assert.equal(cache.size(), 0);
    failing = false;
    now += 4_999;
    await assert.rejects(cache.get("/t/a"), /last load of this trace failed.*unreachable/);
    assert.equal(loads, 1, "a failure is remembered briefly: no second load within failureCacheMs");
    now += 2;
    assert.deepEqual(await cache.get("/t/a"), tables("a"));
    assert.equal(loads, 2);
    failing = true;
    now += 2000;
    await assert.rejects(cache.get("/t/a"), /unreachable/);
    assert.equal(cache.size(), 0, "the stale trace is not served after its source failed");
  });

  it("shares one load among concurrent callers of one location", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let loads = 0;
    const load: LoadIfChanged = async () => {
      loads++;
      await gate;
      return { trace: tables("a"), bytes: 1 };
    };
    const cache = createTraceCache({ isAllowed: allowAll, load });
    const answers = Promise.all(Array.from({ length: 20 }, () => cache.get("/t/a")));
    release();
    const got = await answers;
    assert.equal(loads, 1);
    assert.ok(got.every((t) => t === got[0]));
  });

  it("a hung load of one location delays no other location's (issue 35)", async () => {
    const gates = new Map<string, () => void>();
    const started: string[] = [];
    const load: LoadIfChanged = async (location) => {
      started.push(location);
      if (location === "/t/hung") await new Promise<void>((resolve) => gates.set(location, resolve));
      return { trace: tables(location), bytes: 1 };
    };
    const cache = createTraceCache({ isAllowed: allowAll, load });
    const hung = cache.get("/t/hung");
    let answered = false;
    const other = cache.get("/t/other").then((t) => {
      answered = true;
      return t;
    });
    for (let i = 0; i < 20 && !answered; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ["/t/hung", "/t/other"], "the other location's load started at once");
    assert.ok(answered, "and answered while the hung one still loads");
    assert.deepEqual(await other, tables("/t/other"));
    gates.get("/t/hung")?.();
    await hung;
  });

  it("loads at most maxConcurrentLoads locations at once: a load peaks at several times its file", async () => {
    const gates = new Map<string, () => void>();
    const started: string[] = [];
    const load: LoadIfChanged = async (location) => {
      started.push(location);
      await new Promise<void>((resolve) => gates.set(location, resolve));
      return { trace: tables(location), bytes: 1 };
    };
    const cache = createTraceCache({ isAllowed: allowAll, load, maxConcurrentLoads: 2 });
    const loads = ["/t/a", "/t/b", "/t/c"].map((l) => cache.get(l));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ["/t/a", "/t/b"], "c waits for a free slot");
    gates.get("/t/a")?.();
    await loads[0];
    for (let i = 0; i < 20 && started.length < 3; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ["/t/a", "/t/b", "/t/c"]);
    gates.get("/t/b")?.();
    gates.get("/t/c")?.();
    await Promise.all(loads);
  });

  it("gives up on a load at its deadline, tells the loader the deadline, and remembers the failure briefly (issue 35)", {
    timeout: 20_000,
  }, async () => {
    let now = 0;
    const timeouts: Array<number | undefined> = [];
    // A load that never ends, whatever it is told: the cache's own deadline must answer.
    const load: LoadIfChanged = (_location, options) => {
      timeouts.push(options.timeoutMs);
      return new Promise(() => {});
    };
    const cache = createTraceCache({
      isAllowed: allowAll,
      load,
      loadTimeoutMs: 50,
      failureCacheMs: 5_000,
      now: () => now,
    });
    await assert.rejects(cache.get("/t/hung"), /loading the trace took longer than 50 ms/);
    assert.deepEqual(timeouts, [50]);
    now += 1_000;
    await assert.rejects(cache.get("/t/hung"), /last load of this trace failed/);
    assert.equal(timeouts.length, 1, "not loaded again while the failure is remembered");
  });

  it("frees a load's slot at its deadline, even when the load itself never ends", {
    timeout: 20_000,
  }, async () => {
    const started: string[] = [];
    const load: LoadIfChanged = (location) => {
      started.push(location);
      if (location === "/t/hung") return new Promise(() => {});
      return Promise.resolve({ trace: tables(location), bytes: 1 });
    };
    const cache = createTraceCache({ isAllowed: allowAll, load, loadTimeoutMs: 50, maxConcurrentLoads: 1 });
    await assert.rejects(cache.get("/t/hung"), /took longer than 50 ms/);
    assert.deepEqual(await cache.get("/t/next"), tables("/t/next"));
    assert.deepEqual(started, ["/t/hung", "/t/next"]);
  });

  it("does not hold a review's wait for a slot against its location", { timeout: 20_000 }, async () => {
    let now = 0;
    const loads: string[] = [];
    const load: LoadIfChanged = (location) => {
      loads.push(location);
      if (location !== "/t/c") return new Promise(() => {});
      return Promise.resolve({ trace: tables(location), bytes: 1 });
    };
    const cache = createTraceCache({
      isAllowed: allowAll,
      load,
      loadTimeoutMs: 50,
      maxConcurrentLoads: 1,
      failureCacheMs: 5_000,
      now: () => now,
    });
    // a and b hang; c waits behind both, and its review gives up while b's load still holds the slot.
    const a = cache.get("/t/a").catch((err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 5));
    const b = cache.get("/t/b").catch((err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 5));
    await assert.rejects(cache.get("/t/c"), /took longer than 50 ms/);
    assert.ok(!loads.includes("/t/c"), "c's review gave up before its load could start");
    assert.deepEqual(await Promise.all([a, b]), Array(2).fill("loading the trace took longer than 50 ms"));
    for (let i = 0; i < 500 && !loads.includes("/t/c"); i++) await new Promise((r) => setTimeout(r, 10));
    now += 1;
    assert.deepEqual(await cache.get("/t/c"), tables("/t/c"), "c's location is not remembered as failed");
    await assert.rejects(cache.get("/t/b"), /last load of this trace failed/, "b's own load is");
  });

  it("defaults to a load deadline of 10 s, a third of mutate-create's 30 s webhook timeout", async () => {
    const timeouts: Array<number | undefined> = [];
    const load: LoadIfChanged = async (location, options) => {
      timeouts.push(options.timeoutMs);
      return { trace: tables(location), bytes: 1 };
    };
    await createTraceCache({ isAllowed: allowAll, load }).get("/t/a");
    assert.deepEqual(timeouts, [10_000]);
  });

  it("refuses a location outside the allowlist without loading it", async () => {
    const { load, calls } = recordingLoader();
    const cache = createTraceCache({ isAllowed: (l) => l.startsWith("/ok/"), load });
    await assert.rejects(cache.get("/etc/passwd"), TraceLocationRefused);
    assert.equal(calls.length, 0);
  });
});
