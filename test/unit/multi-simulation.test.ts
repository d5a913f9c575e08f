// One deployment serving every Simulation (SIM_NAME unset): each pod's Simulation is found from the cluster
// and that Simulation's settings, trace and sequence are used.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fastJsonPatch from "fast-json-patch";
import { createMutateCreateHandler, type MutateCreateDeps } from "../../functions/mutate-create/handler.js";
import { createMutateStats } from "../../functions/mutate-create/stats.js";
import { createTraceCache, type TraceCache } from "../../functions/mutate-create/trace-cache.js";
import { planScopeAnySimulation } from "../../functions/mutate-create/triage.js";
import {
  createRescheduleDeleteHandler,
  type RescheduleDeleteDeps,
} from "../../functions/reschedule-delete/handler.js";
import {
  owningSimulationName,
  virtualNamespaceRootOf,
} from "../../functions/reschedule-delete/live-checks.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import { type AdmissionReview, decodePatch } from "../../shared/admission/review.js";
import { ADMIN_USER, SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import { loadConfig } from "../../shared/config/config.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { createOwnerResolver, type OwnerLink, simulationOwnershipOf } from "../../shared/kube/owners.js";
import type { Pod } from "../../shared/kube/pod.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import {
  type AllowedLocation,
  deploymentTraceCheck,
  parseAllowedLocation,
} from "../../shared/trace/allowlist.js";
import type { Trace } from "../../shared/trace/model.js";
import { loadTrace } from "../../shared/trace/reader.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildNamespace,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  disruptionTarget,
  rootOwnerRef,
  simulationOwnerRef,
} from "../support/builders.js";
import { capturingLog, silentLog } from "../support/logs.js";
import { objectsKube } from "../support/objects-kube.js";
import { buildTrace, finished, ownersTraceSpec } from "../support/trace-builder.js";

const NOW = new Date("2026-12-02T12:00:00.000Z");
const ROOT_A = rootOwnerRef("sk-sim-a-driver-root", "root-a-uid");
const ROOT_B = rootOwnerRef("sk-sim-b-driver-root", "root-b-uid");
const SIM_LABEL = "simkube.io/simulation";
const SEQ_KEY = "static.simkube.io/pod-sequence-number";
const PULL_DELAY_KEY = "simkube.io/kwok-stage-create-delay";
const COMPLETE_TIME_KEY = "simkube.io/kwok-stage-complete-time";

/** Two Simulations with different settings and traces, their roots, and their virtual namespaces. */
function twoSimulations(): KubeObject[] {
  return [
    buildSimulation({
      name: "sim-a",
      uid: "sim-a-uid",
      speed: 2,
      spec: {
        lifecycleParams: { imagePullDelay: 100 },
        driver: { tracePath: "/traces/trace-a", virtualNsPrefix: "alpha" },
      },
    }),
    buildSimulation({
      name: "sim-b",
      uid: "sim-b-uid",
      speed: 3,
      rescheduleInterruptedBarePods: true,
      spec: {
        lifecycleParams: { imagePullDelay: 700 },
        driver: { tracePath: "/traces/trace-b", virtualNsPrefix: "beta" },
      },
    }),
    buildSimulationRoot({ name: ROOT_A.name, uid: ROOT_A.uid, simName: "sim-a", simUid: "sim-a-uid" }),
    buildSimulationRoot({ name: ROOT_B.name, uid: ROOT_B.uid, simName: "sim-b", simUid: "sim-b-uid" }),
    buildVirtualNamespace(ROOT_A, { name: "alpha-default", uid: "ns-a" }),
    buildVirtualNamespace(ROOT_B, { name: "beta-default", uid: "ns-b" }),
    // Named like a virtual namespace but neither labelled nor owned by a root.
    buildNamespace({ name: "beta-impostor", uid: "ns-i" }),
  ];
}

