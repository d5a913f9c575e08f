import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import {
  createRescheduleDeleteHandler,
  type RescheduleDeleteDeps,
} from "../../functions/reschedule-delete/handler.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import type { AdmissionReview } from "../../shared/admission.js";
import { ADMIN_USER, KWOK_USER, POD_GC_USER, SIMKUBE_DRIVER_USER } from "../../shared/identities.js";
import { type KubeApi, KubeError, type KubeObject, type ObjectRef } from "../../shared/kube-api.js";
import { createLogger } from "../../shared/log.js";
import { createOwnerResolver } from "../../shared/owners.js";
import { createSimulationSource } from "../../shared/simulation.js";
import { createTeardownGuard } from "../../shared/teardown.js";
import {
  buildDeleteReview,
  buildNamespace,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  disruptionTarget,
  type PodOptions,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_NAMESPACE,
  TEST_POD_UID,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { createMemoryKube, type MemoryKube } from "../support/memory-kube.js";

const CLUSTER_SCOPED = new Set(["Namespace", "Node", "Simulation", "SimulationRoot"]);

/** The memory fake keys objects by namespace too; the real API ignores it for cluster-scoped kinds. */
function scoped(kube: MemoryKube): KubeApi {
  const fix = (ref: ObjectRef): ObjectRef => {
    if (!CLUSTER_SCOPED.has(ref.kind)) return ref;
    const { namespace: _ignored, ...rest } = ref;
    return rest;
  };
  return {
    read: (ref) => kube.read(fix(ref)),
    create: (obj) => kube.create(obj),
    replace: (obj) => kube.replace(obj),
  };
}

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger("debug", sink), lines };
}

interface WorldOptions {
  sim?: Parameters<typeof buildSimulation>[0];
  root?: Parameters<typeof buildSimulationRoot>[0] | null;
  namespace?: Parameters<typeof buildNamespace>[0];
  /** The pod as stored in the API (the live pod); null: none. */
  live?: PodOptions | null;
  deps?: Partial<RescheduleDeleteDeps>;
}

function world(options: WorldOptions = {}) {
  const mem = createMemoryKube();
  mem.seed(buildSimulation({ rescheduleInterruptedBarePods: true, ...options.sim }));
  if (options.root !== null) mem.seed(buildSimulationRoot(options.root ?? {}));
  mem.seed(buildNamespace(options.namespace ?? {}));
  if (options.live !== null) mem.seed(buildPod({ nodeName: "kwok-node-1", ...options.live }));
  const kube = scoped(mem);
  const { log, lines } = logSink();
  const stats = createRescheduleStats();
  let t = 1000;
  const deps: RescheduleDeleteDeps = {
    kube,
    simName: TEST_SIM_NAME,
    driverUsers: [SIMKUBE_DRIVER_USER],
    log,
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    owners: createOwnerResolver(kube, log),
    teardown: createTeardownGuard(kube),
    stats,
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    random: () => 0.5,
    ...options.deps,
  };
  return { mem, kube, deps, stats, lines, handle: createRescheduleDeleteHandler(deps) };
}

const CLONE_REF = { apiVersion: "v1", kind: "Pod", name: "the-pod-clone-1", namespace: TEST_NAMESPACE };

function assertAllowedWithoutPatch(review: AdmissionReview, uid?: string): void {
  assert.equal(review.response?.allowed, true);
  assert.equal(review.response?.patch, undefined);
  assert.equal(review.response?.patchType, undefined);
  if (uid) assert.equal(review.response?.uid, uid);
}

function deleteOf(
  pod: PodOptions,
  user = ADMIN_USER,
  extra: Partial<Parameters<typeof buildDeleteReview>[0]> = {},
) {
  return buildDeleteReview({ pod: buildPod({ nodeName: "kwok-node-1", ...pod }), user, ...extra });
}

