// npm run bench:openfaas: the teardown burst through OpenFaaS CE. On `cluster up --openfaas`, with the
// functions deployed as an OpenFaaS user deploys them (test/support/cluster/openfaas-functions.ts), N running
// bare pods on KWOK nodes are torn down as SimKube's driver does it (test/support/cluster/teardown-burst.ts),
// with reschedule-delete's webhook registered and without it, in pairs whose order flips every pair (with,
// without; without, with; ...), so a slower machine phase does not land on one side only. Per round: the
// teardown time, webhook errors in the API server's log, clones seen, reschedule-delete's ready replicas once
// a second, and both function pods' restarts. Then each pair's ratio (with / without) and their spread.
// BENCH_OPENFAAS_PODS (2000) and BENCH_OPENFAAS_PAIRS (3) override the sizes. One JSON object on stdout.

import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { describePod, functionPods } from "../../functions/local-cluster/openfaas/function-status.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import type { DeployedFunction } from "../../knative/options.js";
import {
  deployThroughOpenfaas,
  type OpenfaasDeployment,
  openfaasFunctionName,
} from "../support/cluster/openfaas-functions.js";
import { type BurstRound, runTeardownBurst } from "../support/cluster/teardown-burst.js";
import { startOpenfaasBenchCluster } from "./bench-clusters.js";

const PODS = Number(process.env.BENCH_OPENFAAS_PODS ?? 2000);
const PAIRS = Number(process.env.BENCH_OPENFAAS_PAIRS ?? 3);

const log = (line: string) => process.stderr.write(`  openfaas teardown bench: ${line}\n`);

/** with, without; without, with; ...: each pair's order flipped. */
export function alternatedOrder(pairs: number): boolean[] {
  return Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? [true, false] : [false, true])).flat();
}

/** Each pair's teardown time with the webhook over without it, and the median, lowest and highest. */
export function pairRatios(rounds: readonly BurstRound[]) {
  const ratios: number[] = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const pair = [rounds[i], rounds[i + 1]] as [BurstRound, BurstRound];
    const withHook = pair.find((r) => r.webhook);
    const without = pair.find((r) => !r.webhook);
    if (withHook && without)
      ratios.push(Math.round((withHook.teardownMs / without.teardownMs) * 1000) / 1000);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { ratios, median, lowest: sorted[0], highest: sorted.at(-1) };
}

function deploymentReplicas(c: LocalCluster, namespace: string, name: string): () => Promise<number> {
  return async () => {
    const d = await c.admin.request<{ status?: { readyReplicas?: number } }>(
      "GET",
      `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
    );
    return d.status?.readyReplicas ?? 0;
  };
}

/** Each function's pods, one line each (state, restarts): shows a restart or an OOM kill between rounds. */
async function functionStates(c: LocalCluster, deployed: OpenfaasDeployment): Promise<string[]> {
  const o = resolveOptions(deployed.options);
  const lines: string[] = [];
  for (const fn of o.functions as readonly DeployedFunction[])
    for (const pod of await functionPods(c.admin, o.namespace, openfaasFunctionName(deployed.options, fn)))
      lines.push(describePod(pod));
  return lines;
}

async function main(): Promise<void> {
  const { cluster: c, images } = await startOpenfaasBenchCluster();
  try {
    const deployed = await deployThroughOpenfaas(c, images);
    const o = resolveOptions(deployed.options);
    const name = openfaasFunctionName(deployed.options, "reschedule-delete");
    log(`deployed; functions: ${(await functionStates(c, deployed)).join(" | ")}`);
    const rounds = await runTeardownBurst(c, {
      pods: PODS,
      order: alternatedOrder(PAIRS),
      replicas: deploymentReplicas(c, o.namespace, name),
      log,
      afterRound: async () => {
        log(`functions: ${(await functionStates(c, deployed)).join(" | ")}`);
      },
    }).catch(async (err: Error) => {
      log(`a round failed: ${err.stack ?? err.message}`);
      log(`functions: ${(await functionStates(c, deployed)).join(" | ")}`);
      throw err;
    });
    const summary = {
      pods: PODS,
      order: rounds.map((r) => (r.webhook ? "with" : "without")),
      teardownMs: rounds.map((r) => r.teardownMs),
      webhookErrors: rounds.reduce((n, r) => n + r.webhookErrors, 0),
      clonesSeen: rounds.reduce((n, r) => n + r.clonesSeen, 0),
      peakReplicas: Math.max(...rounds.flatMap((r) => r.replicas.map(([, n]) => n))),
      withOverWithout: pairRatios(rounds),
    };
    process.stdout.write(`${JSON.stringify({ summary, rounds }, null, 2)}\n`);
  } finally {
    await c.stop();
  }
}

await main();
