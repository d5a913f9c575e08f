// The teardown burst on a real control plane: 2,000 running bare pods on KWOK nodes in a virtual namespace,
// torn down as SimKube's driver does it (its SimulationRoot deleted in the foreground), once with
// reschedule-delete registered and once with no DELETE webhook, in one run. Reported: every pod gone, clones,
// webhook errors in the API server's log, and the teardown time ratio. Skipped when the control plane cannot
// be had (no Go). BENCH_CLUSTER_PODS overrides the pod count.

import { readFileSync } from "node:fs";
import path from "node:path";
import { resolveControlPlane } from "../../functions/local-cluster/binaries.js";
import { type LocalCluster, startLocalCluster } from "../../functions/local-cluster/cluster.js";
import {
  buildSimulationRoot,
  buildVirtualNamespace,
  ownerRefTo,
} from "../../functions/local-cluster/cluster-objects.js";
import type { RestClient } from "../../functions/local-cluster/rest.js";
import type { RescheduleStatsSnapshot } from "../../functions/reschedule-delete/stats.js";
import type { KubeObject } from "../../shared/kube-api.js";

const NAMESPACE = "virtual-burst";
const CREATE_CONCURRENCY = 32;

export interface TeardownRound {
  webhook: boolean;
  pods: number;
  /** Root deleted (foreground) until no pod and no virtual namespace is left. */
  teardownMs: number;
  deleteReviews: number;
  clonesCreated: number;
  webhookErrors: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(
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

function webhookErrors(cluster: LocalCluster): number {
  const log = readFileSync(path.join(cluster.logDir, "kube-apiserver.log"), "utf8");
  return log.split("\n").filter((line) => /failed calling webhook/.test(line)).length;
}

async function runningPods(admin: RestClient): Promise<number> {
  const list = await admin.request<{ items: { status?: { phase?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${NAMESPACE}/pods`,
  );
  return list.items.filter((p) => p.status?.phase === "Running").length;
}

/** A fresh driver root (the previous one was torn down), its virtual namespace, and `count` running bare pods. */
async function populate(cluster: LocalCluster, count: number): Promise<KubeObject> {
  const admin = cluster.admin;
  const root = await admin.request<KubeObject>(
    "POST",
    "/apis/simkube.io/v1/simulationroots",
    buildSimulationRoot(cluster.simulation),
  );
  await admin.request("POST", "/api/v1/namespaces", buildVirtualNamespace(NAMESPACE, root, cluster.simName));
  await until(
    "the default ServiceAccount",
    async () => {
      try {
        await admin.request("GET", `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default`);
        return true;
      } catch {
        return false;
      }
    },
    60_000,
  );
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      if (i % 250 === 0) process.stderr.write(`  cluster teardown bench: creating pod ${i}/${count}\n`);
      await admin.request("POST", `/api/v1/namespaces/${NAMESPACE}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `burst-${i}`, ownerReferences: [ownerRefTo(root)] },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      });
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
  await until(
    `${count} pods Running`,
    async () => {
      const running = await runningPods(admin);
      process.stderr.write(`\r  cluster teardown bench: ${running}/${count} pods Running`);
      return running === count;
    },
    600_000,
  );
  process.stderr.write("\n");
  return root;
}

async function tearDown(
  cluster: LocalCluster,
  root: KubeObject,
  webhook: boolean,
  pods: number,
): Promise<TeardownRound> {
  const fn = cluster.functions["reschedule-delete"];
  const before = fn.stats() as RescheduleStatsSnapshot;
  const errorsBefore = webhookErrors(cluster);
  const t0 = Date.now();
  await cluster.admin.request("DELETE", `/apis/simkube.io/v1/simulationroots/${root.metadata?.name}`, {
    propagationPolicy: "Foreground",
  });
  await until(
    "every pod and the virtual namespace gone",
    async () => {
      try {
        await cluster.admin.request("GET", `/api/v1/namespaces/${NAMESPACE}`);
        return false;
      } catch {
        return true;
      }
    },
    900_000,
  );
  const teardownMs = Date.now() - t0;
  await sleep(1_000);
  const after = fn.stats() as RescheduleStatsSnapshot;
  return {
    webhook,
    pods,
    teardownMs,
    deleteReviews: after.reviews - before.reviews,
    clonesCreated: after.clones.created - before.clones.created,
    webhookErrors: webhookErrors(cluster) - errorsBefore,
  };
}

/** Takes reschedule-delete out of the MutatingWebhookConfiguration (mutate-create stays). */
async function dropDeleteWebhook(admin: RestClient): Promise<void> {
  const path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
  const list = await admin.request<{ items: { metadata: { name: string }; webhooks: { name: string }[] }[] }>(
    "GET",
    path,
  );
  for (const config of list.items) {
    config.webhooks = config.webhooks.filter((w) => !w.name.startsWith("reschedule-delete."));
    await admin.request("PUT", `${path}/${config.metadata.name}`, config);
  }
  await sleep(2_000); // the API server's informer picks the change up well within this
}

async function removeDriverRoot(cluster: LocalCluster): Promise<void> {
  const name = cluster.root.metadata?.name ?? "";
  await cluster.admin.request("DELETE", `/apis/simkube.io/v1/simulationroots/${name}`, {
    propagationPolicy: "Foreground",
  });
  await until(
    "the first root gone",
    async () => {
      try {
        await cluster.admin.request("GET", `/apis/simkube.io/v1/simulationroots/${name}`);
        return false;
      } catch {
        return true;
      }
    },
    120_000,
  );
}

export async function benchClusterTeardown(): Promise<Record<string, unknown>> {
  const pods = Number(process.env.BENCH_CLUSTER_PODS ?? 2000);
  // BENCH_CLUSTER_PODS=0: leave the real control plane out (minutes) when only the servers are compared.
  if (pods === 0) return { skipped: "BENCH_CLUSTER_PODS=0" };
  let binaries: Awaited<ReturnType<typeof resolveControlPlane>>;
  try {
    binaries = await resolveControlPlane({ searchFrom: [process.cwd()], buildOutput: "inherit" });
  } catch (err) {
    return { skipped: (err as Error).message };
  }
  const cluster = await startLocalCluster({ binaries, reschedule: true, logLevel: "warn" });
  try {
    await removeDriverRoot(cluster);
    const rounds: TeardownRound[] = [];
    rounds.push(await tearDown(cluster, await populate(cluster, pods), true, pods));
    await dropDeleteWebhook(cluster.admin);
    rounds.push(await tearDown(cluster, await populate(cluster, pods), false, pods));
    const [withHook, without] = rounds as [TeardownRound, TeardownRound];
    return { rounds, ratio: withHook.teardownMs / without.teardownMs };
  } finally {
    await cluster.stop();
  }
}
