// Holds docs/differences-from-simkube.md to the code. Each row of its two tables (the differences, and what
// is the same) has one check here that shows simkube-fn's side of it, and each check has a row: deleting a
// row, a check or the behaviour fails this file. Each difference must also say what SimKube does with a
// source, what simkube-fn does, and why.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fastJsonPatch from "fast-json-patch";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import { mutationPatch, planMutation } from "../../functions/mutate-create/plan.js";
import { TraceLocationRefused } from "../../functions/mutate-create/trace-cache.js";
import { planScope, planScopeAnySimulation, triageReview } from "../../functions/mutate-create/triage.js";
import { buildCloneName, isValidPodName } from "../../functions/reschedule-delete/clone-name.js";
import { createRescheduleDeleteHandler } from "../../functions/reschedule-delete/handler.js";
import {
  checkOwnedByRoot,
  checkVirtualNamespace,
  confirmLivePod,
} from "../../functions/reschedule-delete/live-checks.js";
import { createPendingClones } from "../../functions/reschedule-delete/pending-clones.js";
import { buildClone, judgeDeletion, triageDelete } from "../../functions/reschedule-delete/plan.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import { buildSimulationWebhookConfiguration, buildWebhookConfiguration } from "../../knative/manifests.js";
import type { DeploymentOptions } from "../../knative/options.js";
import { podCreateValidations } from "../../knative/pod-create-policy.js";
import { OWNER_KINDS } from "../../knative/rbac.js";
import { type AdmissionReview, decodePatch } from "../../shared/admission/review.js";
import {
  CONTROLLER_MANAGER_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
  POD_GC_USER,
  SIMKUBE_DRIVER_USER,
} from "../../shared/base/identities.js";
import { withRetry } from "../../shared/base/retry.js";
import { loadConfig } from "../../shared/config/config.js";
import { podSpecHash } from "../../shared/hash/pod-hash.js";
import { isTransient, KubeError, type KubeObject } from "../../shared/kube/api.js";
import { createOwnerResolver, type OwnerLink, simulationRootOf } from "../../shared/kube/owners.js";
import type { Pod } from "../../shared/kube/pod.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import { virtualNodeToleration } from "../../shared/simulation/virtual-nodes.js";
import { chooseLifecycleList, completionTime } from "../../shared/trace/lifecycle.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  buildReplicaSet,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  deploymentOwnerRef,
  disruptionTarget,
  replicaSetOwnerRef,
  rootOwnerRef,
  simulationOwnerRef,
  TEST_SIM_NAME,
  TEST_SIM_ROOT_NAME,
} from "../support/builders.js";
import { silentLog } from "../support/logs.js";
import { createMemoryKube } from "../support/memory-kube.js";
import { objectsKube } from "../support/objects-kube.js";
import { buildTrace, finished } from "../support/trace-builder.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const DOC = readFileSync(path.join(REPO, "docs/differences-from-simkube.md"), "utf8");
const SIMKUBE_SOURCE = "https://github.com/acrlabs/simkube/blob/46c21b3733d1dd002ff24634d2b207991f67bc5a/";

// ---------------------------------------------------------------------------------------------------------
// Reading the doc

/** The ids of the table between `<!-- name:begin -->` and `<!-- name:end -->`: the first cell, `like-this`. */
function tableIds(name: string): string[] {
  const begin = DOC.indexOf(`<!-- ${name}:begin -->`);
  const end = DOC.indexOf(`<!-- ${name}:end -->`);
  assert.ok(begin >= 0 && end > begin, `the doc has no ${name} table`);
  return [...DOC.slice(begin, end).matchAll(/^\| `([a-z0-9-]+)` +\|/gm)].map((m) => m[1] ?? "");
}

/** Each `### \`id\`` section's text, up to the next heading. */
function sections(): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of DOC.split(/^(?=#{2,3} )/m)) {
    const id = /^### `([a-z0-9-]+)`/.exec(part)?.[1];
    if (id) found.set(id, part);
  }
  return found;
}

/** `[key]: url` reference definitions. */
function linkTargets(): Map<string, string> {
  return new Map([...DOC.matchAll(/^\[([a-z0-9]+)\]: (\S+)$/gm)].map((m) => [m[1] ?? "", m[2] ?? ""]));
}

// ---------------------------------------------------------------------------------------------------------
// Fixtures

const NOW = new Date("2026-12-02T12:00:00.123Z");
const VIRTUAL_NS = "virtual-testing";
const SEQ_KEY = "static.simkube.io/pod-sequence-number";
const HASH_KEY = "static.simkube.io/pod-spec-stable-hash";
const SECRET = "s3cr3t-path-segment_0123456789abcdef";
const BASE: DeploymentOptions = {
  simName: TEST_SIM_NAME,
  webhookUrlBase: "https://fn.example.com",
  image: "registry.example.com/simkube-fn:0.1.0",
  rescheduleInterruptedBarePods: true,
};
/** reschedule-delete's triage of a DELETE of `pod` by `user`, with SimKube's driver as DRIVER_USERS. */
function triageDeleteBy(pod: Pod, user: string, dryRun = false) {
  const { request } = buildDeleteReview({ pod, user, dryRun });
  assert.ok(request);
  return triageDelete(request, [SIMKUBE_DRIVER_USER]);
}