/** Both traces hold a 30 s lifecycle for the bare pod; a mutated Running pod completes in 30 s / speed. */
const TRACE: Trace = buildTrace(
  ownersTraceSpec([{ gvk: "v1.Pod", nsName: "default/bare-pod", lifecycles: [finished(100, 130)] }]),
);

function multiSetup(
  load: (location: string) => Promise<Trace> = async () => TRACE,
  allowed: string[] = ["/traces/"],
  traceNow?: () => number,
) {
  const kube = objectsKube(twoSimulations());
  const { log, lines } = capturingLog("info");
  const loaded: string[] = [];
  const deps: MutateCreateDeps = {
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube),
    sequences: createMemorySequenceStore(),
    traces: createTraceCache({
      isAllowed: deploymentTraceCheck(allowed.map((entry) => parseAllowedLocation(entry) as AllowedLocation)),
      load: async (location) => {
        loaded.push(location);
        return { trace: await load(location), bytes: 1 };
      },
      ...(traceNow ? { now: traceNow } : {}),
    }),
    readNamespace: async (name) => {
      try {
        return await kube.read({ apiVersion: "v1", kind: "Namespace", name });
      } catch {
        return undefined;
      }
    },
    now: () => NOW,
    stats: createMutateStats(),
  };
  return { handle: createMutateCreateHandler(deps), kube, loaded, deps, lines };
}

function patched(review: AdmissionReview, pod: Pod): Pod {
  assert.equal(review.response?.allowed, true, review.response?.status?.message);
  assert.ok(review.response?.patch, "a patch");
  return fastJsonPatch.applyPatch(structuredClone(pod), decodePatch(review.response)).newDocument as Pod;
}

/** A Running bare pod of the trace, as the driver creates it in `namespace` owned by `root`. */
function runningPod(namespace: string, root: ReturnType<typeof rootOwnerRef>, name = "bare-pod"): Pod {
  return buildPod({
    name,
    namespace,
    ownerReferences: [root],
    annotations: { "static.simkube.io/original-namespace": "default" },
  });
}

describe("configuration without SIM_NAME", () => {
  it("loads with no simName; SIM_NAME blank is the same as unset; set, it is kept", () => {
    assert.equal(loadConfig({}).simName, undefined);
    assert.equal(loadConfig({ SIM_NAME: "  " }).simName, undefined);
    assert.equal(loadConfig({ SIM_NAME: " sim-a " }).simName, "sim-a");
  });
});

describe("which Simulation a pod belongs to without SIM_NAME", () => {
  const link = (ref: OwnerLink["ref"], ownedBy: OwnerLink["ownedBy"], gone?: true): OwnerLink =>
    gone ? { ref, ownedBy, gone } : { ref, ownedBy };
  const rsRef = { apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "rs" };

  it("is the owner of the first SimulationRoot in the chain, through any workload owners", () => {
    const chain = [link(rsRef, [ROOT_B]), link(ROOT_B, [simulationOwnerRef("sim-b", "sim-b-uid")])];
    assert.deepEqual(simulationOwnershipOf(chain), { root: ROOT_B, simName: "sim-b" });
    assert.deepEqual(planScopeAnySimulation({ operation: "UPDATE", chain }), {
      mutate: "full",
      root: ROOT_B,
      simName: "sim-b",
    });
  });

  it("without a root in the chain: pins a CREATE for its virtual namespace's Simulation, skips otherwise", () => {
    const gone = [link(rsRef, [], true)];
    assert.equal(simulationOwnershipOf(gone), undefined);
    assert.deepEqual(
      planScopeAnySimulation({ operation: "CREATE", chain: gone, namespaceSimulation: "sim-a" }),
      {
        mutate: "pin",
        reason: "owner-gone",
        simName: "sim-a",
      },
    );
    assert.deepEqual(
      planScopeAnySimulation({ operation: "CREATE", chain: [], namespaceSimulation: "sim-a" }),
      {
        mutate: "pin",
        reason: "no-simulation-root",
        simName: "sim-a",
      },
    );
    assert.deepEqual(
      planScopeAnySimulation({ operation: "UPDATE", chain: [], namespaceSimulation: "sim-a" }),
      {
        skip: "update-without-root",
      },
    );
    assert.deepEqual(planScopeAnySimulation({ operation: "CREATE", chain: [] }), {
      skip: "not-in-simulation",
    });
  });

  it("a root owned by nothing, or a gone root, names no Simulation", () => {
    assert.equal(simulationOwnershipOf([link(ROOT_A, [])]), undefined);
    assert.equal(simulationOwnershipOf([link(ROOT_A, [], true)]), undefined);
  });
});

