// The teardown burst on a real control plane: 2,000 running bare pods on KWOK nodes in a virtual namespace,
// torn down as SimKube's driver does it (its SimulationRoot deleted in the foreground), once with
// reschedule-delete registered and once with no DELETE webhook, in one run. Reported: every pod gone, clones,
// webhook errors in the API server's log, and the teardown time ratio. Skipped when the control plane cannot
// be had (no Go). BENCH_CLUSTER_PODS overrides the pod count.

import { resolveControlPlane } from "../../functions/local-cluster/binaries.js";
import { startLocalCluster } from "../../functions/local-cluster/cluster.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import type { RescheduleStatsSnapshot } from "../../functions/reschedule-delete/stats.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  BURST_NAMESPACE,
  deleteWebhookSwitch,
  populate,
  removeDriverRoot,
  until,
  webhookErrorCount,
} from "../support/cluster/teardown-burst.js";

const NAMESPACE = BURST_NAMESPACE;

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
const progress = (line: string) => process.stderr.write(`  cluster teardown bench: ${line}\n`);

async function tearDown(
  cluster: LocalCluster,
  root: KubeObject,
  webhook: boolean,
  pods: number,
): Promise<TeardownRound> {
  const fn = cluster.functions["reschedule-delete"];
  const before = fn.stats() as RescheduleStatsSnapshot;
  const errorsBefore = webhookErrorCount(cluster);
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
    webhookErrors: webhookErrorCount(cluster) - errorsBefore,
  };
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
    rounds.push(await tearDown(cluster, await populate(cluster, pods, progress), true, pods));
    await deleteWebhookSwitch(cluster.admin)(false);
    rounds.push(await tearDown(cluster, await populate(cluster, pods, progress), false, pods));
    const [withHook, without] = rounds as [TeardownRound, TeardownRound];
    return { rounds, ratio: withHook.teardownMs / without.teardownMs };
  } finally {
    await cluster.stop();
  }
}