/** mutate-create's triage of a CREATE or UPDATE review, before any API call. */
function triageOf(review: AdmissionReview) {
  assert.ok(review.request);
  return triageReview(review.request);
}

function webhooks(options: DeploymentOptions = BASE) {
  const config = buildWebhookConfiguration(options);
  const [create, del] = config.webhooks ?? [];
  assert.ok(create && del, "both webhooks rendered");
  return { config, create, del };
}

/** mutate-create as `serve` builds it, over these objects, with a memory sequence store. */
function mutateCreate(objects: KubeObject[], failures?: Map<string, KubeError>) {
  const kube = objectsKube(objects, failures);
  const log = silentLog();
  return createMutateCreateHandler({
    simName: TEST_SIM_NAME,
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    sequences: createMemorySequenceStore(),
    now: () => NOW,
  });
}

/** The pod as the review's patch leaves it; the review must allow it. */
function patched(review: AdmissionReview, pod: Pod): Pod {
  assert.equal(review.response?.allowed, true, review.response?.status?.message);
  const patch = decodePatch(review.response ?? { uid: "", allowed: true });
  return fastJsonPatch.applyPatch(structuredClone(pod), patch).newDocument as Pod;
}

/** The ReplicaSet's pods, in a virtual namespace, with its Deployment gone. */
const ORPHANED = () => [
  buildSimulation(),
  buildSimulationRoot(),
  buildReplicaSet({ namespace: VIRTUAL_NS, ownerReferences: [deploymentOwnerRef()] }),
];
const replicaSetPod = () =>
  buildPod({
    name: "web-1",
    namespace: VIRTUAL_NS,
    phase: "Pending",
    ownerReferences: [replicaSetOwnerRef()],
  });

/** reschedule-delete over a simulation that reschedules, its root, a virtual namespace and one live bare pod. */
/**
 * A bare simulation pod being deleted by a user: the review's oldObject has no deletionTimestamp (the API server
 * wipes it before admission), the live pod shows it (stored once every webhook answered).
 */
function rescheduleWorld(extra: KubeObject[] = [], deleting = true) {
  const root = rootOwnerRef(TEST_SIM_ROOT_NAME);
  const pod = buildPod({ ownerReferences: [root], nodeName: "kwok-node-1" });
  const shown = { deletionTimestamp: "2026-12-02T12:00:30Z" };
  const kube = objectsKube([
    buildSimulation({ rescheduleInterruptedBarePods: true }),
    buildSimulationRoot({ name: TEST_SIM_ROOT_NAME }),
    buildVirtualNamespace(root),
    pod,
    ...extra,
  ]);
  // As the API server does: the deletion is stored once the review was answered (`deleting`).
  const storeDeletion = () => {
    if (deleting) kube.put({ ...pod, metadata: { ...pod.metadata, ...shown } });
  };
  const created: string[] = [];
  const counting = {
    ...kube,
    create<T extends KubeObject>(o: T) {
      created.push(o.metadata?.name ?? "");
      return kube.create(o);
    },
  };
  const replica = () => {
    const stats = createRescheduleStats();
    const pending = createPendingClones();
    const handler = createRescheduleDeleteHandler({
      kube: counting,
      simName: TEST_SIM_NAME,
      driverUsers: [SIMKUBE_DRIVER_USER],
      log: silentLog(),
      simulation: createSimulationSource(counting, TEST_SIM_NAME),
      stats,
      pending,
      // A wait that sees no deletion ends in 200 ms here, not 10 s.
      deletionWait: { waitMs: 1_000, firstDelayMs: 5, maxDelayMs: 50 },
    });
    const handle: typeof handler = async (body) => {
      const answer = await handler(body);
      storeDeletion();
      return answer;
    };
    /** Every clone this replica has waiting for its deletion, made (or given up). */
    const settled = async () => assert.equal(await pending.settle(10_000), true, "every wait ended");
    return { handle, stats, settled };
  };
  return { pod, root, kube, created, replica };
}

// ---------------------------------------------------------------------------------------------------------
// simkube-fn's side of each difference, by the doc's id

type Check = () => void | Promise<void>;

