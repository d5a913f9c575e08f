import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import fastJsonPatch from "fast-json-patch";
import { createMutateCreateHandler, type MutateCreateDeps } from "../../functions/mutate-create/handler.js";
import { rememberClaims } from "../../functions/mutate-create/sequence-claims.js";
import { createMutateStats } from "../../functions/mutate-create/stats.js";
import { buildMutateCreateDeps } from "../../functions/mutate-create/wiring.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import { decodePatch } from "../../shared/admission/review.js";
import { createLogger } from "../../shared/base/log.js";
import { loadConfig } from "../../shared/config/config.js";
import { podSpecHash } from "../../shared/hash/pod-hash.js";
import { KubeError, type KubeObject } from "../../shared/kube/api.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import type { Pod } from "../../shared/kube/pod.js";
import { createMemorySequenceStore, type SequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  buildReplicaSet,
  buildSimulation,
  buildSimulationRoot,
  deploymentOwnerRef,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_DEPLOYMENT,
  TEST_NAMESPACE,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { objectsKube } from "../support/objects-kube.js";
import { buildTrace, buildTraceBytes, finished, ownersTraceSpec } from "../support/trace-builder.js";

const NOW = new Date("2026-12-02T12:00:00.000Z");
// buildSimulation's spec.driver.virtualNsPrefix is "virtual".
const VIRTUAL_NS = "virtual-testing";
const HASH_KEY = "static.simkube.io/pod-spec-stable-hash";
const SEQ_KEY = "static.simkube.io/pod-sequence-number";
const EMPTY = { uid: "", allowed: true };
const KWOK_TOLERATION = { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" };

function silentLog() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger("debug", sink), lines };
}

function setup(
  options: { objects?: KubeObject[]; failures?: Map<string, KubeError>; sequences?: SequenceStore } = {},
) {
  const kube = objectsKube(
    options.objects ?? [buildSimulation({ speed: 2 }), buildSimulationRoot(), buildReplicaSet()],
    options.failures,
  );
  const { log, lines } = silentLog();
  const deps: MutateCreateDeps = {
    simName: TEST_SIM_NAME,
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    sequences: options.sequences ?? createMemorySequenceStore(),
    trace: buildTrace(
      ownersTraceSpec([
        { gvk: "v1.Pod", nsName: "testing/bare-pod", lifecycles: [finished(100, 130)] },
        {
          gvk: "apps/v1.ReplicaSet",
          nsName: "testing/the-replicaset",
          lifecycles: [finished(0, 10), finished(0, 60)],
        },
      ]),
    ),
    now: () => NOW,
    stats: createMutateStats(),
  };
  return { handle: createMutateCreateHandler(deps), kube, lines, deps };
}

function patched(review: AdmissionReview, pod: Pod): Pod {
  assert.equal(review.response?.allowed, true, review.response?.status?.message);
  return fastJsonPatch.applyPatch(
    structuredClone(pod),
    decodePatch(review.response ?? { uid: "", allowed: true }),
  ).newDocument as Pod;
}