describe("mutate-create serving two Simulations at once", () => {
  it("mutates each pod with its own Simulation's label, delays, speed and sequence", async () => {
    const { handle, loaded } = multiSetup();
    const a = runningPod("alpha-default", ROOT_A);
    const b = runningPod("beta-default", ROOT_B);
    const outA = patched(await handle(buildCreateReview({ pod: a })), a);
    const outB = patched(await handle(buildCreateReview({ pod: b })), b);
    const outB2 = patched(
      await handle(buildCreateReview({ pod: runningPod("beta-default", ROOT_B, "b2") })),
      b,
    );
    assert.equal(outA.metadata?.labels?.[SIM_LABEL], "sim-a");
    assert.equal(outB.metadata?.labels?.[SIM_LABEL], "sim-b");
    assert.equal(outA.metadata?.annotations?.[PULL_DELAY_KEY], "100ms");
    assert.equal(outB.metadata?.annotations?.[PULL_DELAY_KEY], "700ms");
    // Same spec hash, different roots: each simulation counts its own sequence from 0.
    assert.equal(outA.metadata?.annotations?.[SEQ_KEY], "0");
    assert.equal(outB.metadata?.annotations?.[SEQ_KEY], "0");
    assert.equal(outB2.metadata?.annotations?.[SEQ_KEY], "1");
    // 30 s of production at speed 2 and at speed 3.
    assert.equal(outA.metadata?.annotations?.[COMPLETE_TIME_KEY], "2026-12-02T12:00:15+00:00");
    assert.equal(outB.metadata?.annotations?.[COMPLETE_TIME_KEY], "2026-12-02T12:00:10+00:00");
    assert.deepEqual(
      loaded,
      ["/traces/trace-a", "/traces/trace-b"],
      "each Simulation's spec.driver.tracePath, once",
    );
  });

  it("loads a trace location once however many Simulations name it, and retries one that failed a moment later", async () => {
    let failNext = true;
    let now = 1_000_000;
    const { handle, loaded } = multiSetup(
      async (location) => {
        if (location === "/traces/trace-a" && failNext) {
          failNext = false;
          throw new Error("trace-a: unreachable");
        }
        return TRACE;
      },
      ["/traces/"],
      () => now,
    );
    const a = runningPod("alpha-default", ROOT_A);
    const denied = await handle(buildCreateReview({ pod: a }));
    assert.equal(denied.response?.allowed, false);
    assert.match(denied.response?.status?.message ?? "", /the Simulation's trace could not be loaded/);
    // The failure is remembered for 5 s (issue 35): a review within them is denied without a load.
    const again = await handle(buildCreateReview({ pod: a }));
    assert.equal(again.response?.allowed, false);
    now += 5_001;
    patched(await handle(buildCreateReview({ pod: a })), a);
    patched(await handle(buildCreateReview({ pod: runningPod("alpha-default", ROOT_A, "a2") })), a);
    assert.deepEqual(loaded, ["/traces/trace-a", "/traces/trace-a"]);
  });

  it("a load's failure reaches the pod's creator without the target's details; the log has them", async () => {
    const { handle, lines } = multiSetup(async () => {
      throw new Error("connect ECONNREFUSED 169.254.169.254:80");
    });
    const denied = await handle(buildCreateReview({ pod: runningPod("alpha-default", ROOT_A) }));
    const message = denied.response?.status?.message ?? "";
    assert.equal(denied.response?.allowed, false);
    assert.doesNotMatch(message, /ECONNREFUSED|169\.254|:80|\/traces/);
    assert.match(message, /trace could not be loaded \(the function's log says why\)/);
    const logged = lines.find((l) => l.msg === "could not load a Simulation's trace");
    assert.match(JSON.stringify(logged), /ECONNREFUSED 169\.254\.169\.254:80/);
  });

  it("a trace that is a FIFO denies the pod at once, and the log says why", { timeout: 10_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "fifo-trace-"));
    try {
      const fifo = join(dir, "trace-a");
      execFileSync("mkfifo", [fifo]);
      const { handle, lines, deps } = multiSetup(() => loadTrace(fifo));
      const denied = await handle(buildCreateReview({ pod: runningPod("alpha-default", ROOT_A) }));
      assert.equal(denied.response?.allowed, false);
      assert.match(
        denied.response?.status?.message ?? "",
        /trace could not be loaded \(the function's log says why\)/,
      );
      const logged = lines.find((l) => l.msg === "could not load a Simulation's trace");
      assert.match(JSON.stringify(logged), /not a regular file \(a FIFO\)/);
      assert.equal(deps.stats?.snapshot().lifecycles["trace-unreadable"], 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a tracePath outside the allowlist before reading anything; by default nothing is allowed", async () => {
    for (const allowed of [[], ["/traces/trace-b"], ["/other/"], ["/traces/trace-a/"]]) {
      const { handle, loaded, deps } = multiSetup(async () => TRACE, allowed);
      const denied = await handle(buildCreateReview({ pod: runningPod("alpha-default", ROOT_A) }));
      assert.equal(denied.response?.allowed, false, JSON.stringify(allowed));
      assert.match(denied.response?.status?.message ?? "", /not a trace location this deployment allows/);
      assert.deepEqual(loaded, [], "nothing read");
      assert.equal(deps.stats?.snapshot().lifecycles["trace-refused"], 1);
    }
    for (const allowed of [["/traces/trace-a"], ["/traces/"], ["file:///traces/"], ["/"]]) {
      const { handle, loaded } = multiSetup(async () => TRACE, allowed);
      const a = runningPod("alpha-default", ROOT_A);
      patched(await handle(buildCreateReview({ pod: a })), a);
      assert.deepEqual(loaded, ["/traces/trace-a"], JSON.stringify(allowed));
    }
  });

  it("one Simulation's hung trace delays no other Simulation's pods (issue 35)", {
    timeout: 10_000,
  }, async () => {
    let release = () => {};
    const hung = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { handle, loaded } = multiSetup(async (location) => {
      if (location === "/traces/trace-a") await hung;
      return TRACE;
    });
    const a = runningPod("alpha-default", ROOT_A);
    const first = handle(buildCreateReview({ pod: a }));
    for (let tick = 0; loaded.length === 0 && tick < 1000; tick++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(loaded, ["/traces/trace-a"], "sim-a's trace is loading");
    // While sim-a's trace server hangs, sim-b's pod is answered with its own trace.
    const b = runningPod("beta-default", ROOT_B);
    const out = patched(await handle(buildCreateReview({ pod: b })), b);
    assert.ok(out.metadata?.annotations?.[COMPLETE_TIME_KEY], "sim-b's pod got its completion time");
    assert.deepEqual(loaded, ["/traces/trace-a", "/traces/trace-b"]);
    release();
    patched(await first, a);
  });

  it("refuses an object-store tracePath whose key climbs out of its allowed prefix, for every store (issue 35)", async () => {
    for (const [allowed, tracePath] of [
      ["azure://traces/sims/", "azure://traces/sims/..%2Fother%2Ft.sktrace"],
      ["s3://traces/sims/", "s3://traces/sims/..%2Fother%2Ft.sktrace"],
      ["gs://traces/sims/", "gs://traces/sims/%2e%2e%5Cother%5Ct.sktrace"],
    ] as const) {
      const { handle, loaded, kube } = multiSetup(async () => TRACE, [allowed]);
      kube.put(
        buildSimulation({
          name: "sim-a",
          uid: "sim-a-uid",
          spec: { driver: { tracePath, virtualNsPrefix: "alpha" } },
        }),
      );
      const denied = await handle(buildCreateReview({ pod: runningPod("alpha-default", ROOT_A) }));
      assert.equal(denied.response?.allowed, false, tracePath);
      assert.match(denied.response?.status?.message ?? "", /not a trace location this deployment allows/);
      assert.deepEqual(loaded, [], `${tracePath}: nothing read`);
    }
  });

  it("shares one load among concurrent first reviews of a location", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { handle, loaded, deps } = multiSetup(async () => {
      await gate;
      return TRACE;
    });
    // Count the reviews that ask for the trace while its load is still pending.
    const cache = deps.traces as TraceCache;
    let asked = 0;
    deps.traces = {
      get: (location) => {
        asked++;
        return cache.get(location);
      },
      size: cache.size,
      bytes: cache.bytes,
    };
    // The trace's bare pod, five times: every review looks its lifecycle up.
    const pods = [0, 1, 2, 3, 4].map(() => runningPod("alpha-default", ROOT_A));
    const answers = Promise.all(pods.map((pod) => handle(buildCreateReview({ pod }))));
    for (let tick = 0; asked < pods.length && tick < 1000; tick++) await new Promise((r) => setImmediate(r));
    assert.equal(asked, pods.length, "every review waits on the trace");
    release();
    for (const [i, answer] of (await answers).entries()) {
      const out = patched(answer, pods[i] as Pod);
      assert.ok(out.metadata?.annotations?.[COMPLETE_TIME_KEY], "a completion time from the shared trace");
    }
    assert.deepEqual(loaded, ["/traces/trace-a"], "one load for all five");
  });

  it("pins an ownerless pod for the Simulation its labelled, root-owned namespace belongs to", async () => {
    const { handle } = multiSetup();
    const pod = buildPod({ name: "stray", namespace: "beta-default", ownerReferences: [] });
    const out = patched(await handle(buildCreateReview({ pod })), pod);
    assert.equal(out.metadata?.labels?.[SIM_LABEL], "sim-b");
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.equal(out.metadata?.annotations?.[SEQ_KEY], undefined, "no sequence without the root");
  });

  it("decides a virtual namespace from the namespace object, not its name", async () => {
    const { handle } = multiSetup();
    for (const namespace of ["beta-impostor", "no-such-namespace", "default"]) {
      const pod = buildPod({ name: "p", namespace, ownerReferences: [] });
      const review = await handle(buildCreateReview({ pod }));
      assert.equal(review.response?.allowed, true, namespace);
      assert.equal(review.response?.patch, undefined, namespace);
    }
  });

  it("denies a pod whose Simulation cannot be read, naming it", async () => {
    const kube = objectsKube([
      buildSimulationRoot({ name: "sk-gone-driver-root", uid: "g", simName: "gone", simUid: "g" }),
    ]);
    const { deps } = multiSetup();
    const handle = createMutateCreateHandler({
      ...deps,
      owners: createOwnerResolver(kube, deps.log),
      simulation: createSimulationSource(kube),
    });
    const pod = buildPod({ ownerReferences: [rootOwnerRef("sk-gone-driver-root", "g")] });
    const review = await handle(buildCreateReview({ pod }));
    assert.equal(review.response?.allowed, false);
    assert.match(review.response?.status?.message ?? "", /Simulation "gone" not found/);
  });
});

describe("the Simulation source serves many names", () => {
  it("reads each Simulation once per TTL, and with no name and no default says so", async () => {
    const kube = objectsKube(twoSimulations());
    const source = createSimulationSource(kube);
    const [a, b, a2] = await Promise.all([source.get("sim-a"), source.get("sim-b"), source.get("sim-a")]);
    assert.equal(a.metadata?.name, "sim-a");
    assert.equal(b.metadata?.name, "sim-b");
    assert.equal(a2.metadata?.uid, "sim-a-uid");
    assert.deepEqual(kube.reads.sort(), ["Simulation/sim-a", "Simulation/sim-b"]);
    await assert.rejects(source.get(), /no Simulation name/);
  });

  it("says what it has cached, without a read, until the TTL runs out", async () => {
    const kube = objectsKube(twoSimulations());
    // Not from 0: lru-cache takes a start time of 0 for "no TTL".
    let clock = 10_000;
    const source = createSimulationSource(kube, "sim-a", { ttlMs: 1_000, now: () => clock });
    assert.equal(source.cached(), undefined);
    await source.get();
    assert.equal(source.cached()?.metadata?.uid, "sim-a-uid");
    assert.equal(source.cached("sim-b"), undefined, "another name is not read by asking");
    assert.deepEqual(kube.reads, ["Simulation/sim-a"]);
    clock = 11_001;
    assert.equal(source.cached(), undefined, "a copy past the TTL is not given out");
    assert.equal(createSimulationSource(kube).cached(), undefined, "no name, no default: nothing");
  });
});

describe("reschedule-delete serving two Simulations at once", () => {
  function rescheduleSetup() {
    const kube = objectsKube(twoSimulations());
    const deps: RescheduleDeleteDeps = {
      kube,
      driverUsers: [SIMKUBE_DRIVER_USER],
      log: silentLog(),
      simulation: createSimulationSource(kube),
      stats: createRescheduleStats(),
    };
    return { kube, stats: deps.stats, handle: createRescheduleDeleteHandler(deps) };
  }
  const evicted = (namespace: string, root: ReturnType<typeof rootOwnerRef>, uid: string): Pod =>
    buildPod({
      name: "victim",
      namespace,
      uid,
      nodeName: "kwok-node-1",
      ownerReferences: [root],
      conditions: [disruptionTarget("EvictionByEvictionAPI")],
      // The eviction stored the deletion; KWOK's final delete is the review.
      deletionTimestamp: "2024-01-01T00:00:30Z",
    });

  it("finds the Simulation from the namespace's root: clones for the one that reschedules only", async () => {
    const { kube, handle } = rescheduleSetup();
    const podA = evicted("alpha-default", ROOT_A, "uid-a");
    const podB = evicted("beta-default", ROOT_B, "uid-b");
    kube.put(podA);
    kube.put({ ...podB, metadata: { ...podB.metadata, name: "victim-b" } });
    const reviewB = buildDeleteReview({
      pod: { ...podB, metadata: { ...podB.metadata, name: "victim-b" } },
      user: ADMIN_USER,
    });
    const reviewA = buildDeleteReview({ pod: podA, user: ADMIN_USER });
    assert.equal((await handle(reviewA)).response?.allowed, true);
    assert.equal((await handle(reviewB)).response?.allowed, true);
    const read = async (name: string) =>
      kube.read({ apiVersion: "v1", kind: "Pod", name, namespace: "" }).then(
        (pod) => pod,
        () => undefined,
      );
    assert.ok(await read("victim-b-clone-1"), "sim-b reschedules interrupted bare pods");
    assert.equal(await read("victim-clone-1"), undefined, "sim-a does not");
  });

  it("reads the Simulation only through a labelled namespace owned by a root", () => {
    assert.equal(virtualNamespaceRootOf(buildNamespace({ ownerReferences: [ROOT_A] })), undefined);
    assert.deepEqual(virtualNamespaceRootOf(buildVirtualNamespace(ROOT_A)), ROOT_A);
    assert.equal(virtualNamespaceRootOf(undefined), undefined);
    assert.equal(owningSimulationName(buildSimulationRoot({ simName: "sim-b" })), "sim-b");
    assert.equal(owningSimulationName(undefined), undefined);
  });
});
