// npm run bench:openfaas: the teardown burst through OpenFaaS CE. On `cluster up --openfaas`, with the
// functions deployed as an OpenFaaS user deploys them (test/support/cluster/openfaas-functions.ts), N running
// bare pods on KWOK nodes are torn down as SimKube's driver does it (test/support/cluster/teardown-burst.ts),
// with reschedule-delete's webhook registered and without it, in pairs whose order flips every pair (with,
// without; without, with; ...), so a slower machine phase does not land on one side only. Per round: the
// teardown time, webhook errors in the API server's log, clones seen, reschedule-delete's ready replicas once
// a second, both function pods' restarts, and when the garbage collector reached the namespace. Then each
// pair's ratio (with / without) of the total, of the garbage collector's time per pod deleted one by one, and
// of the namespace's end (teardown-pairs.ts says why the total alone is mostly chance), with their spread.
// A failed round, or one with webhook errors, keeps the OpenFaaS pods' and the API server's logs.
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
import { keepOpenfaasLogs } from "../support/cluster/openfaas-logs.js";
import { runTeardownBurst } from "../support/cluster/teardown-burst.js";
import { startOpenfaasBenchCluster } from "./bench-clusters.js";
import { alternatingOrder, teardownSummary } from "./teardown-pairs.js";

const PODS = Number(process.env.BENCH_OPENFAAS_PODS ?? 2000);
const PAIRS = Number(process.env.BENCH_OPENFAAS_PAIRS ?? 3);

const log = (line: string) => process.stderr.write(`  openfaas teardown bench: ${line}\n`);

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
      order: alternatingOrder(PAIRS),
      replicas: deploymentReplicas(c, o.namespace, name),
      log,
      afterRound: async (round) => {
        log(`functions: ${(await functionStates(c, deployed)).join(" | ")}`);
        if (round.webhookErrors > 0)
          log(
            `logs kept in ${await keepOpenfaasLogs(c, `${round.webhookErrors} webhook errors in a round`)}`,
          );
      },
    }).catch(async (err: Error) => {
      log(`a round failed: ${err.stack ?? err.message}`);
      log(`functions: ${(await functionStates(c, deployed)).join(" | ")}`);
      log(`OpenFaaS and API server logs kept in ${await keepOpenfaasLogs(c, err.message)}`);
      throw err;
    });
    const summary = {
      pods: PODS,
      order: rounds.map((r) => (r.webhook ? "with" : "without")),
      teardownMs: rounds.map((r) => r.teardownMs),
      namespaceDeletingMs: rounds.map((r) => r.namespaceDeletingMs),
      podsUndeletedAtNamespaceDelete: rounds.map((r) => r.podsUndeletedAtNamespaceDelete),
      ...teardownSummary(rounds),
    };
    process.stdout.write(`${JSON.stringify({ summary, rounds }, null, 2)}\n`);
  } finally {
    await c.stop();
  }
}

await main();
