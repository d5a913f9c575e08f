// The teardown burst on the real control plane, as SimKube's driver ends a simulation: N running bare pods
// on KWOK nodes in a virtual namespace under a fresh SimulationRoot, the root deleted in the foreground,
// timed until the namespace is gone. Rounds with and without the DELETE webhook in one run, in the order
// given, so a slower or faster machine phase does not land on one side only. Used by
// test/cluster/knative-functions.test.ts (functions behind Knative) and the cluster teardown bench.

import {
  buildSimulationRoot,
  buildVirtualNamespace,
  ownerRefTo,
} from "../../../functions/local-cluster/cluster-objects.js";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import type { RestClient } from "../../../functions/local-cluster/rest.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { countersBetween, type WebhookCounters, webhookCounters } from "./apiserver-metrics.js";
import { webhookErrors } from "./teardown-scenario.js";

export const BURST_NAMESPACE = "virtual-burst";
const CREATE_CONCURRENCY = 32;
const WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 500,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** How many lines of the API server's log report a failed webhook call. */
export function webhookErrorCount(cluster: LocalCluster): number {
  return webhookErrors(cluster.logDir).length;
}

async function exists(admin: RestClient, url: string): Promise<boolean> {
  try {
    await admin.request("GET", url);
    return true;
  } catch {
    return false;
  }
}

async function runningPods(admin: RestClient): Promise<number> {
  const list = await admin.request<{ items: { status?: { phase?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${BURST_NAMESPACE}/pods`,
  );
  return list.items.filter((p) => p.status?.phase === "Running").length;
}

/** A fresh driver root, its virtual namespace, and `count` running bare pods. */
export async function populate(
  cluster: LocalCluster,
  count: number,
  log: (line: string) => void,
): Promise<KubeObject> {
  const admin = cluster.admin;
  const root = await admin.request<KubeObject>(
    "POST",
    "/apis/simkube.io/v1/simulationroots",
    buildSimulationRoot(cluster.simulation),
  );
  await admin.request(
    "POST",
    "/api/v1/namespaces",
    buildVirtualNamespace(BURST_NAMESPACE, root, cluster.simName),
  );
  await until(
    "the default ServiceAccount",
    () => exists(admin, `/api/v1/namespaces/${BURST_NAMESPACE}/serviceaccounts/default`),
    60_000,
  );
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await admin.request("POST", `/api/v1/namespaces/${BURST_NAMESPACE}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `burst-${i}`, ownerReferences: [ownerRefTo(root)] },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      });
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  await until(`${count} pods Running`, async () => (await runningPods(admin)) === count, 900_000, 2_000);
  log(`${count} pods created and Running in ${Date.now() - t0} ms`);
  return root;
}

/** Deletes the cluster's own driver root (and its namespaces) so the burst's roots are the only ones. */
export async function removeDriverRoot(cluster: LocalCluster): Promise<void> {
  const name = cluster.root.metadata?.name ?? "";
  await cluster.admin.request("DELETE", `/apis/simkube.io/v1/simulationroots/${name}`, {
    propagationPolicy: "Foreground",
  });
  await until(
    "the first root gone",
    async () => !(await exists(cluster.admin, `/apis/simkube.io/v1/simulationroots/${name}`)),
    180_000,
  );
}

interface WebhookConfig {
  metadata: { name: string; resourceVersion?: string };
  webhooks: { name: string }[];
}

/** Takes reschedule-delete out of every MutatingWebhookConfiguration, and puts it back. */
export function deleteWebhookSwitch(admin: RestClient): (on: boolean) => Promise<void> {
  const removed = new Map<string, { name: string }[]>();
  return async (on) => {
    const list = await admin.request<{ items: WebhookConfig[] }>("GET", WEBHOOKS);
    for (const config of list.items) {
      const deletes = config.webhooks.filter((w) => w.name.startsWith("reschedule-delete."));
      if (!on && deletes.length > 0) {
        removed.set(config.metadata.name, deletes);
        config.webhooks = config.webhooks.filter((w) => !deletes.includes(w));
      } else if (on && removed.has(config.metadata.name)) {
        config.webhooks = [...config.webhooks, ...(removed.get(config.metadata.name) ?? [])];
        removed.delete(config.metadata.name);
      } else continue;
      await admin.request("PUT", `${WEBHOOKS}/${config.metadata.name}`, config);
    }
    await sleep(2_000); // the API server's informer picks the change up well within this
  };
}

