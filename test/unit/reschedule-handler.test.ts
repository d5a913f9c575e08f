import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createRescheduleDeleteHandler,
  type RescheduleDeleteDeps,
} from "../../functions/reschedule-delete/handler.js";
import { createPendingClones } from "../../functions/reschedule-delete/pending-clones.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import { type AdmissionReview, UnanswerableReviewError } from "../../shared/admission/review.js";
import { ADMIN_USER, KWOK_USER, SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import { type KubeApi, KubeError, type KubeObject, type ObjectRef } from "../../shared/kube/api.js";
import type { Pod as TestPod } from "../../shared/kube/pod.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import {
  buildDeleteReview,
  buildNamespace,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  disruptionTarget,
  type PodOptions,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_NAMESPACE,
  TEST_POD_UID,
  TEST_SIM_NAME,
  TEST_SIM_ROOT_NAME,
} from "../support/builders.js";
import { capturingLog } from "../support/logs.js";
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
    read: (ref, options) => kube.read(fix(ref), options),
    create: (obj) => kube.create(obj),
    replace: (obj) => kube.replace(obj),
  };
}

/** The driver's root of TEST_SIM_NAME, as the simulation's pods and namespaces reference it. */
const SIM_ROOT = rootOwnerRef(TEST_SIM_ROOT_NAME);
/** Another simulation's root and virtual namespace. */
const OTHER_ROOT = rootOwnerRef("sk-other-sim-driver-root", "other-root-uid");

/** A pod as the simulation makes it: bare, owned by the driver's root, Running on a KWOK node. */
function simPod(options: PodOptions = {}) {
  return buildPod({ nodeName: "kwok-node-1", ownerReferences: [SIM_ROOT], ...options });
}

interface WorldOptions {
  sim?: Parameters<typeof buildSimulation>[0];
  root?: Parameters<typeof buildSimulationRoot>[0] | null;
  /** The pod's namespace as stored; a virtual namespace of the simulation by default. */
  namespace?: KubeObject;
  /** Other objects in the cluster. */
  extra?: KubeObject[];
  /** The pod as stored in the API (the live pod); null: none. */
  live?: PodOptions | null;
  deps?: Partial<RescheduleDeleteDeps>;
}