const DIFFERENCES: Record<string, Check> = {
  "owner-lookup-failure": async () => {
    const failures = new Map([
      ["ReplicaSet/the-replicaset", new KubeError(503, "ServiceUnavailable", "etcd down")],
    ]);
    const denied = await mutateCreate(ORPHANED(), failures)(buildCreateReview({ pod: replicaSetPod() }));
    assert.equal(denied.response?.allowed, false);
    assert.match(denied.response?.status?.message ?? "", /etcd down/);
    // Not found is no failure: the chain stops there, and the next lookup reads again.
    const kube = objectsKube(ORPHANED());
    const owners = createOwnerResolver(kube, silentLog());
    for (let i = 0; i < 2; i++) {
      const chain = await owners.ownerChain(replicaSetPod());
      assert.equal(chain.at(-1)?.gone, true);
    }
    assert.equal(kube.reads.filter((r) => r.startsWith("Deployment/")).length, 2);
  },
  "broken-chain-pinned": async () => {
    const pod = replicaSetPod();
    const out = patched(await mutateCreate(ORPHANED())(buildCreateReview({ pod })), pod);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [virtualNodeToleration()]);
    assert.equal(out.metadata?.annotations?.[HASH_KEY], podSpecHash(pod));
    assert.equal(out.metadata?.annotations?.[SEQ_KEY], undefined);
  },
  "root-by-owner": () => {
    const named = { apiVersion: "apps/v1", kind: "ReplicaSet", name: "sk-test-driver-12345-root", uid: "u" };
    const byName: OwnerLink[] = [{ ref: named, ownedBy: [] }];
    assert.equal(simulationRootOf(byName, TEST_SIM_NAME), undefined, "a name alone makes no root");
    const root = rootOwnerRef();
    assert.deepEqual(simulationRootOf([{ ref: root, ownedBy: [simulationOwnerRef()] }], TEST_SIM_NAME), root);
    const other = [{ ref: root, ownedBy: [simulationOwnerRef("other-sim")] }];
    assert.equal(simulationRootOf(other, TEST_SIM_NAME), undefined, "another Simulation's root");
  },
  "other-simulation-pinned": () => {
    const chain = [{ ref: rootOwnerRef(), ownedBy: [simulationOwnerRef("other-sim")] }];
    const facts = { operation: "CREATE", simName: TEST_SIM_NAME, virtualNsPrefix: "virtual", chain } as const;
    assert.deepEqual(planScope({ ...facts, namespace: "virtual-default" }), {
      mutate: "pin",
      reason: "other-simulation-root",
    });
    assert.deepEqual(planScope({ ...facts, namespace: "default" }), { skip: "other-simulation" });
  },
  "create-with-deletion-timestamp": async () => {
    const pod = buildPod({ phase: "Pending", deletionTimestamp: "2026-12-02T11:00:00Z" });
    const out = patched(
      await mutateCreate([buildSimulation(), buildSimulationRoot()])(buildCreateReview({ pod })),
      pod,
    );
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    const update = triageOf(buildCreateReview({ pod, operation: "UPDATE" }));
    assert.deepEqual(update, { skip: "terminating" });
  },
  "dry-run-create-sequence": async () => {
    const handle = mutateCreate([buildSimulation(), buildSimulationRoot()]);
    const pod = buildPod({ phase: "Pending" });
    const dry = patched(await handle(buildCreateReview({ pod, dryRun: true })), pod);
    assert.deepEqual(dry.spec?.nodeSelector, { type: "virtual" });
    assert.equal(dry.metadata?.annotations?.[SEQ_KEY], undefined);
    const real = patched(await handle(buildCreateReview({ pod })), pod);
    assert.equal(real.metadata?.annotations?.[SEQ_KEY], "0", "the dry run spent no number");
  },
  "sequence-store": async () => {
    assert.equal(loadConfig({}).sequenceStore, "cluster");
    const kube = createMemoryKube();
    const scope = { simName: TEST_SIM_NAME, owner: rootOwnerRef() };
    const replica = () => createClusterSequenceStore(kube, { namespace: "simkube-fn" });
    // Two replicas, then a third started cold: one count between them.
    assert.deepEqual([await replica().next("42", scope), await replica().next("42", scope)], [0, 1]);
    assert.equal(await replica().next("42", scope), 2);
  },
  "lifecycle-hash-choice": () => {
    const owner = { gvk: "apps/v1.Deployment", nsName: "testing/web" };
    const trace = buildTrace({
      index: { [owner.gvk]: [owner.nsName] },
      podLifecycles: [
        { ...owner, hash: "111", lifecycles: [finished(0, 10)] },
        { ...owner, hash: "222", lifecycles: [finished(0, 20)] },
      ],
    });
    assert.equal(chooseLifecycleList(trace, owner.gvk, owner.nsName, "222")?.hash, "222", "its own hash");
    assert.equal(chooseLifecycleList(trace, owner.gvk, owner.nsName, "999")?.hash, "111", "first in file");
  },
  "hash-unknown-fields": () => {
    const containers = [{ name: "c", image: "nginx:1.27" }];
    const newer = { containers, resources: { limits: { cpu: "1" } } };
    assert.notEqual(podSpecHash({ spec: newer }), podSpecHash({ spec: { containers } }));
  },
  "node-status-write": () => {
    const pod = buildPod();
    const triage = triageOf(
      buildCreateReview({ pod, operation: "UPDATE", subResource: "status", user: "system:node:n1" }),
    );
    assert.ok("candidate" in triage && triage.candidate.labelsForbidden);
    const input = {
      operation: "UPDATE" as const,
      pod,
      simName: TEST_SIM_NAME,
      hash: "1",
      lifecycleParams: {},
    };
    const timed = { ...input, completionTime: "2026-12-02T12:00:30+00:00" };
    assert.equal(
      planMutation({ ...timed, labelsForbidden: true }).metadata?.labels?.["simkube.io/kwok-stage-complete"],
      undefined,
    );
    assert.equal(planMutation(timed).metadata?.labels?.["simkube.io/kwok-stage-complete"], "true");
  },
  "interruption-rule": () => {
    const running = buildPod();
    const tail = buildPod({ deletionTimestamp: "2026-12-02T12:00:00Z" });
    assert.deepEqual(judgeDeletion({ pod: tail, username: KWOK_USER, driverUsers: [] }), {
      interrupted: false,
      reason: "final-phase",
    });
    assert.equal(judgeDeletion({ pod: running, username: "alice", driverUsers: [] }).interrupted, true);
  },
  "pod-gc-clone": () => {
    const pod = buildPod({ phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] });
    const triage = triageDeleteBy(pod, POD_GC_USER);
    assert.ok("candidate" in triage, JSON.stringify(triage));
    assert.equal(triage.candidate.judgement.detail, "DeletionByPodGC");
    assert.equal(confirmLivePod(pod, triage.candidate), undefined, "the live Failed pod confirms it");
  },
  "teardown-clone-attempts": () => {
    for (const user of [GARBAGE_COLLECTOR_USER, NAMESPACE_CONTROLLER_USER]) {
      assert.deepEqual(triageDeleteBy(buildPod(), user), { skip: "teardown-controller" });
    }
  },
  "clone-attempts": async () => {
    const w = rescheduleWorld();
    const tail = buildPod({ ownerReferences: [w.root], deletionTimestamp: "2026-12-02T12:00:00Z" });
    assert.deepEqual(triageDeleteBy(tail, KWOK_USER), { skip: "final-phase" });
    const [first, second] = [w.replica(), w.replica()];
    const review = () => buildDeleteReview({ pod: w.pod, user: "alice" });
    // Both replicas get reviews of the deletion before it is stored; the first one twice.
    await Promise.all([first.handle(review()), first.handle(review()), second.handle(review())]);
    await Promise.all([first.settled(), second.settled()]);
    await first.handle(review());
    await first.settled();
    assert.ok(w.created.length >= 1 && w.created.every((name) => name === "the-pod-clone-1"));
    const clones = [first, second].map((r) => r.stats.snapshot().clones);
    assert.equal(
      clones.reduce((n, c) => n + c.created, 0),
      1,
      "one clone made",
    );
    assert.equal(
      clones.reduce((n, c) => n + c.created + c.alreadyExisted, 0),
      2,
      "each replica made it or found it",
    );
    assert.equal(first.stats.snapshot().decisions["already-handled"], 2, "the rest from memory");
  },
  "driver-deletes": () => {
    assert.deepEqual(triageDeleteBy(buildPod(), SIMKUBE_DRIVER_USER), { skip: "driver-delete" });
  },
  "dry-run-delete": () => {
    assert.deepEqual(triageDeleteBy(buildPod(), "alice", true), { skip: "dry-run" });
  },
  "live-checks": () => {
    const root = {
      apiVersion: "simkube.io/v1",
      kind: "SimulationRoot",
      name: TEST_SIM_ROOT_NAME,
      uid: "qwerty-5678",
    };
    assert.deepEqual(checkOwnedByRoot(buildPod({ ownerReferences: [replicaSetOwnerRef()] }), root), {
      skip: "not-bare",
    });
    assert.equal(
      checkVirtualNamespace(buildVirtualNamespace(rootOwnerRef("sk-other-root", "x")), root),
      "namespace-not-virtual",
    );
    const triage = triageDeleteBy(buildPod(), "alice");
    assert.ok("candidate" in triage);
    assert.equal(confirmLivePod(buildPod({ uid: "another" }), triage.candidate), "uid-mismatch");
    assert.equal(
      confirmLivePod(buildPod({ phase: "Succeeded" }), triage.candidate),
      "live-pod-not-interrupted",
    );
  },
  "clone-after-deletion": async () => {
    // The review is answered while the live pod does not show the deletion yet, as on a real API server.
    const w = rescheduleWorld([], false);
    const replica = w.replica();
    const answer = await replica.handle(buildDeleteReview({ pod: w.pod, user: "alice" }));
    assert.equal(answer.response?.allowed, true);
    assert.deepEqual(w.created, [], "answered before any clone");
    w.kube.put({ ...w.pod, metadata: { ...w.pod.metadata, deletionTimestamp: "2026-12-02T12:00:30Z" } });
    await replica.settled();
    assert.deepEqual(w.created, ["the-pod-clone-1"], "made once the live pod showed the deletion");
    // A review of a pod the API never shows being deleted: no clone, however often it is sent.
    const other = rescheduleWorld([], false);
    const unbacked = other.replica();
    for (let i = 0; i < 2; i++) await unbacked.handle(buildDeleteReview({ pod: other.pod, user: "mallory" }));
    await unbacked.settled();
    assert.deepEqual(other.created, []);
    assert.equal(unbacked.stats.snapshot().decisions["no-deletion-seen"], 1);
  },
  "clone-pinned": () => {
    const loose = { key: "kwok-provider", operator: "Exists" };
    const pod = buildPod({ spec: { containers: [], tolerations: [loose] } });
    const clone = buildClone(pod, rootOwnerRef());
    assert.deepEqual(clone.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(clone.spec?.tolerations, [virtualNodeToleration()]);
  },
  "clone-owner": () => {
    const root = rootOwnerRef();
    const pod = buildPod({ ownerReferences: [root, rootOwnerRef("sk-older-root", "old-uid")] });
    assert.deepEqual(buildClone(pod, root).metadata?.ownerReferences, [root]);
  },
  "clone-ephemeral-containers": () => {
    const pod = buildPod({
      spec: { containers: [], ephemeralContainers: [{ name: "debug", image: "busybox" }] },
    });
    assert.equal(buildClone(pod, rootOwnerRef()).spec?.ephemeralContainers, undefined);
  },
  "clone-name-length": () => {
    const name = buildCloneName("a".repeat(250));
    assert.ok(name.length <= 253 && isValidPodName(name) && name.endsWith("-clone-1"), name);
  },
  "webhook-configuration-name": () => {
    assert.equal(webhooks().config.metadata?.name, "simkube-fn");
    const adopted = buildSimulationWebhookConfiguration({ ...BASE, caBundle: "Y2E=" });
    assert.equal(adopted.metadata?.name, `sk-${TEST_SIM_NAME}-mutatepods`);
  },
  "webhook-names": () => {
    const { create, del } = webhooks();
    assert.deepEqual(
      [create.name, del.name],
      ["mutate-create.simkube-fn.simkube.io", "reschedule-delete.simkube-fn.simkube.io"],
    );
  },
  "webhook-client-config": () => {
    const { create, del } = webhooks({ ...BASE, pathSecret: SECRET });
    assert.equal(
      create.clientConfig.url,
      `https://simkube-fn-mutate-create.simkube-fn.fn.example.com/${SECRET}`,
    );
    assert.equal(
      del.clientConfig.url,
      `https://simkube-fn-reschedule-delete.simkube-fn.fn.example.com/${SECRET}`,
    );
    assert.equal(create.clientConfig.service, undefined);
  },
  "webhook-ca": () => {
    const none = webhooks();
    assert.equal(none.config.metadata?.annotations, undefined);
    assert.equal(none.create.clientConfig.caBundle, undefined);
    const given = webhooks({ ...BASE, caBundle: "Y2E=" });
    assert.deepEqual([given.create.clientConfig.caBundle, given.del.clientConfig.caBundle], ["Y2E=", "Y2E="]);
    const injected = webhooks({ ...BASE, caInjectFrom: "simkube-fn/simkube-fn-cert" });
    assert.deepEqual(injected.config.metadata?.annotations, {
      "cert-manager.io/inject-ca-from": "simkube-fn/simkube-fn-cert",
    });
  },
  "webhook-owner-labels": () => {
    const { metadata } = webhooks().config;
    assert.equal(metadata?.ownerReferences, undefined);
    assert.deepEqual(metadata?.labels, {
      "app.kubernetes.io/name": "simkube-fn",
      "app.kubernetes.io/instance": "simkube-fn",
      "app.kubernetes.io/part-of": "simkube",
      "simkube.io/simulation": TEST_SIM_NAME,
    });
  },
  "webhook-namespace-selector": () => {
    const { create, del } = webhooks();
    const selector = {
      matchLabels: { "simkube.io/virtual": "true" },
      matchExpressions: [
        {
          key: "kubernetes.io/metadata.name",
          operator: "NotIn",
          values: ["simkube-fn", "knative-serving", "kourier-system", "cert-manager", "kube-system"],
        },
      ],
    };
    assert.deepEqual([create.namespaceSelector, del.namespaceSelector], [selector, selector]);
  },
  "delete-failure-policy": () => {
    assert.equal(webhooks().del.failurePolicy, "Ignore");
  },
  "delete-resources": () => {
    assert.deepEqual(webhooks().del.rules, [
      {
        apiGroups: [""],
        apiVersions: ["v1"],
        operations: ["DELETE"],
        resources: ["pods"],
        scope: "Namespaced",
      },
    ]);
  },
  "delete-driver-match-condition": () => {
    const conditions = webhooks().del.matchConditions;
    assert.deepEqual(conditions?.[1], {
      name: "not-driver-deletes",
      expression: `has(oldObject.metadata.deletionTimestamp) || !(request.userInfo.username in ['${SIMKUBE_DRIVER_USER}'])`,
    });
    assert.deepEqual(conditions?.[2], {
      name: "not-teardown-controller-deletes",
      expression: `has(oldObject.metadata.deletionTimestamp) || !(request.userInfo.username in ['${GARBAGE_COLLECTOR_USER}', '${NAMESPACE_CONTROLLER_USER}'])`,
    });
    assert.equal(conditions?.[3]?.name, "final-phase-only-when-disrupted");
    assert.match(conditions?.[3]?.expression ?? "", /^!has\(oldObject\.metadata\.deletionTimestamp\) \|\| /);
    assert.match(
      conditions?.[3]?.expression ?? "",
      /c\.type == 'DisruptionTarget' && has\(c\.status\) && c\.status == 'True'/,
    );
  },
  "side-effects": () => {
    const { create, del } = webhooks();
    assert.deepEqual([create.sideEffects, del.sideEffects], ["NoneOnDryRun", "NoneOnDryRun"]);
  },
  timeouts: () => {
    const { create, del } = webhooks();
    assert.deepEqual([create.timeoutSeconds, del.timeoutSeconds], [30, 15]);
  },
  "delete-webhook-per-deployment": () => {
    const { rescheduleInterruptedBarePods: _flag, ...byDefault } = BASE;
    assert.deepEqual(
      buildWebhookConfiguration(byDefault).webhooks?.map((w) => w.name),
      ["mutate-create.simkube-fn.simkube.io", "reschedule-delete.simkube-fn.simkube.io"],
      "by default, the DELETE webhook for every Simulation",
    );
    const rendered = buildWebhookConfiguration({ ...BASE, rescheduleInterruptedBarePods: false });
    assert.deepEqual(
      rendered.webhooks?.map((w) => w.name),
      ["mutate-create.simkube-fn.simkube.io"],
      "with --no-reschedule, no DELETE webhook for any Simulation",
    );
  },
  "owner-kinds": async () => {
    assert.deepEqual(
      OWNER_KINDS.map((k) => k.kind),
      ["ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"],
    );
    // A custom kind the rendered RBAC does not grant: the API server answers 403, and the pod is denied.
    const custom = { apiVersion: "example.com/v1", kind: "Widget", name: "w", uid: "w-uid" };
    const pod = buildPod({ namespace: VIRTUAL_NS, phase: "Pending", ownerReferences: [custom] });
    const failures = new Map([["Widget/w", new KubeError(403, "Forbidden", "widgets is forbidden")]]);
    const answer = await mutateCreate(
      [buildSimulation(), buildSimulationRoot()],
      failures,
    )(buildCreateReview({ pod }));
    assert.equal(answer.response?.allowed, false);
    assert.match(answer.response?.status?.message ?? "", /Widget w .*--owner-resource widgets\.example\.com/);
  },
  "clone-keyless-toleration": () => {
    const keyless = { operator: "Exists" };
    const clone = buildClone(buildPod({ spec: { containers: [], tolerations: [keyless] } }), rootOwnerRef());
    assert.ok(
      (clone.spec?.tolerations as Array<{ key?: string }> | undefined)?.some((t) => !t.key),
      "the clone keeps the key-less toleration",
    );
    const rule = podCreateValidations().find((v) => v.expression.includes("spec.tolerations"));
    assert.match(
      rule?.expression ?? "",
      /has\(t\.key\) && t\.key != ''/,
      "which the pod-create policy refuses",
    );
  },
  "clone-affinity-token": () => {
    const term = { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] };
    const affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } },
    };
    const pod = buildPod({ spec: { containers: [], affinity, serviceAccountName: "app" } });
    const clone = buildClone(pod, rootOwnerRef()).spec as {
      affinity: typeof affinity;
      automountServiceAccountToken?: boolean;
    };
    const terms =
      clone.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    assert.deepEqual(terms[0]?.matchExpressions, [
      { key: "zone", operator: "In", values: ["a"] },
      { key: "type", operator: "In", values: ["virtual"] },
    ]);
    assert.equal(clone.automountServiceAccountToken, false);
  },
  "skipped-delete-users": () => {
    const running = buildPod();
    assert.deepEqual(judgeDeletion({ pod: running, username: undefined, driverUsers: [] }), {
      interrupted: false,
      reason: "no-user",
    });
    assert.deepEqual(judgeDeletion({ pod: running, username: CONTROLLER_MANAGER_USER, driverUsers: [] }), {
      interrupted: false,
      reason: "controller-manager",
    });
  },
  "transient-retries": async () => {
    let attempts = 0;
    const answer = await withRetry(
      async () => {
        attempts += 1;
        if (attempts === 1) throw new KubeError(503, "ServiceUnavailable", "etcd down");
        return "read";
      },
      { deadlineMs: 1_000, isRetryable: isTransient, sleep: async () => {} },
    );
    assert.deepEqual([answer, attempts], ["read", 2]);
  },
  "simulation-reread": async () => {
    let clock = 1_000_000;
    const kube = objectsKube([buildSimulation()]);
    const source = createSimulationSource(kube, TEST_SIM_NAME, { now: () => clock });
    await source.get();
    clock += 4_999;
    await source.get();
    clock += 2;
    await source.get();
    assert.equal(kube.reads.length, 2, "read again once 5 s have passed");
  },
  "trace-refusal": async () => {
    const kube = objectsKube([buildSimulation(), buildSimulationRoot()]);
    const log = silentLog();
    const refusing = {
      get: async () => {
        throw new TraceLocationRefused("not allowed");
      },
      size: () => 0,
      bytes: () => 0,
    };
    const handle = createMutateCreateHandler({
      log,
      owners: createOwnerResolver(kube, log),
      simulation: createSimulationSource(kube),
      sequences: createMemorySequenceStore(),
      traces: refusing,
      now: () => NOW,
    });
    const pod = buildPod({ ownerReferences: [rootOwnerRef()] });
    const answer = await handle(buildCreateReview({ pod }));
    assert.equal(answer.response?.allowed, false);
    assert.match(answer.response?.status?.message ?? "", /not a trace location this deployment allows/);
  },
  "patch-shape": () => {
    const pod = buildPod({ phase: "Pending" });
    delete pod.metadata?.labels;
    const input = {
      operation: "CREATE" as const,
      pod,
      simName: TEST_SIM_NAME,
      hash: "1",
      lifecycleParams: {},
    };
    const [first] = mutationPatch(input);
    assert.deepEqual(first, {
      op: "add",
      path: "/metadata/labels",
      value: { "simkube.io/simulation": TEST_SIM_NAME },
    });
    const pinned = buildPod({
      phase: "Pending",
      spec: { containers: [], nodeSelector: { type: "virtual" } },
    });
    assert.ok(
      !mutationPatch({ ...input, pod: pinned }).some((op) => op.path.startsWith("/spec/nodeSelector")),
    );
  },
  "clone-counter-overflow": () => {
    assert.equal(buildCloneName("web-clone-18446744073709551615"), "web-clone-18446744073709551616");
  },
  "unlabelled-virtual-namespace": () => {
    const { create } = webhooks();
    const labels: Record<string, string> = {}; // a virtual-* namespace made before, never labelled
    const wanted = Object.entries(create.namespaceSelector?.matchLabels ?? {});
    assert.ok(wanted.length > 0 && !wanted.every(([k, v]) => labels[k] === v), "its pods are never sent");
  },
  "every-simulation": () => {
    assert.equal(loadConfig({}).simName, undefined);
    for (const sim of ["sim-a", "sim-b"]) {
      const chain = [{ ref: rootOwnerRef(), ownedBy: [simulationOwnerRef(sim)] }];
      const scope = planScopeAnySimulation({ operation: "CREATE", chain });
      assert.ok("simName" in scope && scope.simName === sim, JSON.stringify(scope));
    }
  },
};