export interface BurstRound {
  webhook: boolean;
  pods: number;
  /** Root deleted (foreground) until the virtual namespace is gone. */
  teardownMs: number;
  /**
   * Root deleted until the namespace was first seen with a deletionTimestamp: when the garbage collector, which
   * works through the root's dependents (the namespace and every pod) in no set order, reached the namespace.
   */
  namespaceDeletingMs: number;
  /** Root deleted until no pod was left in the namespace. */
  podsGoneMs: number;
  /**
   * Pods with no deletionTimestamp yet when the namespace's was first seen: the ones the garbage collector had
   * not deleted one by one before it reached the namespace (the namespace controller deletes them).
   */
  podsUndeletedAtNamespaceDelete: number;
  webhookErrors: number;
  /**
   * The API server's own count, over the round, of its calls to reschedule-delete and of the DELETEs its
   * match conditions kept from it (kube-apiserver /metrics): with the webhook registered, exclusions show
   * it was evaluated.
   */
  deleteWebhook: WebhookCounters;
  /** Pods named <pod>-clone-* seen in the namespace while it was torn down. */
  clonesSeen: number;
  /** [seconds since the root's delete, reschedule-delete's replicas], once a second. */
  replicas: [number, number][];
  /** [seconds since the root's delete, pods left, of them terminating], once a second. */
  podsLeft: [number, number, number][];
}

interface NamespaceSample {
  /** The namespace exists and has a deletionTimestamp. */
  deleting: boolean;
  pods: number;
  terminating: number;
  clones: string[];
}

interface PodMeta {
  metadata: { name: string; deletionTimestamp?: string };
}

async function sampleNamespace(admin: RestClient): Promise<NamespaceSample> {
  const [ns, pods] = await Promise.all([
    admin
      .request<{ metadata?: { deletionTimestamp?: string } }>("GET", `/api/v1/namespaces/${BURST_NAMESPACE}`)
      .catch(() => undefined),
    admin
      .request<{ items: PodMeta[] }>("GET", `/api/v1/namespaces/${BURST_NAMESPACE}/pods`)
      .then((l) => l.items)
      .catch(() => [] as PodMeta[]),
  ]);
  return {
    deleting: Boolean(ns?.metadata?.deletionTimestamp),
    pods: pods.length,
    terminating: pods.filter((p) => p.metadata.deletionTimestamp).length,
    clones: pods.map((p) => p.metadata.name).filter((n) => n.includes("-clone-")),
  };
}

/** Samples the namespace and reschedule-delete's replicas once a second until stopped. */
function startSampler(admin: RestClient, replicasOf: () => Promise<number>, t0: number) {
  const clones = new Set<string>();
  const replicas: [number, number][] = [];
  const podsLeft: [number, number, number][] = [];
  let namespaceDeletingMs = -1;
  let podsGoneMs = -1;
  let podsUndeletedAtNamespaceDelete = -1;
  let done = false;
  const loop = (async () => {
    while (!done) {
      const [n, sample] = await Promise.all([replicasOf().catch(() => -1), sampleNamespace(admin)]);
      const ms = Date.now() - t0;
      const s = Math.round(ms / 1000);
      replicas.push([s, n]);
      podsLeft.push([s, sample.pods, sample.terminating]);
      for (const name of sample.clones) clones.add(name);
      if (sample.deleting && namespaceDeletingMs < 0) {
        namespaceDeletingMs = ms;
        podsUndeletedAtNamespaceDelete = sample.pods - sample.terminating;
      }
      if (sample.pods === 0 && podsGoneMs < 0) podsGoneMs = ms;
      await sleep(1_000);
    }
  })();
  return async () => {
    done = true;
    await loop;
    return { clones, replicas, podsLeft, namespaceDeletingMs, podsGoneMs, podsUndeletedAtNamespaceDelete };
  };
}