function world(options: WorldOptions = {}) {
  const mem = createMemoryKube();
  mem.seed(buildSimulation({ rescheduleInterruptedBarePods: true, ...options.sim }));
  if (options.root !== null) mem.seed(buildSimulationRoot({ name: TEST_SIM_ROOT_NAME, ...options.root }));
  mem.seed(options.namespace ?? buildVirtualNamespace(SIM_ROOT));
  for (const object of options.extra ?? []) mem.seed(object);
  if (options.live !== null) mem.seed(simPod(options.live));
  const kube = scoped(mem);
  const { log, lines } = capturingLog("debug");
  const stats = createRescheduleStats();
  const pending = createPendingClones();
  let t = 1000;
  const deps: RescheduleDeleteDeps = {
    kube,
    simName: TEST_SIM_NAME,
    driverUsers: [SIMKUBE_DRIVER_USER],
    log,
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    stats,
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    random: () => 0.5,
    pending,
    ...options.deps,
  };
  const handle = createRescheduleDeleteHandler(deps);
  /** What the API server does once every webhook answered a delete: store the pod's deletionTimestamp. */
  const storeDeletion = (review: AdmissionReview) => {
    const old = review.request?.oldObject as TestPod | undefined;
    if (review.request?.dryRun) return;
    const ref = {
      apiVersion: "v1",
      kind: "Pod",
      name: old?.metadata?.name ?? "",
      namespace: old?.metadata?.namespace ?? "",
    };
    const live = mem.get<TestPod>(ref);
    if (!live || live.metadata?.uid !== old?.metadata?.uid || live.metadata?.deletionTimestamp) return;
    mem.seed({ ...live, metadata: { ...live.metadata, deletionTimestamp: "2024-01-01T00:00:30Z" } });
  };
  /** Reviews answered (together), then the deletion stored, then every clone waiting for it settled. */
  const deleted = async (...reviews: AdmissionReview[]) => {
    const answers = await Promise.all(reviews.map((r) => handle(r)));
    for (const review of reviews) storeDeletion(review);
    assert.equal(await pending.settle(60_000), true, "every wait ended");
    return answers;
  };
  return { mem, kube, deps, stats, lines, pending, handle, deleted, storeDeletion };
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
  return buildDeleteReview({ pod: simPod(pod), user, ...extra });
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
    const [answer] = await w.deleted(review);
    assertAllowedWithoutPatch(answer as AdmissionReview, review.request?.uid);
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
          ownerReferences: [SIM_ROOT],
          annotations: {
            "static.simkube.io/pod-spec-stable-hash": "42",
            "static.simkube.io/pod-sequence-number": "0",
            "static.simkube.io/original-owner": "the-pod",
            // The cluster's record of which pod this clone replaces (clone-record.ts).
            "reschedule.simkube-fn/clone-of": JSON.stringify([TEST_POD_UID]),
          },
        },
        spec: {
          containers: [{ name: "container-0", image: "nginx:1.27" }],
          nodeSelector: { type: "virtual" },
          tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
        },
      },
    );
    assert.deepEqual(w.stats.snapshot().clones, { created: 1, alreadyExisted: 0, failed: 0 });
    assert.deepEqual(w.stats.snapshot().decisions, { cloned: 1 });
    assert.deepEqual(w.stats.snapshot().interruptions, { "deleted-by-user": 1 });
    const done = w.lines.find((l) => l.msg === "review done");
    assert.equal(done?.decision, "clone");
    assert.equal(done?.interruption, `user:${ADMIN_USER}`);
    assert.equal(done?.pod, "the-pod");
  });

  const fastSkips: Array<[string, AdmissionReview, string]> = [
    ["not bare", deleteOf({ ownerReferences: [SIM_ROOT, replicaSetOwnerRef()] }), "not-bare"],
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
    const terminating = {
      conditions: [disruptionTarget("EvictionByEvictionAPI")],
      deletionTimestamp: "2024-01-01T00:00:30Z",
    };
    // The eviction stored the deletion before KWOK's final delete: the live pod shows it.
    const w = world({ live: terminating });
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
    const answers = await w.deleted(...reviews);
    for (const a of answers) assertAllowedWithoutPatch(a);
    assert.equal(w.mem.countCalls("create"), 1);
  });

  it("treats AlreadyExists as success (another replica made the clone)", async () => {
    const w = world();
    // Replicas of their own get the same review, before the deletion is stored: each waits for it, each
    // reads no clone yet, each creates; the later creates get AlreadyExists of this pod's clone.
    const replicas = [createRescheduleStats(), createRescheduleStats()].map((stats) => {
      const pending = createPendingClones();
      return { stats, pending, handle: createRescheduleDeleteHandler({ ...w.deps, stats, pending }) };
    });
    const review = deleteOf({});
    await Promise.all([w.handle(review), ...replicas.map((r) => r.handle(review))]);
    w.storeDeletion(review);
    assert.equal(await w.pending.settle(60_000), true);
    for (const r of replicas) assert.equal(await r.pending.settle(60_000), true);
    assert.equal(w.mem.countCalls("create"), 3);
    const clones = [w.stats, ...replicas.map((r) => r.stats)].map((st) => st.snapshot().clones);
    assert.equal(clones.filter((c) => c.created === 1).length, 1);
    assert.equal(clones.filter((c) => c.alreadyExisted === 1).length, 2);
    for (const r of replicas) assert.deepEqual(r.stats.snapshot().decisions, { cloned: 1 });
  });

  it("names the clone of a clone -clone-N+1 and keeps the original owner", async () => {
    const w = world({
      live: { name: "the-pod-clone-42", annotations: { "static.simkube.io/original-owner": "the-pod" } },
    });
    await w.deleted(
      deleteOf({ name: "the-pod-clone-42", annotations: { "static.simkube.io/original-owner": "the-pod" } }),
    );
    const clone = w.mem.get({ ...CLONE_REF, name: "the-pod-clone-43" });
    assert.equal(clone?.metadata?.annotations?.["static.simkube.io/original-owner"], "the-pod");
  });

  it("reads the name from oldObject when request.name is empty (namespace deletion)", async () => {
    const w = world();
    await w.deleted(deleteOf({}, ADMIN_USER, { name: "" }));
    assert.ok(w.mem.get(CLONE_REF));
  });

  it("retries a 503 on create, then clones once", async () => {
    const w = world();
    w.mem.inject({ verb: "create", error: new KubeError(503, "ServiceUnavailable", "etcd leader changed") });
    await w.deleted(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 2);
    assert.ok(w.mem.get(CLONE_REF));
    assert.equal(w.stats.snapshot().retries, 1);
    assert.ok(w.lines.some((l) => l.msg === "transient API error; retrying" && l.step === "create"));
  });

  it("gives up inside the deadline on persistent transient errors, logs the pod, allows the delete", async () => {
    const w = world({ deps: { retry: { deadlineMs: 4000, baseDelayMs: 100, maxDelayMs: 1000 } } });
    w.mem.inject({ verb: "create", times: 100, error: new KubeError(500, "InternalError", "boom") });
    await w.deleted(deleteOf({}));
    const attempts = w.mem.countCalls("create");
    assert.ok(attempts > 1 && attempts < 20, `a bounded number of attempts (${attempts})`);
    assert.equal(w.mem.get(CLONE_REF), undefined);
    assert.deepEqual(w.stats.snapshot().clones, { created: 0, alreadyExisted: 0, failed: 1 });
    const err = w.lines.find((l) => l.msg === "could not clone the interrupted pod");
    assert.equal(err?.pod, "the-pod");
    assert.equal(err?.level, "error");
  });

  it("logs a non-transient create failure without retrying", async () => {
    const w = world();
    w.mem.inject({ verb: "create", error: new KubeError(422, "Invalid", "spec.containers: Required value") });
    await w.deleted(deleteOf({}));
    assert.equal(w.mem.countCalls("create"), 1);
    assert.deepEqual(w.stats.snapshot().decisions, { error: 1 });
  });

  describe("clones only once the cluster shows the deletion", () => {
    it("creates nothing for a review of a live Running pod that nothing deletes, however often", async () => {
      const w = world();
      const reviews = Array.from({ length: 3 }, () => deleteOf({}));
      // Three at once share one wait; the pod never shows a deletion.
      for (const answer of await Promise.all(reviews.map((r) => w.handle(r))))
        assertAllowedWithoutPatch(answer);
      assert.equal(await w.pending.settle(60_000), true);
      assertAllowedWithoutPatch(await w.handle(deleteOf({})));
      assert.equal(await w.pending.settle(60_000), true);
      assert.equal(w.mem.countCalls("create"), 0, "no clone");
      assert.equal(w.mem.get(CLONE_REF), undefined);
      assert.deepEqual(w.stats.snapshot().decisions, { "already-handled": 2, "no-deletion-seen": 2 });
      assert.equal(w.stats.snapshot().pendingClones, 0);
      const warned = w.lines.filter((l) => l.reason === "no-deletion-seen");
      assert.equal(warned.length, 2);
      assert.equal(warned[0]?.level, "warn");
      assert.equal(warned[0]?.pod, "the-pod");
    });

    it("answers before anything is created; the clone comes once the deletion is stored", async () => {
      const w = world();
      const review = deleteOf({});
      assertAllowedWithoutPatch(await w.handle(review));
      assert.equal(w.mem.countCalls("create"), 0, "nothing created at the answer");
      assert.equal(w.stats.snapshot().pendingClones, 1);
      const live = w.mem.get<TestPod>({ ...CLONE_REF, name: "the-pod" });
      w.mem.seed({ ...live, metadata: { ...live?.metadata, deletionTimestamp: "2024-01-01T00:00:30Z" } });
      assert.equal(await w.pending.settle(60_000), true);
      assert.ok(w.mem.get(CLONE_REF));
      assert.deepEqual(w.stats.snapshot().decisions, { cloned: 1 });
    });

    const goneCases: Array<[string, (w: ReturnType<typeof world>) => void]> = [
      ["removed (404)", (w) => w.mem.remove({ ...CLONE_REF, name: "the-pod" })],
      ["replaced by a pod of the same name with another uid", (w) => w.mem.seed(simPod({ uid: "new-uid" }))],
    ];
    for (const [name, remove] of goneCases) {
      it(`clones from the pod as last read when it is ${name} after the answer`, async () => {
        const w = world();
        assertAllowedWithoutPatch(await w.handle(deleteOf({})));
        remove(w);
        assert.equal(await w.pending.settle(60_000), true);
        assert.ok(w.mem.get(CLONE_REF));
        assert.deepEqual(w.stats.snapshot().decisions, { cloned: 1 });
      });
    }

    it("joins a review of a uid already waiting, and makes one clone for both", async () => {
      const w = world({ deps: { sleep: (ms) => new Promise((r) => setTimeout(r, ms)) } });
      assertAllowedWithoutPatch(await w.handle(deleteOf({})));
      assertAllowedWithoutPatch(await w.handle(deleteOf({})));
      const [answer] = await w.deleted(deleteOf({}));
      assertAllowedWithoutPatch(answer as AdmissionReview);
      assert.equal(w.mem.countCalls("create"), 1);
      assert.equal(w.stats.snapshot().decisions.cloned, 1);
      assert.equal(w.stats.snapshot().decisions["deletion-pending"], 2);
    });

    it("keeps at most `limit` waits: past it a review waits for nothing and says so", async () => {
      const w = world({
        deps: { pending: createPendingClones(2), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
        extra: [simPod({ name: "p2", uid: "uid-2" }), simPod({ name: "p3", uid: "uid-3" })],
      });
      await w.handle(deleteOf({}));
      await w.handle(deleteOf({ name: "p2", uid: "uid-2" }));
      await w.handle(deleteOf({ name: "p3", uid: "uid-3" }));
      assert.equal(w.stats.snapshot().pendingClones, 2);
      assert.equal(w.stats.snapshot().decisions["pending-full"], 1);
      assert.ok(w.lines.some((l) => l.msg === "too many clones waiting for their deletion; no clone"));
    });

    it("does not clone when the namespace started terminating while it waited", async () => {
      let t = 1000;
      const w = world({
        deps: {
          now: () => t,
          sleep: async (ms) => {
            t += ms;
          },
        },
      });
      assertAllowedWithoutPatch(await w.handle(deleteOf({})));
      w.mem.seed(buildVirtualNamespace(SIM_ROOT, { phase: "Terminating" }));
      t += 5_000; // past the 2 s the namespace is trusted alive
      w.mem.remove({ ...CLONE_REF, name: "the-pod" });
      assert.equal(await w.pending.settle(60_000), true);
      assert.equal(w.mem.countCalls("create"), 0);
      assert.deepEqual(w.stats.snapshot().decisions, { "namespace-terminating": 1 });
    });
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

  describe("decides from the cluster, not the review (forged or mistaken reviews create nothing)", () => {
    // Every review below claims a bare Running pod of this simulation, owned by its root, deleted by a user.
    const PRIVILEGED_SPEC = {
      hostNetwork: true,
      hostPID: true,
      containers: [{ name: "debug", image: "busybox", securityContext: { privileged: true } }],
      volumes: [{ name: "host", hostPath: { path: "/" } }],
    };
    const cases: Array<[string, WorldOptions, PodOptions, string]> = [
      [
        "a real ownerless privileged pod in kube-system",
        {
          namespace: buildNamespace({ name: "kube-system" }),
          live: { name: "priv-debug", namespace: "kube-system", ownerReferences: [], spec: PRIVILEGED_SPEC },
        },
        { name: "priv-debug", namespace: "kube-system", spec: PRIVILEGED_SPEC },
        "namespace-not-virtual",
      ],
      [
        "an ownerless pod inside the simulation's virtual namespace",
        { live: { ownerReferences: [] } },
        {},
        "not-owned-by-root",
      ],
      [
        "another simulation's pod, in its own virtual namespace",
        {
          namespace: buildVirtualNamespace(OTHER_ROOT, { name: "virtual-other" }),
          live: { namespace: "virtual-other", ownerReferences: [OTHER_ROOT] },
        },
        { namespace: "virtual-other" },
        "namespace-not-virtual",
      ],
      [
        "another simulation's pod, in this simulation's namespace",
        { live: { ownerReferences: [OTHER_ROOT] } },
        {},
        "not-owned-by-root",
      ],
      [
        "a pod owned by the root and a workload the review leaves out",
        { live: { ownerReferences: [SIM_ROOT, replicaSetOwnerRef()] } },
        {},
        "not-bare",
      ],
      [
        "a pod owned by the root and another simkube.io object",
        { live: { ownerReferences: [SIM_ROOT, rootOwnerRef("sk-test-sim-metaroot", "meta-uid")] } },
        {},
        "not-owned-by-root",
      ],
      [
        "a namespace without the simkube.io/virtual label",
        { namespace: buildNamespace({ ownerReferences: [SIM_ROOT] }) },
        {},
        "namespace-not-virtual",
      ],
      [
        "a namespace labelled virtual but owned by another simulation's root",
        { namespace: buildVirtualNamespace(OTHER_ROOT) },
        {},
        "namespace-not-virtual",
      ],
      [
        "a namespace labelled virtual and owned by nothing",
        { namespace: buildVirtualNamespace(SIM_ROOT, { ownerReferences: [] }) },
        {},
        "namespace-not-virtual",
      ],
    ];
    for (const [name, options, claimed, reason] of cases) {
      it(name, async () => {
        const w = world(options);
        assertAllowedWithoutPatch(await w.handle(deleteOf(claimed)));
        assert.equal(w.mem.countCalls("create"), 0, "nothing created");
        assert.deepEqual(w.stats.snapshot().decisions, { [reason]: 1 });
      });
    }

    it("pins the clone to virtual nodes itself, whatever the live pod carries", async () => {
      const spec = {
        containers: [{ name: "c", image: "i" }],
        nodeSelector: { type: "real" },
        tolerations: [{ key: "kwok-provider", operator: "Exists" }],
      };
      const w = world({ live: { spec } });
      await w.deleted(deleteOf({ spec }));
      const clone = w.mem.get<TestPod>(CLONE_REF);
      assert.deepEqual(clone?.spec?.nodeSelector, { type: "virtual" });
      assert.deepEqual(clone?.spec?.tolerations, [
        { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
      ]);
      assert.deepEqual(clone?.metadata?.ownerReferences, [SIM_ROOT]);
    });
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

  it("clones nothing when the root by the simulation's name is not the Simulation's", async () => {
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
    const w = world({ namespace: buildVirtualNamespace(SIM_ROOT, { phase: "Terminating" }) });
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
    await w.deleted(deleteOf({}));
    const calls = w.mem.calls.length;
    await w.handle(deleteOf({ uid: "another-pod" }));
    assert.equal(w.mem.calls.length, calls, "second review: no API call");
    assert.deepEqual(w.stats.snapshot().decisions, { "namespace-terminating": 2 });
    assert.deepEqual(w.stats.snapshot().clones, { created: 0, alreadyExisted: 0, failed: 0 });
  });

  it("answers by the answer deadline when the API hangs", async () => {
    const w = world({ deps: { answerWithinMs: 20 } });
    w.mem.inject({
      verb: "read",
      kind: "Pod",
      hang: true,
      error: new KubeError(0, "ConnectionError", "never answers"),
    });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.deepEqual(w.stats.snapshot().decisions, { "answer-deadline": 1 });
  });

  it("fails open on malformed reviews it can answer, and never denies one it cannot", async () => {
    const w = world();
    const allowed = await w.handle({ kind: "AdmissionReview", request: { uid: "u-1", operation: "BOGUS" } });
    assert.equal(allowed.response?.allowed, true);
    assert.equal(allowed.response?.uid, "u-1");
    for (const body of ["not a review", { request: { operation: "DELETE", oldObject: simPod() } }]) {
      await assert.rejects(w.handle(body), UnanswerableReviewError, "no uid: the adapter answers 400");
    }
  });

  it("allows an error inside the Simulation read (fail open)", async () => {
    const w = world();
    w.mem.inject({ verb: "read", kind: "Simulation", error: new KubeError(403, "Forbidden", "RBAC") });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.deepEqual(w.stats.snapshot().decisions, { error: 1 });
  });

  it("counts clones from a DisruptionTarget by the condition's reason", async () => {
    const w = world({ live: { phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] } });
    await w.deleted(
      deleteOf(
        { phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] },
        "system:serviceaccount:kube-system:pod-garbage-collector",
      ),
    );
    assert.ok(w.mem.get(CLONE_REF));
    assert.deepEqual(w.stats.snapshot().interruptions, { DeletionByPodGC: 1 });
  });

  it("counts interruptions by cause only: no user name, no reason outside Kubernetes' own, in /stats", async () => {
    const byUser = world();
    await byUser.deleted(deleteOf({}, "mallory@example.com"));
    const odd = [disruptionTarget("mallory-was-here")];
    const byCondition = world({ live: { conditions: odd } });
    await byCondition.deleted(deleteOf({ conditions: odd }, KWOK_USER));
    assert.ok(byUser.mem.get(CLONE_REF) && byCondition.mem.get(CLONE_REF), "both were interruptions");
    assert.deepEqual(byUser.stats.snapshot().interruptions, { "deleted-by-user": 1 });
    assert.deepEqual(byCondition.stats.snapshot().interruptions, { "disruption-other": 1 });
    const snapshot = [byUser.stats.snapshot(), byCondition.stats.snapshot()];
    assert.doesNotMatch(JSON.stringify(snapshot), /mallory/);
  });
});

/** A fresh handler on the same cluster: another replica, or this one after a restart (no memory of clones). */
function restarted(w: ReturnType<typeof world>) {
  const stats = createRescheduleStats();
  const pending = createPendingClones();
  const handle = createRescheduleDeleteHandler({ ...w.deps, stats, pending });
  return { handle, stats, pending };
}

const CLONE_OF = "reschedule.simkube-fn/clone-of";

describe("reschedule-delete: a clone needs the deletion the review describes", () => {
  it("makes no clone when the live pod already shows a deletion the review cannot have made", async () => {
    // The driver's own delete (never reviewed as an interruption), held by a finalizer; then a forged
    // first-phase "user delete" review of the same pod.
    const w = world({ live: { deletionTimestamp: "2024-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 } });
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    assert.equal(await w.pending.settle(60_000), true);
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "deletion-not-this-reviews": 1 });
  });

  it("makes no clone for a user's delete when the deletion that shows is an eviction's", async () => {
    const w = world();
    assertAllowedWithoutPatch(await w.handle(deleteOf({})));
    // What shows is not the user's delete: the pod was evicted (DisruptionTarget), whose own review clones.
    const live = w.mem.get<TestPod>({ ...CLONE_REF, name: "the-pod" });
    w.mem.seed({
      ...live,
      metadata: { ...live?.metadata, deletionTimestamp: "2024-01-01T00:00:30Z" },
      status: { ...live?.status, conditions: [disruptionTarget()] },
    } as TestPod);
    assert.equal(await w.pending.settle(60_000), true);
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "deletion-not-this-reviews": 1 });
  });

  it("makes no clone for a disruption claim when the deletion was made before the disruption", async () => {
    // A plain delete at 00:00:00 (grace 30 s), and a DisruptionTarget set a minute later.
    const shown = {
      conditions: [{ ...disruptionTarget(), lastTransitionTime: "2024-01-01T00:01:00Z" }],
      deletionTimestamp: "2024-01-01T00:00:30Z",
      deletionGracePeriodSeconds: 30,
    };
    const w = world({ live: shown });
    assertAllowedWithoutPatch(await w.handle(deleteOf(shown, KWOK_USER)));
    assert.equal(w.mem.countCalls("create"), 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "deletion-not-this-reviews": 1 });
  });

  it("still clones at once after an eviction whose final delete is reviewed", async () => {
    const evicted = {
      conditions: [disruptionTarget()],
      deletionTimestamp: "2024-01-01T00:00:30Z",
      deletionGracePeriodSeconds: 30,
    };
    const w = world({ live: evicted });
    await w.handle(deleteOf(evicted, KWOK_USER));
    const clone = w.mem.get(CLONE_REF);
    assert.deepEqual(JSON.parse(clone?.metadata?.annotations?.[CLONE_OF] ?? "[]"), [TEST_POD_UID]);
    assert.deepEqual(w.stats.snapshot().decisions, { cloned: 1 });
  });

  it("a restarted process makes no second clone after the first was itself interrupted and replaced", async () => {
    const evicted = { conditions: [disruptionTarget()], deletionTimestamp: "2024-01-01T00:00:30Z" };
    const w = world({ live: evicted });
    await w.handle(deleteOf(evicted, KWOK_USER));
    // The clone is interrupted in turn: its own clone (-clone-2) is made and the first clone is gone.
    const first = w.mem.get<TestPod>(CLONE_REF);
    w.mem.seed({
      ...first,
      metadata: {
        ...first?.metadata,
        name: "the-pod-clone-2",
        uid: "clone-2-uid",
        annotations: {
          ...first?.metadata?.annotations,
          [CLONE_OF]: JSON.stringify([first?.metadata?.uid, TEST_POD_UID]),
        },
      },
    } as TestPod);
    w.mem.remove(CLONE_REF);
    // The original is still held (a finalizer): a late review reaches a replica that never saw the first one.
    const fresh = restarted(w);
    await fresh.handle(deleteOf(evicted, KWOK_USER));
    assert.equal(w.mem.get(CLONE_REF), undefined, "no second -clone-1");
    assert.equal(w.mem.countCalls("create"), 1);
    assert.deepEqual(fresh.stats.snapshot().decisions, { "clone-replaced": 1 });
  });

  it("a clone of an earlier pod of the same name is not this pod's clone", async () => {
    const evicted = { conditions: [disruptionTarget()], deletionTimestamp: "2024-01-01T00:00:30Z" };
    const earlier = simPod({ name: "the-pod-clone-1", uid: "earlier-clone-uid" });
    earlier.metadata = {
      ...earlier.metadata,
      annotations: { ...earlier.metadata?.annotations, [CLONE_OF]: JSON.stringify(["an-earlier-uid"]) },
    };
    const w = world({ live: evicted, extra: [earlier] });
    await w.handle(deleteOf(evicted, KWOK_USER));
    assert.equal(w.mem.get(CLONE_REF)?.metadata?.uid, "earlier-clone-uid");
    assert.deepEqual(w.stats.snapshot().decisions, { "clone-name-taken": 1 });
  });

  it("another replica finds the clone by its record and creates nothing", async () => {
    const evicted = { conditions: [disruptionTarget()], deletionTimestamp: "2024-01-01T00:00:30Z" };
    const w = world({ live: evicted });
    await w.handle(deleteOf(evicted, KWOK_USER));
    const fresh = restarted(w);
    await fresh.handle(deleteOf(evicted, KWOK_USER));
    assert.equal(w.mem.countCalls("create"), 1);
    assert.deepEqual(fresh.stats.snapshot().decisions, { cloned: 1 });
    assert.deepEqual(fresh.stats.snapshot().clones, { created: 0, alreadyExisted: 1, failed: 0 });
  });
});

