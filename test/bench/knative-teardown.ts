// npm run bench:knative-teardown: what the DELETE webhook costs the teardown of a Simulation that does not ask
// for rescheduling, through Knative. On `cluster up --knative`, the functions are deployed as a user deploys one
// deployment for every simulation (`manifests --platform kind --ingress traefik`, no --sim-name, so
// reschedule-delete and its DELETE webhook by default), and the Simulation gets its own sk-<sim>-mutatepods
// (`manifests webhook --sim-name`); the Simulation sets no rescheduleInterruptedBarePods. Each round creates
// BENCH_TEARDOWN_PODS running bare KWOK pods under a fresh SimulationRoot and deletes the root in the foreground,
// as SimKube's driver ends a run, timed until the virtual namespace is gone. Rounds come in pairs, one with the
// DELETE webhook and one without it (taken out of the configuration, as `--no-reschedule` renders it), the
// first of a pair alternating (with, without, without, with, ...), so a slower or faster phase of the machine
// does not land on one side only. reschedule-delete scales to zero between rounds (scale-down delay 0 s), so
// every round with the webhook starts it cold, as the teardown after a quiet run does. Reported per round:
// the time, webhook errors in the API server's log, clones, and reschedule-delete's replicas once a second;
// then the ratio with/without of each pair and of the medians. One JSON object on stdout.

import { resolveOptions } from "../../knative/deployment-options.js";
import { buildSimulationWebhookConfiguration, type DeploymentOptions } from "../../knative/manifests.js";
import {
  caBundleInjected,
  deployThroughKnative,
  revisionPods,
  serviceName,
} from "../support/cluster/knative-functions.js";
import { replaceObject } from "../support/cluster/kube.js";
import { type BurstRound, runTeardownBurst } from "../support/cluster/teardown-burst.js";
import { startKnativeBenchCluster } from "./bench-clusters.js";
import { alternatingOrder, teardownSummary } from "./teardown-pairs.js";

const PODS = Number(process.env.BENCH_TEARDOWN_PODS ?? 2000);
const PAIRS = Number(process.env.BENCH_TEARDOWN_PAIRS ?? 5);
const progress = (line: string) => process.stderr.write(`  knative teardown bench: ${line}\n`);

/** The deployment as `manifests` renders it for every simulation: no Simulation bound, no reschedule flag. */
function everySimulationDefaults(options: DeploymentOptions): DeploymentOptions {
  const { rescheduleInterruptedBarePods: _flag, simName: _sim, ...rest } = options;
  return rest;
}

async function main(): Promise<void> {
  const { cluster: c, archive } = await startKnativeBenchCluster({
    everySimulation: true,
    reschedule: false,
  });
  try {
    const deployed = await deployThroughKnative(c, archive, 0, everySimulationDefaults);
    const o = resolveOptions(deployed.options);
    if (!o.functions.includes("reschedule-delete"))
      throw new Error("the every-simulation rendering has no reschedule-delete: the default is not on");
    const perSimulation = buildSimulationWebhookConfiguration({ ...deployed.options, simName: c.simName });
    if ((perSimulation.webhooks ?? []).length !== 2)
      throw new Error("manifests webhook --sim-name rendered no DELETE webhook by default");
    await replaceObject(c, perSimulation);
    await caBundleInjected(c, perSimulation.metadata?.name ?? "");
    progress(`deployed through Knative in ${deployed.deployMs} ms; ${PAIRS} pairs of ${PODS} pods`);
    const rescheduleService = serviceName(deployed.options, "reschedule-delete");
    const rounds: BurstRound[] = await runTeardownBurst(c, {
      pods: PODS,
      order: alternatingOrder(PAIRS),
      replicas: () => revisionPods(c, o.namespace, rescheduleService).then((p) => p.length),
      log: progress,
    });
    const result = { pods: PODS, pairs: PAIRS, summary: teardownSummary(rounds), rounds };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await c.stop();
  }
}

await main();