describe("mutate-create handler", () => {
  it("lets ownerless pods outside the virtual namespaces through untouched, reading only the Simulation", async () => {
    const { handle, kube } = setup();
    const pod = buildPod({ ownerReferences: [] });
    const review = await handle(buildCreateReview({ pod, uid: "u-1" }));
    assert.deepEqual(review.response, { uid: "u-1", allowed: true });
    // The Simulation says which namespaces are virtual (cached); an ownerless pod needs no owner lookup.
    assert.deepEqual(kube.reads, ["Simulation/test-sim"]);
  });

  it("lets pods of another simulation through untouched", async () => {
    const { handle } = setup({
      objects: [buildSimulation(), buildSimulationRoot({ simName: "other-sim" })],
    });
    const review = await handle(buildCreateReview({ pod: buildPod() }));
    assert.equal(review.response?.allowed, true);
    assert.equal(review.response?.patch, undefined);
  });

  it("mutates a bare simulation pod and counts its hash's sequence from 0", async () => {
    const { handle } = setup();
    const pod = buildPod({ name: "bare-pod", phase: "Pending" });
    const hash = podSpecHash(pod);
    const first = patched(await handle(buildCreateReview({ pod })), pod);
    const second = patched(
      await handle(buildCreateReview({ pod: { ...pod, metadata: { ...pod.metadata, name: "b2" } } })),
      pod,
    );
    assert.equal(first.metadata?.annotations?.["static.simkube.io/pod-spec-stable-hash"], hash);
    assert.equal(first.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], "0");
    assert.equal(second.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], "1");
    assert.equal(first.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.deepEqual(first.spec?.nodeSelector, { type: "virtual" });
  });

  it("a repeated admission call (same request uid) gets the number the first call got", async () => {
    const { handle } = setup({ sequences: rememberClaims(createMemorySequenceStore()) });
    const pod = buildPod({ name: "bare-pod", phase: "Pending" });
    const seqOf = async (uid: string) =>
      patched(await handle(buildCreateReview({ pod, uid })), pod).metadata?.annotations?.[SEQ_KEY];
    assert.equal(await seqOf("review-1"), "0");
    assert.equal(await seqOf("review-1"), "0", "the API server sent the same review again");
    assert.equal(await seqOf("review-2"), "1");
  });

  it("answers from its caches without a read as it answered cold, and reads what the caches lack", async () => {
    const { handle, kube } = setup();
    const pod = buildPod({ name: "bare-pod", phase: "Pending" });
    const cold = decodePatch((await handle(buildCreateReview({ pod, uid: "cold" }))).response ?? EMPTY);
    const readsWhenWarm = [...kube.reads];
    assert.ok(readsWhenWarm.includes("Simulation/test-sim"));
    const twin = { ...pod, metadata: { ...pod.metadata, name: "bare-pod-2" } };
    const warm = decodePatch((await handle(buildCreateReview({ pod: twin, uid: "warm" }))).response ?? EMPTY);
    assert.deepEqual(kube.reads, readsWhenWarm);
    // The same answer but for the next sequence number of the hash.
    const withSecond = JSON.parse(JSON.stringify(cold).replace(`"${SEQ_KEY}":"0"`, `"${SEQ_KEY}":"1"`));
    assert.notDeepEqual(withSecond, cold);
    assert.deepEqual(warm, withSecond);
    // A pod whose owner is not cached yet: the Simulation is, the ReplicaSet is read.
    const rsPod = buildPod({ name: "rs-pod", ownerReferences: [replicaSetOwnerRef()], phase: "Pending" });
    const fromReplicaSet = patched(await handle(buildCreateReview({ pod: rsPod })), rsPod);
    assert.equal(fromReplicaSet.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.deepEqual(kube.reads.slice(readsWhenWarm.length), ["ReplicaSet/the-replicaset"]);
  });

  it("reserves no sequence number for a dry run, and the next real pod still gets 0", async () => {
    const { handle } = setup();
    const pod = buildPod({ name: "bare-pod", phase: "Pending" });
    const dry = patched(await handle(buildCreateReview({ pod, dryRun: true })), pod);
    assert.equal(dry.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);
    assert.deepEqual(dry.spec?.nodeSelector, { type: "virtual" });
    const real = patched(await handle(buildCreateReview({ pod })), pod);
    assert.equal(real.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], "0");
  });

  it("resolves owners through a ReplicaSet and uses the request's namespace for generateName pods", async () => {
    const { handle, kube } = setup();
    const pod = buildPod({ ownerReferences: [replicaSetOwnerRef()], phase: "Pending", generateName: "rs-" });
    delete pod.metadata?.name;
    delete pod.metadata?.namespace;
    const review = buildCreateReview({ pod, name: "" });
    (review.request as { namespace: string }).namespace = TEST_NAMESPACE;
    const out = patched(await handle(review), pod);
    assert.equal(out.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.ok(kube.reads.includes("ReplicaSet/the-replicaset"));
    assert.ok(kube.reads.includes("SimulationRoot/sk-test-driver-12345-root"));
  });

  it("gives a Running bare pod the completion time of its trace lifecycle, scaled by speed", async () => {
    const { handle } = setup();
    const pod = buildPod({
      name: "bare-pod",
      annotations: {
        "static.simkube.io/original-namespace": "testing",
        "static.simkube.io/pod-spec-stable-hash": "5",
        "static.simkube.io/pod-sequence-number": "0",
      },
    });
    const out = patched(await handle(buildCreateReview({ pod, operation: "UPDATE" })), pod);
    assert.equal(out.metadata?.labels?.["simkube.io/kwok-stage-complete"], "true");
    // 30 s in production at speed 2 is 15 s from now.
    assert.equal(
      out.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"],
      "2026-12-02T12:00:15+00:00",
    );
  });

  it("with TRACE_PATH, loads the trace once, without its events, before serving: first reviews share it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "simkube-fn-trace-"));
    const file = join(dir, "trace.sktrace");
    const spec = ownersTraceSpec([
      { gvk: "v1.Pod", nsName: "testing/bare-pod", lifecycles: [finished(100, 130)] },
    ]);
    writeFileSync(file, buildTraceBytes({ ...spec, events: [{ ts: 100, applied: [{ kind: "Pod" }] }] }));
    const kube = objectsKube([buildSimulation({ speed: 2 }), buildSimulationRoot(), buildReplicaSet()]);
    const config = loadConfig({ SIM_NAME: TEST_SIM_NAME, TRACE_PATH: file, SEQUENCE_STORE: "memory" });
    const deps = await buildMutateCreateDeps(config, kube, silentLog().log);
    rmSync(dir, { recursive: true }); // from here on, any second load would fail and deny the pod
    assert.equal(deps.traces, undefined, "no cache that could load it again");
    assert.ok(deps.trace && !("events" in deps.trace), "the lean trace, without an events array");
    const handle = createMutateCreateHandler(deps);
    const pod = buildPod({
      name: "bare-pod",
      annotations: { "static.simkube.io/original-namespace": "testing", [HASH_KEY]: "5", [SEQ_KEY]: "0" },
    });
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map(() => handle(buildCreateReview({ pod, operation: "UPDATE" }))),
    );
    for (const answer of answers) {
      const out = patched(answer, pod);
      assert.ok(out.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"], "a completion time");
    }
  });

  it("without a trace, still mutates a Running pod and counts it as no-trace", async () => {
    const { handle, deps } = setup();
    delete deps.trace;
    const pod = buildPod({
      name: "bare-pod",
      annotations: { "static.simkube.io/original-namespace": "testing" },
    });
    const out = patched(await handle(buildCreateReview({ pod })), pod);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.equal(out.metadata?.labels?.["simkube.io/kwok-stage-complete"], undefined);
    assert.equal(deps.stats?.snapshot().lifecycles["no-trace"], 1);
  });

  it("picks the ReplicaSet's lifecycle by sequence number, modulo the list", async () => {
    const { handle } = setup();
    const pod = buildPod({
      ownerReferences: [replicaSetOwnerRef()],
      annotations: {
        "static.simkube.io/original-namespace": "testing",
        "static.simkube.io/pod-spec-stable-hash": "77",
        "static.simkube.io/pod-sequence-number": "3",
      },
    });
    const out = patched(await handle(buildCreateReview({ pod, operation: "UPDATE" })), pod);
    // seq 3 % 2 = 1: the 60 s lifecycle, at speed 2.
    assert.equal(
      out.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"],
      "2026-12-02T12:00:30+00:00",
    );
  });

  it("denies a simulation pod when the API fails, saying why", async () => {
    const failures = new Map([
      ["SimulationRoot/sk-test-driver-12345-root", new KubeError(503, "ServiceUnavailable", "etcd down")],
    ]);
    const { handle } = setup({ failures });
    const review = await handle(buildCreateReview({ pod: buildPod(), uid: "u-9" }));
    assert.equal(review.response?.uid, "u-9");
    assert.equal(review.response?.allowed, false);
    assert.match(
      review.response?.status?.message ?? "",
      /could not mutate pod test-namespace\/the-pod: etcd down/,
    );
    assert.equal(review.response?.status?.code, 403);
  });

  it("denies a pod whose owner graph is over the walk's budget, saying so, without reading past it (issue 35)", async () => {
    // The tenant's pod names its ReplicaSet (which leads to the root) and 300 more owners.
    const extra = Array.from({ length: 300 }, (_, i) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: `d-${i}`,
      uid: `u-${i}`,
    }));
    const { handle, kube } = setup();
    const pod = buildPod({ ownerReferences: [replicaSetOwnerRef(), ...extra] });
    const review = await handle(buildCreateReview({ pod }));
    assert.equal(review.response?.allowed, false);
    assert.match(
      review.response?.status?.message ?? "",
      /could not mutate pod test-namespace\/the-pod: the pod's owner graph has more than 256 owner references/,
    );
    assert.ok(
      kube.reads.filter((r) => r.startsWith("Deployment/")).length === 0,
      "no owner read past the budget",
    );
  });

  it("denies when the sequence store cannot answer", async () => {
    const sequences: SequenceStore = {
      next: async () => {
        throw new Error("sequence store busy past its deadline");
      },
    };
    const { handle } = setup({ sequences });
    const review = await handle(buildCreateReview({ pod: buildPod() }));
    assert.equal(review.response?.allowed, false);
    assert.match(review.response?.status?.message ?? "", /sequence store busy/);
  });

  it("denies a CREATE without a spec and one with a corrupt hash annotation", async () => {
    const { handle } = setup();
    const noSpec = buildPod();
    delete noSpec.spec;
    assert.match(
      (await handle(buildCreateReview({ pod: noSpec }))).response?.status?.message ?? "",
      /no spec/,
    );
    const badHash = buildPod({ annotations: { "static.simkube.io/pod-spec-stable-hash": "x1" } });
    const review = await handle(buildCreateReview({ pod: badHash }));
    assert.equal(review.response?.allowed, false);
    assert.match(review.response?.status?.message ?? "", /not a 64-bit unsigned integer/);
  });

  it("allows a terminating pod's UPDATE and a DELETE without a patch", async () => {
    const { handle } = setup();
    const terminating = buildPod({ deletionTimestamp: "2026-12-02T11:00:00Z" });
    const update = await handle(buildCreateReview({ pod: terminating, uid: "t", operation: "UPDATE" }));
    assert.deepEqual(update.response, { uid: "t", allowed: true });
    assert.deepEqual((await handle(buildDeleteReview({ pod: buildPod(), uid: "d" }))).response, {
      uid: "d",
      allowed: true,
    });
  });

  it("answers malformed reviews with allowed false and a message, never a throw", async () => {
    const { handle } = setup();
    for (const body of [null, 42, "x", {}, { request: {} }, { request: { uid: "u", operation: "PATCH" } }]) {
      const review = await handle(body);
      assert.equal(review.kind, "AdmissionReview");
      assert.equal(review.response?.allowed, false);
      assert.ok((review.response?.status?.message ?? "").length > 0);
    }
    const noObject = await handle({ request: { uid: "u-2", operation: "CREATE" } });
    assert.equal(noObject.response?.uid, "u-2");
    assert.equal(noObject.response?.allowed, false);
    assert.match(noObject.response?.status?.message ?? "", /no object/);
  });

  it("counts its decisions and lifecycles in the shape reschedule-delete serves", async () => {
    const { handle, deps } = setup();
    await handle(buildCreateReview({ pod: buildPod({ ownerReferences: [] }) }));
    await handle(
      buildCreateReview({ pod: buildPod({ ownerReferences: [rootOwnerRef()], phase: "Pending" }) }),
    );
    await handle(buildCreateReview({ pod: buildPod({ ownerReferences: [], namespace: VIRTUAL_NS }) }));
    const running = buildPod({
      name: "bare-pod",
      annotations: { "static.simkube.io/original-namespace": "testing" },
    });
    await handle(buildCreateReview({ pod: running, operation: "UPDATE" }));
    await handle(buildDeleteReview({ pod: buildPod() }));
    await handle({});
    assert.deepEqual(deps.stats?.snapshot(), {
      reviews: 6,
      decisions: {
        malformed: 1,
        mutated: 2,
        "not-create-or-update": 1,
        "not-in-simulation": 1,
        "pinned-no-simulation-root": 1,
      },
      lifecycles: {
        "completion-set": 1,
        "labels-forbidden": 0,
        "no-finished-lifecycle": 0,
        "no-original-namespace": 0,
        "no-trace": 0,
        "not-in-trace": 0,
        "trace-refused": 0,
        "trace-unreadable": 0,
      },
    });
  });
});