describe("reschedule-delete with --pod-reads virtual-namespaces", () => {
  const POD_READS = {
    role: "simkube-fn-virtual-pod-reads",
    account: { namespace: "simkube", name: "simkube-fn-reschedule-delete" },
  };
  const bindingIn = (namespace: string) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    name: POD_READS.role,
    namespace,
  });

  /**
   * RBAC as the narrow mode sets it up: a pod read is 403 unless the pod-read binding exists in the pod's
   * namespace, and for `lagReads` reads after it appears (the authorizer's cache catching up).
   */
  function withRbac(w: ReturnType<typeof world>, lagReads: number) {
    let lag = lagReads;
    const reads: string[] = [];
    const read = w.kube.read.bind(w.kube);
    w.kube.read = async (ref, options) => {
      if (ref.kind === "Pod") {
        const bound = w.mem.get(bindingIn(ref.namespace ?? "")) !== undefined;
        reads.push(bound && lag <= 0 ? "allowed" : "forbidden");
        if (!bound || lag-- > 0) throw new KubeError(403, "Forbidden", `pods "${ref.name}" is forbidden`);
      }
      return read(ref, options);
    };
    return reads;
  }

  it("binds the pod-read role to itself in the checked virtual namespace, then reads and clones", async () => {
    const w = world({ deps: { podReads: POD_READS } });
    const reads = withRbac(w, 3);
    await w.deleted(deleteOf({}));
    const binding = w.mem.get(bindingIn(TEST_NAMESPACE));
    assert.deepEqual(
      { roleRef: binding?.roleRef, subjects: binding?.subjects },
      {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: POD_READS.role },
        subjects: [{ kind: "ServiceAccount", name: POD_READS.account.name, namespace: "simkube" }],
      },
    );
    assert.ok(w.mem.get(CLONE_REF), "cloned after RBAC caught up");
    assert.deepEqual(reads.slice(0, 4), ["forbidden", "forbidden", "forbidden", "allowed"]);
    const order = w.mem.calls.map((c) => `${c.verb} ${c.ref.kind}`);
    assert.ok(
      order.indexOf("create RoleBinding") < order.indexOf("read Pod"),
      "bound before the first pod read",
    );
  });

  it("binds nothing and reads no pod outside the Simulation's virtual namespaces", async () => {
    const w = world({
      deps: { podReads: POD_READS },
      namespace: buildNamespace({ name: "kube-system" }),
      live: { name: "priv-debug", namespace: "kube-system", ownerReferences: [] },
    });
    withRbac(w, 0);
    await w.deleted(deleteOf({ name: "priv-debug", namespace: "kube-system" }));
    assert.equal(w.mem.calls.filter((c) => c.ref.kind === "RoleBinding" || c.ref.kind === "Pod").length, 0);
    assert.deepEqual(w.stats.snapshot().decisions, { "namespace-not-virtual": 1 });
  });

  it("a 403 that outlasts the propagation window is an error, and no clone", async () => {
    const w = world({ deps: { podReads: POD_READS } });
    withRbac(w, 1_000);
    await w.deleted(deleteOf({}));
    assert.equal(w.mem.get(CLONE_REF), undefined);
    assert.deepEqual(w.stats.snapshot().decisions, { error: 1 });
  });

  it("makes the binding once per namespace however many reviews, and takes an existing one", async () => {
    const w = world({ deps: { podReads: POD_READS }, extra: [] });
    withRbac(w, 0);
    w.mem.seed({
      ...bindingIn(TEST_NAMESPACE),
      metadata: { name: POD_READS.role, namespace: TEST_NAMESPACE },
    });
    await w.deleted(deleteOf({}));
    await w.deleted(deleteOf({ name: "second", uid: "uid-second" }));
    assert.equal(w.mem.calls.filter((c) => c.verb === "create" && c.ref.kind === "RoleBinding").length, 1);
    assert.ok(w.mem.get(CLONE_REF));
  });
});

// Keep KubeObject referenced for readers of the helpers above.
export type { KubeObject };
