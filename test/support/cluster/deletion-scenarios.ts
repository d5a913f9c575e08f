// Every way a simulation pod gets deleted on a real control plane, with what reschedule-delete was sent for
// each (its DELETE reviews: users, request.name, deletionTimestamp, DisruptionTarget, phase, dryRun) and the
// clones that exist afterwards. Clones: one per interruption (a user's delete, eviction, taint eviction, pod
// GC), none for teardown (namespace deletion, the garbage collector), a dry run or the driver's own deletes.

import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { ownerRefTo } from "../../../functions/local-cluster/cluster-objects.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { startHungWebhook } from "./hung-webhook.js";
import {
  clonesOf,
  createVirtualNamespace,
  eventually,
  readPod,
  runningBarePod,
  waitPodGone,
} from "./kube.js";
import { collapseRepeats, deleteReviewsOfPod } from "./reviews.js";
import type { ClusterCase } from "./suite.js";
import { type MeasuredPath, requestsTo, type World, type WorldRef } from "./world.js";

export const DELETION_NAMESPACE = "virtual-deletions";
/** The node the taint and node-deletion paths use (the others stay schedulable). */
const LAST_NODE = "virtual-node-3";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Observed extends MeasuredPath {
  pod: V1Pod;
}

interface ObserveOptions {
  nodeName?: string;
  /** Default true: wait until the pod is gone. */
  untilGone?: boolean;
  goneTimeoutMs?: number;
  namespace?: string;
  root?: KubeObject;
}

/** Runs a pod, deletes it with `act`, and records what reschedule-delete saw and which clones exist. */
async function observeDeletion(
  w: World,
  path: string,
  name: string,
  act: (pod: V1Pod) => Promise<unknown>,
  o: ObserveOptions = {},
): Promise<Observed> {
  const namespace = o.namespace ?? DELETION_NAMESPACE;
  const core = w.admin.core;
  const pod = await runningBarePod(w.cluster, core, namespace, name, {
    ...(o.nodeName ? { nodeName: o.nodeName } : {}),
    ...(o.root ? { root: o.root } : {}),
  });
  const from = w.cluster.reviews.length;
  const t0 = Date.now();
  await act(pod);
  if (o.untilGone ?? true) await waitPodGone(core, namespace, name, o.goneTimeoutMs ?? 30_000);
  const ms = Date.now() - t0;
  await sleep(700); // reviews still in flight when the pod disappeared
  const uid = pod.metadata?.uid ?? "";
  const rows = deleteReviewsOfPod(requestsTo(w, "reschedule-delete", from), uid, w.roles);
  const statusUpdates = requestsTo(w, "mutate-create", from)
    .filter(
      (r) =>
        r.operation === "UPDATE" &&
        r.subResource === "status" &&
        (r.oldObject as V1Pod | undefined)?.metadata?.uid === uid,
    )
    .map((r) => `${r.userInfo?.username ?? ""}`);
  // A deleted namespace lists as empty.
  const clones = (await clonesOf(core, namespace, name)).length;
  const measured: MeasuredPath = { path, rows, clones, statusUpdates, ms };
  w.measured.push(measured);
  return { ...measured, pod };
}

/** Clones are removed by the driver (never an interruption), so they do not clone again. */
async function removeClones(w: World, name: string): Promise<void> {
  for (const clone of await clonesOf(w.admin.core, DELETION_NAMESPACE, name)) {
    await w.driver.core.deleteNamespacedPod({
      name: clone.metadata?.name ?? "",
      namespace: DELETION_NAMESPACE,
      gracePeriodSeconds: 0,
    });
  }
}

const firstPhase = (o: Observed) => collapseRepeats(o.rows.filter((r) => !r.deletionTimestamp));
/** Final-phase rows of a pod without DisruptionTarget: the "final-phase-only-when-disrupted" condition sends none. */
const undisruptedFinal = (o: Observed) => o.rows.filter((r) => r.deletionTimestamp && !r.disruptionTarget);

async function setNodeTaints(
  w: World,
  name: string,
  change: (
    taints: { key: string; effect: string; value?: string }[],
  ) => { key: string; effect: string; value?: string }[],
): Promise<void> {
  await eventually(`taints of ${name} replaced`, async () => {
    const node = await w.admin.core.readNode({ name });
    node.spec = { ...node.spec, taints: change(node.spec?.taints ?? []) };
    await w.admin.core.replaceNode({ name, body: node });
    return true;
  });
}

/** Points the reschedule-delete webhook of the cluster's configuration at `url`; returns its timeoutSeconds. */
async function pointDeleteWebhookAt(w: World, url: string): Promise<number> {
  const api = w.admin.admission;
  const list = await api.listMutatingWebhookConfiguration();
  const config = list.items.find((c) => c.webhooks?.some((h) => h.name.startsWith("reschedule-delete.")));
  const hook = config?.webhooks?.find((h) => h.name.startsWith("reschedule-delete."));
  assert.ok(config?.metadata?.name && hook, "the reschedule-delete webhook is registered");
  hook.clientConfig.url = url;
  await api.replaceMutatingWebhookConfiguration({ name: config.metadata.name, body: config });
  return hook.timeoutSeconds ?? 10;
}