const SAME: Record<string, Check> = {
  "pod-fields": async () => {
    const pod = buildPod({ phase: "Pending" });
    const out = patched(
      await mutateCreate([buildSimulation(), buildSimulationRoot()])(buildCreateReview({ pod })),
      pod,
    );
    assert.deepEqual(out.metadata?.labels, { foo: "bar", "simkube.io/simulation": TEST_SIM_NAME });
    assert.deepEqual(Object.keys(out.metadata?.annotations ?? {}).sort(), [
      "simkube.io/kwok-stage-create-delay",
      "simkube.io/kwok-stage-create-delay-jitter",
      "simkube.io/kwok-stage-ready-delay",
      "simkube.io/kwok-stage-ready-delay-jitter",
      SEQ_KEY,
      HASH_KEY,
    ]);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [virtualNodeToleration()]);
  },
  "completion-time-format": () => {
    // 61 s at speed 2 is 30.5 s, truncated to 30; a whole second has no fraction.
    assert.equal(
      completionTime(finished(0, 61), 2, new Date("2026-12-02T12:00:00Z")),
      "2026-12-02T12:00:30+00:00",
    );
    // chrono's to_rfc3339: the fewest of 3, 6 or 9 digits that hold a clock's nanoseconds.
    const at = BigInt(Date.parse("2026-12-02T12:00:00Z")) * 1_000_000n;
    const cases: Array<[bigint, string]> = [
      [123_456_789n, "2026-12-02T12:00:30.123456789+00:00"],
      [123_456_000n, "2026-12-02T12:00:30.123456+00:00"],
      [120_000_000n, "2026-12-02T12:00:30.120+00:00"],
    ];
    for (const [nanos, expected] of cases)
      assert.equal(completionTime(finished(0, 61), 2, at + nanos), expected);
  },
  "eviction-api-clone": () => {
    const pod = buildPod({
      deletionTimestamp: "2026-12-02T12:00:00Z",
      conditions: [disruptionTarget("EvictionByEvictionAPI")],
    });
    const triage = triageDeleteBy(pod, KWOK_USER);
    assert.ok("candidate" in triage && triage.candidate.judgement.detail === "EvictionByEvictionAPI");
  },
  "taint-eviction-clone": () => {
    const pod = buildPod({ conditions: [disruptionTarget("DeletionByTaintManager")] });
    const triage = triageDeleteBy(pod, NODE_CONTROLLER_USER);
    assert.ok("candidate" in triage && triage.candidate.judgement.detail === "DeletionByTaintManager");
  },
  "clone-name": () => {
    assert.deepEqual([buildCloneName("web"), buildCloneName("web-clone-1")], ["web-clone-1", "web-clone-2"]);
    const clone = buildClone(buildPod({ name: "web-clone-1" }), rootOwnerRef());
    assert.equal(clone.metadata?.annotations?.["static.simkube.io/original-owner"], "web-clone-1");
  },
  "no-patch-on-delete": async () => {
    const w = rescheduleWorld();
    const replica = w.replica();
    const review = await replica.handle(buildDeleteReview({ pod: w.pod, user: "alice" }));
    await replica.settled();
    assert.deepEqual(w.created, ["the-pod-clone-1"], "the delete was judged an interruption");
    assert.equal(review.response?.allowed, true);
    assert.equal(review.response?.patch, undefined);
  },
  "create-failure-policy": () => {
    assert.equal(webhooks().create.failurePolicy, "Fail");
  },
  "create-rules": () => {
    const { config, create } = webhooks();
    assert.equal(config.webhooks?.[0], create);
    assert.ok(create.name.startsWith("mutate-create."));
    assert.deepEqual(create.rules, [
      {
        apiGroups: [""],
        apiVersions: ["v1"],
        operations: ["CREATE", "UPDATE"],
        resources: ["pods", "pods/status"],
        scope: "Namespaced",
      },
    ]);
  },
  "match-conditions": () => {
    const { create, del } = webhooks();
    assert.deepEqual(create.matchConditions, [
      { name: "virtual-namespaces-only", expression: "object.metadata.namespace.startsWith('virtual-')" },
    ]);
    assert.deepEqual(del.matchConditions?.[0], {
      name: "virtual-namespaces-only",
      expression: "oldObject.metadata.namespace.startsWith('virtual-')",
    });
  },
  "match-policy-reinvocation": () => {
    const { create, del } = webhooks();
    for (const hook of [create, del]) {
      assert.deepEqual([hook.matchPolicy, hook.reinvocationPolicy], ["Equivalent", "Never"]);
    }
  },
};