// Issue 13: a pod in one of the simulation's virtual namespaces is pinned to virtual nodes whatever happens to
// its owner lookups; only the sequence number and the lifecycle need the chain to reach the SimulationRoot.
describe("mutate-create never lets a virtual-namespace pod through unpinned", () => {
  const deployment = (): KubeObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: TEST_DEPLOYMENT,
      namespace: VIRTUAL_NS,
      uid: "yuioyoiuy",
      ownerReferences: [rootOwnerRef()],
    },
    spec: { replicas: 1 },
  });
  /** The Deployment is gone; its ReplicaSet still makes pods (an orphaning delete, or GC not done yet). */
  const deploymentDeleted = () =>
    setup({
      objects: [
        buildSimulation({ speed: 2 }),
        buildSimulationRoot(),
        buildReplicaSet({ namespace: VIRTUAL_NS, ownerReferences: [deploymentOwnerRef()] }),
      ],
    });
  const replicaSetPod = (name: string, phase = "Pending") =>
    buildPod({
      name,
      namespace: VIRTUAL_NS,
      phase,
      ownerReferences: [replicaSetOwnerRef()],
      annotations: { "static.simkube.io/original-namespace": "testing" },
    });

  it("pins the pods of a ReplicaSet whose Deployment was deleted, with no sequence number or lifecycle", async () => {
    const { handle, deps } = deploymentDeleted();
    const pod = replicaSetPod("orphan-1", "Running");
    const out = patched(await handle(buildCreateReview({ pod })), pod);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [KWOK_TOLERATION]);
    assert.equal(out.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.equal(out.metadata?.annotations?.[HASH_KEY], podSpecHash(pod));
    assert.equal(out.metadata?.annotations?.["simkube.io/kwok-stage-create-delay"], "0ms");
    assert.equal(out.metadata?.annotations?.[SEQ_KEY], undefined);
    assert.equal(out.metadata?.labels?.["simkube.io/kwok-stage-complete"], undefined);
    assert.equal(deps.stats?.snapshot().decisions["pinned-owner-gone"], 1);
  });

  it("remembers no missing owner: once the Deployment is back, the ReplicaSet's next pod is mutated in full", async () => {
    const { handle, kube } = deploymentDeleted();
    const before = replicaSetPod("orphan-1");
    const pinned = patched(await handle(buildCreateReview({ pod: before })), before);
    assert.equal(pinned.metadata?.annotations?.[SEQ_KEY], undefined);
    kube.put(deployment());
    const after = replicaSetPod("after-1");
    const full = patched(await handle(buildCreateReview({ pod: after })), after);
    assert.equal(full.metadata?.annotations?.[SEQ_KEY], "0");
    assert.deepEqual(full.spec?.nodeSelector, { type: "virtual" });
    assert.equal(kube.reads.filter((r) => r === `Deployment/${TEST_DEPLOYMENT}`).length, 2);
  });

  it("mutates a CREATE that carries a deletionTimestamp like any other (the API server clears it)", async () => {
    const { handle } = setup();
    const pod = buildPod({
      namespace: VIRTUAL_NS,
      phase: "Pending",
      deletionTimestamp: "2026-12-02T11:00:00Z",
    });
    const out = patched(await handle(buildCreateReview({ pod })), pod);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [KWOK_TOLERATION]);
    assert.equal(out.metadata?.annotations?.[SEQ_KEY], "0");
  });

  it("pins an ownerless pod in a virtual namespace", async () => {
    const { handle, deps } = setup();
    const pod = buildPod({ namespace: VIRTUAL_NS, phase: "Pending", ownerReferences: [] });
    const out = patched(await handle(buildCreateReview({ pod })), pod);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.equal(out.metadata?.annotations?.[SEQ_KEY], undefined);
    assert.equal(deps.stats?.snapshot().decisions["pinned-no-simulation-root"], 1);
  });

  it("still denies when an owner read fails for another reason than not found", async () => {
    const failures = new Map([
      ["ReplicaSet/the-replicaset", new KubeError(503, "ServiceUnavailable", "etcd down")],
    ]);
    const { handle } = setup({ failures });
    const review = await handle(buildCreateReview({ pod: replicaSetPod("p-1") }));
    assert.equal(review.response?.allowed, false);
    assert.match(review.response?.status?.message ?? "", /etcd down/);
  });

  it("denies when the Simulation cannot be read: it names the virtual namespaces", async () => {
    const { handle } = setup({ objects: [buildSimulationRoot()] });
    const review = await handle(
      buildCreateReview({ pod: buildPod({ namespace: VIRTUAL_NS, ownerReferences: [] }) }),
    );
    assert.equal(review.response?.allowed, false);
    assert.match(review.response?.status?.message ?? "", /Simulation.*not found/);
  });

  it("pins a pod in our virtual namespace that another Simulation's root owns; leaves an UPDATE it cannot pin", async () => {
    const { handle, deps } = setup({
      objects: [buildSimulation(), buildSimulationRoot({ simName: "other-sim" })],
    });
    const other = buildPod({ namespace: VIRTUAL_NS, phase: "Pending" });
    const pinned = patched(await handle(buildCreateReview({ pod: other })), other);
    assert.deepEqual(pinned.spec?.nodeSelector, { type: "virtual" });
    assert.equal(pinned.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);
    assert.equal(deps.stats?.snapshot().decisions["pinned-other-simulation-root"], 1);
    const gone = deploymentDeleted();
    const update = await gone.handle(
      buildCreateReview({ pod: replicaSetPod("p-2", "Running"), operation: "UPDATE" }),
    );
    assert.equal(update.response?.allowed, true);
    assert.equal(update.response?.patch, undefined);
    assert.equal(gone.deps.stats?.snapshot().decisions["update-without-root"], 1);
  });
});