async function deleteWebhookCounters(admin: RestClient): Promise<WebhookCounters> {
  return webhookCounters(await admin.getText("/metrics"), "reschedule-delete.");
}

async function tearDown(
  cluster: LocalCluster,
  root: KubeObject,
  webhook: boolean,
  pods: number,
  replicasOf: () => Promise<number>,
): Promise<BurstRound> {
  const errorsBefore = webhookErrorCount(cluster);
  const countersBefore = await deleteWebhookCounters(cluster.admin);
  const t0 = Date.now();
  const stopSampler = startSampler(cluster.admin, replicasOf, t0);
  await cluster.admin.request("DELETE", `/apis/simkube.io/v1/simulationroots/${root.metadata?.name}`, {
    propagationPolicy: "Foreground",
  });
  await until(
    "the virtual namespace gone",
    async () => !(await exists(cluster.admin, `/api/v1/namespaces/${BURST_NAMESPACE}`)),
    900_000,
  );
  const teardownMs = Date.now() - t0;
  const sampled = await stopSampler();
  await sleep(1_000);
  return {
    webhook,
    pods,
    teardownMs,
    // A namespace gone between two samples: its delete was last seen no later than its end.
    namespaceDeletingMs: sampled.namespaceDeletingMs < 0 ? teardownMs : sampled.namespaceDeletingMs,
    podsGoneMs: sampled.podsGoneMs < 0 ? teardownMs : sampled.podsGoneMs,
    podsUndeletedAtNamespaceDelete: sampled.podsUndeletedAtNamespaceDelete,
    webhookErrors: webhookErrorCount(cluster) - errorsBefore,
    deleteWebhook: countersBetween(countersBefore, await deleteWebhookCounters(cluster.admin)),
    clonesSeen: sampled.clones.size,
    replicas: sampled.replicas,
    podsLeft: sampled.podsLeft,
  };
}

export interface BurstOptions {
  pods: number;
  /** Per round: with the DELETE webhook (true) or without. */
  order: readonly boolean[];
  /** reschedule-delete's current replica count. */
  replicas: () => Promise<number>;
  log: (line: string) => void;
  /** Called after each round (e.g. to log the function pods' state). */
  afterRound?: (round: BurstRound) => Promise<void>;
}

/** Runs the rounds in order; the DELETE webhook is registered again at the end. */
export async function runTeardownBurst(cluster: LocalCluster, o: BurstOptions): Promise<BurstRound[]> {
  const setDeleteWebhook = deleteWebhookSwitch(cluster.admin);
  await removeDriverRoot(cluster);
  const rounds: BurstRound[] = [];
  for (const webhook of o.order) {
    const root = await populate(cluster, o.pods, o.log);
    await setDeleteWebhook(webhook);
    const round = await tearDown(cluster, root, webhook, o.pods, o.replicas);
    const peak = Math.max(...round.replicas.map(([, n]) => n));
    const over = round.replicas.map(([s, n]) => `${s}s:${n}`).join(" ");
    o.log(
      `${webhook ? "with" : "without"} the DELETE webhook: ${round.pods} pods torn down in ${round.teardownMs} ms (namespace deleting at ${round.namespaceDeletingMs} ms with ${round.podsUndeletedAtNamespaceDelete} pods not yet deleted, pods gone at ${round.podsGoneMs} ms), ${round.webhookErrors} webhook errors, ${round.deleteWebhook.calls} calls to reschedule-delete and ${round.deleteWebhook.matchConditionExclusions} DELETEs its match conditions kept from it, ${round.clonesSeen} clones, reschedule-delete peak ${peak} replicas (${over})`,
    );
    rounds.push(round);
    await o.afterRound?.(round);
  }
  await setDeleteWebhook(true);
  return rounds;
}