export function deletionCases(ref: WorldRef): ClusterCase[] {
  const core = () => ref.get().admin.core;
  return [
    {
      name: "deletions: a graceful delete of a running bare pod by a user: first-phase review from the user, KWOK's final ones not sent (match condition), one clone",
      run: async () => {
        const w = ref.get();
        await createVirtualNamespace(w.cluster, core(), DELETION_NAMESPACE);
        const o = await observeDeletion(w, "graceful delete (user)", "graceful", (pod) =>
          core().deleteNamespacedPod({ name: pod.metadata?.name ?? "", namespace: DELETION_NAMESPACE }),
        );
        assert.deepEqual(
          firstPhase(o).map((r) => [r.user, r.phase]),
          [["admin", "Running"]],
        );
        assert.deepEqual(undisruptedFinal(o), [], "the condition filters KWOK's final delete");
        assert.equal(o.clones, 1);
        await removeClones(w, "graceful");
      },
    },
    {
      name: "deletions: a dry-run delete is reviewed with dryRun and leaves the pod and no clone",
      run: async () => {
        const w = ref.get();
        const o = await observeDeletion(
          w,
          "dry-run delete (user)",
          "dry-run",
          (pod) =>
            core().deleteNamespacedPod({
              name: pod.metadata?.name ?? "",
              namespace: DELETION_NAMESPACE,
              dryRun: "All",
            }),
          { untilGone: false },
        );
        assert.ok(o.rows.length >= 1 && o.rows.every((r) => r.dryRun && r.user === "admin"));
        assert.equal((await readPod(core(), DELETION_NAMESPACE, "dry-run"))?.status?.phase, "Running");
        assert.equal(o.clones, 0);
        await w.driver.core.deleteNamespacedPod({
          name: "dry-run",
          namespace: DELETION_NAMESPACE,
          gracePeriodSeconds: 0,
        });
      },
    },
    {
      name: "deletions: a grace-0 force delete by a user is reviewed as the user's and makes one clone",
      run: async () => {
        const w = ref.get();
        const o = await observeDeletion(w, "force delete, grace 0 (user)", "forced", (pod) =>
          core().deleteNamespacedPod({
            name: pod.metadata?.name ?? "",
            namespace: DELETION_NAMESPACE,
            gracePeriodSeconds: 0,
          }),
        );
        // The storage delete (the user's, or KWOK's racing it) is final-phase: the condition filters it.
        assert.deepEqual(
          firstPhase(o).map((r) => r.user),
          ["admin"],
        );
        assert.deepEqual(undisruptedFinal(o), []);
        assert.equal(o.clones, 1);
        await removeClones(w, "forced");
      },
    },
    {
      name: "deletions: the driver's own delete never reaches the function, in either phase (match conditions), and makes no clone",
      run: async () => {
        const w = ref.get();
        const o = await observeDeletion(w, "driver's delete", "driver-deleted", (pod) =>
          w.driver.core.deleteNamespacedPod({
            name: pod.metadata?.name ?? "",
            namespace: DELETION_NAMESPACE,
          }),
        );
        assert.deepEqual(o.rows, []);
        assert.equal(o.clones, 0);
      },
    },
    {
      name: "deletions: the eviction API sends no DELETE review of its own; KWOK's final reviews carry DisruptionTarget; one clone",
      run: async () => {
        const w = ref.get();
        const o = await observeDeletion(w, "eviction API (user)", "evicted", (pod) =>
          core().createNamespacedPodEviction({
            name: pod.metadata?.name ?? "",
            namespace: DELETION_NAMESPACE,
            body: {
              apiVersion: "policy/v1",
              kind: "Eviction",
              metadata: { name: pod.metadata?.name ?? "", namespace: DELETION_NAMESPACE },
            },
          }),
        );
        assert.equal(firstPhase(o).length, 0);
        assert.ok(
          o.rows.length > 0 &&
            o.rows.every((r) => r.user === "kwok" && r.disruptionTarget === "EvictionByEvictionAPI"),
        );
        assert.equal(o.clones, 1);
        await removeClones(w, "evicted");
      },
    },
    {
      name: "deletions: with reschedule-delete down, deletes still succeed (failurePolicy Ignore)",
      run: async () => {
        const w = ref.get();
        const fn = w.cluster.functions["reschedule-delete"];
        await fn.stop();
        try {
          const o = await observeDeletion(w, "graceful delete, reschedule-delete down", "unguarded", (pod) =>
            core().deleteNamespacedPod({ name: pod.metadata?.name ?? "", namespace: DELETION_NAMESPACE }),
          );
          assert.equal(o.rows.length, 0);
          assert.equal(o.clones, 0);
          assert.ok(o.ms < 10_000, `the delete took ${o.ms} ms`);
        } finally {
          await fn.start();
        }
      },
    },
    {
      name: "deletions: a reschedule-delete that never answers holds a delete for the webhook's timeoutSeconds, then lets it through",
      run: async () => {
        const w = ref.get();
        const hung = await startHungWebhook(w.cluster.dir);
        const timeoutSeconds = await pointDeleteWebhookAt(w, hung.url);
        try {
          await runningBarePod(w.cluster, core(), DELETION_NAMESPACE, "held");
          // The configuration reaches the API server through an informer: probe until the hung endpoint is called.
          await eventually(
            "the API server to call the hung endpoint",
            async () => {
              await core().deleteNamespacedPod({
                name: "held",
                namespace: DELETION_NAMESPACE,
                dryRun: "All",
              });
              return hung.received() > 0;
            },
            60_000,
          );
          const t0 = Date.now();
          await core().deleteNamespacedPod({ name: "held", namespace: DELETION_NAMESPACE });
          const ms = Date.now() - t0;
          w.measured.push({
            path: "graceful delete, reschedule-delete hung",
            rows: [],
            clones: 0,
            statusUpdates: [],
            ms,
          });
          assert.ok(
            ms >= timeoutSeconds * 1000 - 100 && ms < timeoutSeconds * 1000 + 3_000,
            `the delete took ${ms} ms`,
          );
        } finally {
          await pointDeleteWebhookAt(w, w.cluster.functions["reschedule-delete"].url);
          await hung.close();
        }
        await waitPodGone(core(), DELETION_NAMESPACE, "held", 60_000);
        assert.equal((await clonesOf(core(), DELETION_NAMESPACE, "held")).length, 0);
      },
    },
    {
      name: "deletions: a NoExecute taint on its node: the taint manager's DisruptionTarget, its delete, one clone",
      run: async () => {
        const w = ref.get();
        const taint = { key: "simkube-fn.test/evict", value: "now", effect: "NoExecute" };
        const o = await observeDeletion(
          w,
          "NoExecute taint (taint-eviction controller)",
          "tainted",
          async () => {
            await setNodeTaints(w, LAST_NODE, (taints) => [...taints, taint]);
          },
          { nodeName: LAST_NODE },
        );
        await setNodeTaints(w, LAST_NODE, (taints) => taints.filter((t) => t.key !== taint.key));
        assert.deepEqual(
          firstPhase(o).map((r) => [r.user, r.disruptionTarget]),
          [["node-controller", "DeletionByTaintManager"]],
        );
        assert.deepEqual(undisruptedFinal(o), []);
        assert.equal(o.clones, 1);
        await removeClones(w, "tainted");
      },
    },
    {
      name: "deletions: namespace deletion sends no review at all (match conditions); no clone",
      run: async () => {
        const w = ref.get();
        const namespace = "virtual-doomed";
        await createVirtualNamespace(w.cluster, core(), namespace);
        const o = await observeDeletion(
          w,
          "namespace deletion (namespace controller)",
          "in-doomed-namespace",
          () => core().deleteNamespace({ name: namespace }),
          { namespace, goneTimeoutMs: 60_000 },
        );
        // Neither the DeleteCollection's first phase, nor its repeats over the terminating pod, nor KWOK's final delete.
        assert.deepEqual(o.rows, []);
        assert.equal(o.clones, 0);
      },
    },
    {
      name: "deletions: a SimulationRoot deleted in the foreground sends no review at all (match conditions); no clone",
      run: async () => {
        const w = ref.get();
        const root = (await w.admin.custom.createClusterCustomObject({
          group: "simkube.io",
          version: "v1",
          plural: "simulationroots",
          body: {
            apiVersion: "simkube.io/v1",
            kind: "SimulationRoot",
            metadata: {
              name: `sk-${w.cluster.simName}-second-root`,
              ownerReferences: [ownerRefTo(w.cluster.simulation)],
            },
            spec: {},
          },
        })) as KubeObject;
        const o = await observeDeletion(
          w,
          "SimulationRoot deleted in the foreground (garbage collector)",
          "of-second-root",
          () =>
            w.admin.custom.deleteClusterCustomObject({
              group: "simkube.io",
              version: "v1",
              plural: "simulationroots",
              name: root.metadata?.name ?? "",
              propagationPolicy: "Foreground",
            }),
          { root },
        );
        // Neither the garbage collector's first phase nor KWOK's final delete.
        assert.deepEqual(o.rows, []);
        assert.equal(o.clones, 0);
      },
    },
    {
      name: "deletions: deleting its node: pod GC marks it Failed with DisruptionTarget and force-deletes it; one clone",
      timeoutMs: 180_000,
      run: async () => {
        const w = ref.get();
        const o = await observeDeletion(
          w,
          "node deleted (pod GC)",
          "orphaned",
          () => core().deleteNode({ name: LAST_NODE }),
          {
            nodeName: LAST_NODE,
            goneTimeoutMs: 120_000,
          },
        );
        const rows = collapseRepeats(o.rows);
        assert.ok(
          rows.length > 0 &&
            rows.every(
              (r) =>
                r.user === "pod-garbage-collector" &&
                r.phase === "Failed" &&
                r.disruptionTarget === "DeletionByPodGC",
            ),
        );
        assert.equal(o.clones, 1);
        await removeClones(w, "orphaned");
      },
    },
  ];
}
