// `simkube-fn cluster up` as a library: a real local control plane (etcd, kube-apiserver, kube-controller-manager
// with service-account credentials, kube-scheduler, KWOK) with SimKube's CRDs, a Simulation and its driver's
// SimulationRoot, virtual nodes, and both functions registered as its webhooks by the project's own manifest
// builders (url mode, the run's CA as caBundle), guarded as in production unless asked not to be (security.ts).
// stop() ends every process it started and removes its files.
// This file orders the steps; cluster-plane.ts starts the processes, cluster-resources.ts and
// cluster-accounts.ts create the API objects, cluster-settings.ts renders what they need without I/O.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { resolveOptions } from "../../knative/deployment-options.js";
import {
  buildSimulationWebhookConfiguration,
  buildWebhookConfiguration,
  type DeploymentOptions,
} from "../../knative/manifests.js";
import { podReadEnvironment } from "../../knative/pod-reads.js";
import { rescheduleServedEnvironment } from "../../knative/webhook-endpoints.js";
import { FUNCTION_NAMES, type FunctionName } from "../../shared/base/index.js";
import { loadConfig } from "../../shared/config/index.js";
import { applyAccounts } from "./cluster-accounts.js";
import { startNodeWorkloads, startPlane } from "./cluster-plane.js";
import { applyCrds, createSimulation, registerWebhooks, startKwokNodes } from "./cluster-resources.js";
import { deploymentOptions, functionEnvironment } from "./cluster-settings.js";
import type { LocalCluster, LocalClusterOptions, Run, Setup } from "./cluster-types.js";
import { type LocalFunction, type RecordedReview, serveFunction } from "./functions.js";
import { type Janitor, startJanitor } from "./janitor.js";
import type { ManagedProcess } from "./processes.js";
import { cgroupRootName, type PreparedNode, prepareRealNode } from "./real-node/real-node.js";

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const t0 = Date.now();
  const dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-cluster-"));
  const processes: ManagedProcess[] = [];
  const served: LocalFunction[] = [];
  const nodes: PreparedNode[] = [];
  const janitors: Janitor[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const close of closers) await close();
    for (const fn of served.reverse()) await fn.stop();
    try {
      for (const node of nodes) await node.stop();
    } finally {
      for (const p of processes.reverse()) await p.stop();
      await rm(dir, { recursive: true, force: true });
      for (const janitor of janitors) await janitor.close();
    }
  };
  try {
    if (options.realNode || options.knative || options.certManager || options.openfaas)
      nodes.push(await prepareRealNode(dir));
    janitors.push(
      startJanitor(
        dir,
        nodes.map((node) => cgroupRootName(node.namespaces)),
      ),
    );
    return await bringUp(options, { dir, processes, served, closers, node: nodes[0] }, stop, t0);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function bringUp(
  options: LocalClusterOptions,
  run: Run,
  stop: () => Promise<void>,
  t0: number,
): Promise<LocalCluster> {
  const { processes, served, node } = run;
  const { s, plane, timings, webhookClient, certificates } = await startPlane(options, run);
  const { admin, simName, pki, dir } = s;
  const nodeNames = await startKwokNodes(admin, options, plane.kwokKubeconfig, dir, processes);
  timings.nodesReady = Date.now() - t0;
  const { realNode, knative, certManager, openfaas } = await startNodeWorkloads(
    options,
    { s, plane, node, certificates, closers: run.closers },
    timings,
    t0,
  );

  await applyCrds(admin);
  const sim = await createSimulation(s, options);
  const deployment = deploymentOptions(s, options);
  const { driverKubeconfig, functionKubeconfigs } = await applyAccounts(s, deployment);

  const reviews: RecordedReview[] = [];
  const recorded = options.recordReviews ? reviews : undefined;
  const functions = await serveFunctions(s, options, deployment, functionKubeconfigs, recorded);
  served.push(...Object.values(functions));
  const webhooks = options.everySimulation
    ? buildSimulationWebhookConfiguration({ ...deployment, simName })
    : buildWebhookConfiguration(deployment);
  await registerWebhooks(s, webhooks, functions["mutate-create"]);
  timings.ready = Date.now() - t0;
  return {
    dir,
    server: plane.server,
    kubeconfig: plane.adminKubeconfig,
    driverKubeconfig,
    functionKubeconfigs,
    simName,
    deployment,
    virtualNamespacePrefix: s.prefix,
    simulation: sim.simulation,
    root: sim.root,
    functions,
    reviews,
    caCertPem: pki.caCertPem,
    admin,
    logDir: path.join(dir, "logs"),
    timings,
    nodeNames,
    security: s.security,
    ...(webhookClient ? { webhookClient } : {}),
    ...(realNode ? { realNode } : {}),
    ...(knative ? { knative } : {}),
    ...(certManager ? { certManager } : {}),
    ...(openfaas ? { openfaas } : {}),
    stop,
  };
}

async function serveFunctions(
  s: Setup,
  o: LocalClusterOptions,
  deployment: DeploymentOptions,
  kubeconfigs: Record<FunctionName, string>,
  record: RecordedReview[] | undefined,
): Promise<Record<FunctionName, LocalFunction>> {
  const env = functionEnvironment(s, o);
  const resolved = resolveOptions(deployment);
  const functions = {} as Record<FunctionName, LocalFunction>;
  for (const name of FUNCTION_NAMES) {
    functions[name] = await serveFunction({
      name,
      // As the rendered manifests set them: POD_READ_ROLE and POD_READ_ACCOUNT for reschedule-delete in narrow
      // mode, RESCHEDULE_SERVED for mutate-create.
      config: loadConfig(
        { ...env, ...podReadEnvironment(resolved, name), ...rescheduleServedEnvironment(resolved, name) },
        { port: "0" },
      ),
      kubeconfig: kubeconfigs[name],
      port: s.ports[name],
      logFile: path.join(s.dir, "logs", `${name}.log`),
      logLevel: o.logLevel ?? "info",
      ...(record ? { onReview: (review: RecordedReview) => record.push(review) } : {}),
    });
  }
  return functions;
}