describe("reschedule-delete handler", () => {
  it("clones an interrupted bare pod, from the live pod, and answers without a patch", async () => {
    const w = world({
      live: {
        annotations: {
          "simkube.io/kwok-stage-complete-time": "2024-01-01T00:01:00Z",
          "static.simkube.io/pod-spec-stable-hash": "42",
          "static.simkube.io/pod-sequence-number": "0",
        },
        labels: { "simkube.io/simulation": TEST_SIM_NAME, "simkube.io/kwok-stage-complete": "true" },
      },
    });
    const review = deleteOf({});
    assertAllowedWithoutPatch(await w.handle(review), review.request?.uid);
    const clone = w.mem.get(CLONE_REF);
    assert.ok(clone, "clone created");
    const { uid: _uid, resourceVersion: _rv, ...metadata } = clone.metadata ?? {};
    assert.deepEqual(
      { ...clone, metadata },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "the-pod-clone-1",
          namespace: TEST_NAMESPACE,
          labels: { foo: "bar" },
          ownerReferences: [rootOwnerRef()],
          annotations: {
            "static.simkube.io/pod-spec-stable-hash": "42",
            "static.simkube.io/pod-sequence-number": "0",
            "static.simkube.io/original-owner": "the-pod",
          },
        },
        spec: { containers: [{ name: "container-0", image: "nginx:1.27" }] },
      },
    );
    assert.deepEqual(w.stats.snapshot().clones, { created: 1, alreadyExisted: 0, failed: 0 });
    assert.deepEqual(w.stats.snapshot().decisions, { cloned: 1 });
    assert.deepEqual(w.stats.snapshot().interruptions, { [`user:${ADMIN_USER}`]: 1 });
    const done = w.lines.find((l) => l.msg === "review done");
    assert.equal(done?.decision, "clone");
    assert.equal(done?.interruption, `user:${ADMIN_USER}`);
    assert.equal(done?.pod, "the-pod");
  });

  const fastSkips: Array<[string, AdmissionReview, string]> = [
    ["not bare", deleteOf({ ownerReferences: [rootOwnerRef(), replicaSetOwnerRef()] }), "not-bare"],
    ["dry run", deleteOf({}, ADMIN_USER, { dryRun: true }), "dry-run"],
    ["the driver's delete", deleteOf({}, SIMKUBE_DRIVER_USER), "driver-delete"],
    ["not running", deleteOf({ phase: "Pending" }), "not-running"],
    [
      "final phase without DisruptionTarget",
      deleteOf({ deletionTimestamp: "2024-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 }, KWOK_USER),
      "final-phase",
    ],
  ];
  for (const [name, review, reason] of fastSkips) {
    it(`answers ${name} without any API call`, async () => {
      const w = world();
      assertAllowedWithoutPatch(await w.handle(review));
      assert.equal(w.mem.calls.length, 0);
      assert.deepEqual(w.stats.snapshot().decisions, { [reason]: 1 });
    });
  }

  it("makes one clone for any number of reviews of one deletion, mostly without API calls", async () => {
    const w = world({ live: { conditions: [disruptionTarget("EvictionByEvictionAPI")] } });
    const terminating = {
      conditions: [disruptionTarget("EvictionByEvictionAPI")],
      deletionTimestamp: "2024-01-01T00:00:30Z",
    };
    // The eviction's own delete is never reviewed: KWOK's final delete, twice, then a retried one.
    for (let i = 0; i < 3; i++) assertAllowedWithoutPatch(await w.handle(deleteOf(terminating, KWOK_USER)));
    const callsAfterFirst = w.mem.calls.length;
    assert.equal(w.mem.countCalls("create"), 1);
    assert.ok(w.mem.get(CLONE_REF));
    await w.handle(deleteOf(terminating, KWOK_USER));
    assert.equal(w.mem.calls.length, callsAfterFirst, "remembered: no further API call");
    assert.equal(w.stats.snapshot().decisions["already-handled"], 3);
  });

  it("shares the work of concurrent reviews of one deletion", async () => {
    const w = world();
    const reviews = Array.from({ length: 5 }, () => deleteOf({}));
    const answers = await Promise.all(reviews.map((r) => w.handle(r)));
    for (const a of answers) assertAllowedWithoutPatch(a);
    assert.equal(w.mem.countCalls("create"), 1);
  });

  it("treats AlreadyExists as success (another replica made the clone)", async () => {
    const w = world();
    await w.handle(deleteOf({}));
    const replica = createRescheduleDeleteHandler({ ...w.deps, stats: createRescheduleStats() });
    const other = createRescheduleStats();
    const replica2 = createRescheduleDeleteHandler({ ...w.deps, stats: other });
    await replica(deleteOf({}));
    assertAllowedWithoutPatch(await replica2(deleteOf({})));
    assert.equal(w.mem.countCalls("create"), 3);
    assert.deepEqual(other.snapshot().clones, { created: 0, alreadyExisted: 1, failed: 0 });
    assert.deepEqual(other.snapshot().decisions, { cloned: 1 });
  });

  it("names the clone of a clone -clone-N+1 and keeps the original owner", async () => {
    const w = world({
      live: { name: "the-pod-clone-42", annotations: { "static.simkube.io/original-owner": "the-pod" } },
    });
    await w.handle(
      deleteOf({ name: "the-pod-clone-42", annotations: { "static.simkube.io/original-owner": "the-pod" } }),
    );
    const clone = w.mem.get({ ...CLONE_REF, name: "the-pod-clone-43" });
    assert.equal(clone?.metadata?.annotations?.["static.simkube.io/original-owner"], "the-pod");
  });

  it("reads the name from oldObject when request.name is empty (namespace deletion)", async () => {
    const w = world();
    await w.handle(deleteOf({}, ADMIN_USER, { name: "" }));
    assert.ok(w.mem.get(CLONE_REF));
  });

  it("retries a 503 on create, then clones once", async () => {
    const w = world();
    w.mem.inject({ verb: "create", error: new KubeError(503, "ServiceUnavailable", "etcd leader changed") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.equal(w.mem.countCalls("create"), 2);
    assert.ok(w.mem.get(CLONE_REF));
    assert.equal(w.stats.snapshot().retries, 1);
    assert.ok(w.lines.some((l) => l.msg === "transient API error; retrying" && l.step === "create"));
  });

  it("gives up inside the deadline on persistent transient errors, logs the pod, allows the delete", async () => {
    const w = world({ deps: { retry: { deadlineMs: 4000, baseDelayMs: 100, maxDelayMs: 1000 } } });
    w.mem.inject({ verb: "create", times: 100, error: new KubeError(500, "InternalError", "boom") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    const attempts = w.mem.countCalls("create");
    assert.ok(attempts > 1 && attempts < 20, `a bounded number of attempts (${attempts})`);
    assert.equal(w.mem.get(CLONE_REF), undefined);
    assert.deepEqual(w.stats.snapshot().clones, { created: 0, alreadyExisted: 0, failed: 1 });
    const err = w.lines.find((l) => l.msg === "could not reschedule interrupted pod; allowing the delete");
    assert.equal(err?.pod, "the-pod");
    assert.equal(err?.level, 50);
  });

  it("logs a non-transient create failure without retrying", async () => {
    const w = world();
    w.mem.inject({ verb: "create", error: new KubeError(422, "Invalid", "spec.containers: Required value") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.equal(w.mem.countCalls("create"), 1);
    assert.deepEqual(w.stats.snapshot().decisions, { error: 1 });
  });

  it("creates nothing for a forged review: the pod does not exist", async () => {
    const w = world({ live: null });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "pod-gone": 1 });
  });

  it("creates nothing for a forged review: the pod has another uid", async () => {
    const w = world({ live: { uid: "the-real-uid" } });
    assertAllowedWithoutPatch(await w.handle(deleteOf({ uid: TEST_POD_UID })));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "uid-mismatch": 1 });
  });

  it("creates nothing when the live pod does not bear out the review's disruption", async () => {
    const w = world();
    const forged = deleteOf(
      { conditions: [disruptionTarget()], deletionTimestamp: "2024-01-01T00:00:30Z" },
      KWOK_USER,
    );
    assertAllowedWithoutPatch(await w.handle(forged));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "live-pod-not-interrupted": 1 });
  });

  it("clones nothing when the Simulation does not ask for it", async () => {
    const w = world({ sim: { rescheduleInterruptedBarePods: false } });
    await w.handle(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "rescheduling-off": 1 });
  });

  it("clones nothing once the Simulation is finished, and then stops asking the API", async () => {
    const w = world({ sim: { state: "Finished" } });
    await w.handle(deleteOf({}));
    const calls = w.mem.calls.length;
    await w.handle(deleteOf({ uid: "another-pod" }));
    assert.equal(w.mem.calls.length, calls);
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "simulation-over": 2 });
  });

  it("clones nothing for a pod of another simulation", async () => {
    const w = world({ root: { simName: "other-sim" } });
    await w.handle(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "not-in-simulation": 1 });
  });

  it("clones nothing while the SimulationRoot is being deleted", async () => {
    const w = world({ root: { deletionTimestamp: "2024-01-01T00:10:00Z" } });
    await w.handle(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "root-deleting": 1 });
  });

  it("clones nothing in a terminating namespace", async () => {
    const w = world({ namespace: { phase: "Terminating" } });
    await w.handle(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "namespace-terminating": 1 });
  });

  it("takes a 403 'being terminated' on create as a skip, and remembers it", async () => {
    const w = world();
    w.mem.inject({
      verb: "create",
      error: new KubeError(
        403,
        "Forbidden",
        'pods "the-pod-clone-1" is forbidden: unable to create new content in namespace test-namespace because it is being terminated',
      ),
    });
    await w.handle(deleteOf({}));
    const calls = w.mem.calls.length;
    await w.handle(deleteOf({ uid: "another-pod" }));
    assert.equal(w.mem.calls.length, calls, "second review: no API call");
    assert.deepEqual(w.stats.snapshot().decisions, { "namespace-terminating": 2 });
    assert.deepEqual(w.stats.snapshot().clones, { created: 0, alreadyExisted: 0, failed: 0 });
  });

  it("answers by the answer deadline when the API hangs", async () => {
    const w = world({ deps: { answerWithinMs: 20 } });
    w.mem.inject({ verb: "create", hang: true, error: new KubeError(0, "ConnectionError", "never answers") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.deepEqual(w.stats.snapshot().decisions, { "answer-deadline": 1 });
  });

  it("fails open on malformed reviews it can answer", async () => {
    const w = world();
    const allowed = await w.handle({ kind: "AdmissionReview", request: { uid: "u-1", operation: "BOGUS" } });
    assert.equal(allowed.response?.allowed, true);
    assert.equal(allowed.response?.uid, "u-1");
    const rejected = await w.handle("not a review");
    assert.equal(rejected.response?.allowed, false);
  });

  it("allows an error inside the Simulation read (fail open)", async () => {
    const w = world();
    w.mem.inject({ verb: "read", kind: "Simulation", error: new KubeError(403, "Forbidden", "RBAC") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.deepEqual(w.stats.snapshot().decisions, { error: 1 });
  });

  it("counts clones from a DisruptionTarget by the condition's reason", async () => {
    const w = world({ live: { phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] } });
    await w.handle(
      deleteOf({ phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] }, POD_GC_USER),
    );
    assert.ok(w.mem.get(CLONE_REF));
    assert.deepEqual(w.stats.snapshot().interruptions, { DeletionByPodGC: 1 });
  });
});

// Keep KubeObject referenced for readers of the helpers above.
export type { KubeObject };