// ---------------------------------------------------------------------------------------------------------

describe("docs/differences-from-simkube.md against the code", () => {
  it("every row of its tables has a check here, and every check a row", () => {
    assert.deepEqual(tableIds("differences").sort(), Object.keys(DIFFERENCES).sort());
    assert.deepEqual(tableIds("same").sort(), Object.keys(SAME).sort());
  });

  it("every row has one section; a difference says what SimKube does, with a source, what we do and why", () => {
    const found = sections();
    const targets = linkTargets();
    const ids = [...tableIds("differences"), ...tableIds("same")];
    assert.equal(new Set(ids).size, ids.length, "ids are unique");
    assert.deepEqual([...found.keys()].sort(), [...ids].sort(), "one section per row, no other");
    for (const [id, text] of found) {
      const refs = [...text.matchAll(/\]\[([a-z0-9]+)\]/g)].map((m) => m[1] ?? "");
      for (const ref of refs) assert.ok(targets.has(ref), `${id}: link [${ref}] is not defined`);
      const cited = refs.some((ref) => targets.get(ref)?.startsWith(SIMKUBE_SOURCE));
      assert.ok(cited || text.includes("(#the-comparison-run)"), `${id}: no source for SimKube's side`);
      if (id in DIFFERENCES) {
        for (const part of ["**SimKube**", "**simkube-fn**", "**Why**"])
          assert.ok(text.includes(part), `${id}: no ${part}`);
      }
    }
  });

  describe("differences: simkube-fn's side", () => {
    for (const [id, check] of Object.entries(DIFFERENCES)) it(id, check);
  });

  describe("the same as SimKube", () => {
    for (const [id, check] of Object.entries(SAME)) it(id, check);
  });
});
