// `simkube-fn cluster up [--sim-name NAME] [--reschedule] [--trace FILE] [--insecure-dev] [--real-node]
// [--knative | --openfaas] [--cert-manager | --no-cert-manager] [--pod-reads cluster|virtual-namespaces] [--json]`
// (--knative: Knative Serving on the real node, built once by controlplane/knative/build-serving.sh; implies
// --real-node and, unless --no-cert-manager, --cert-manager: cert-manager on the real node, built once by
// controlplane/cert-manager/build.sh; --openfaas: OpenFaaS CE's gateway and faas-netes on the real node, built
// once by controlplane/openfaas/build.sh, implies --real-node):
// a real local control plane whose webhooks are the two functions (functions/local-cluster/), guarded as in
// production unless --insecure-dev. Prints one JSON line once everything is ready, stays up until SIGINT or
// SIGTERM, then stops every process it started and removes its files.

import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { POD_READS, type PodReads } from "../../../knative/options.js";
import { DNS1123_LABEL_RULE, isDns1123Label } from "../../../shared/base/index.js";
import { resolveControlPlane } from "../../local-cluster/binaries.js";
import { resolveCertManager } from "../../local-cluster/cert-manager/build.js";
import { startLocalCluster } from "../../local-cluster/cluster.js";
import { DEFAULT_SIM_NAME, type LocalCluster } from "../../local-cluster/cluster-types.js";
import { resolveKnativeServing } from "../../local-cluster/knative/serving-build.js";
import { resolveOpenfaas } from "../../local-cluster/openfaas/build.js";
import { argumentErrorMessage } from "../parse-error.js";
import { UsageError } from "../usage-error.js";

export interface ClusterCommandContext {
  /** Where to look for the project's controlplane/ (the working directory, the CLI's own location). */
  searchFrom: string[];
  /** SIMKUBE_FN_CONTROLPLANE_BIN: prebuilt binaries, no build. */
  binDir?: string;
}

/** A usage error of `cluster`. */
export class ClusterUsageError extends UsageError {
  constructor(message: string) {
    super(message, "cluster");
  }
}

/** The line a script reads: everything needed to reach the cluster and the functions. */
export function readyLine(cluster: LocalCluster): Record<string, unknown> {
  return {
    kubeconfig: cluster.kubeconfig,
    server: cluster.server,
    simName: cluster.simName,
    virtualNamespacePrefix: cluster.virtualNamespacePrefix,
    functions: Object.fromEntries(Object.values(cluster.functions).map((fn) => [fn.name, fn.url])),
    driverKubeconfig: cluster.driverKubeconfig,
    logDir: cluster.logDir,
    startupMs: cluster.timings.ready,
    security: cluster.security,
    ...(cluster.realNode
      ? {
          realNode: {
            name: cluster.realNode.name,
            containerdSocket: cluster.realNode.containerdSocket,
            podCidr: cluster.realNode.namespaces.addresses.podCidr,
            readyMs: cluster.realNode.readyMs,
          },
        }
      : {}),
    ...(cluster.knative
      ? { knative: { namespace: cluster.knative.namespace, readyMs: cluster.knative.readyMs } }
      : {}),
    ...(cluster.certManager
      ? { certManager: { namespace: cluster.certManager.namespace, readyMs: cluster.certManager.readyMs } }
      : {}),
    ...(cluster.openfaas
      ? {
          openfaas: {
            namespace: cluster.openfaas.namespace,
            functionNamespace: cluster.openfaas.functionNamespace,
            gateway: cluster.openfaas.gatewayUrl,
            webhookGateway: cluster.openfaas.webhookGatewayUrl,
            readyMs: cluster.openfaas.readyMs,
          },
        }
      : {}),
  };
}

function humanSummary(cluster: LocalCluster): string {
  return [
    `Local cluster ready in ${((cluster.timings.ready ?? 0) / 1000).toFixed(1)} s: Simulation ${cluster.simName}, virtual namespace ${cluster.virtualNamespacePrefix}-default, nodes ${cluster.nodeNames.join(", ")}.`,
    `  export KUBECONFIG=${cluster.kubeconfig}`,
    `  kubectl get nodes; kubectl -n ${cluster.virtualNamespacePrefix}-default get pods`,
    cluster.security === "production"
      ? "  Security: production (path secret, client certificate, pod-create policy)."
      : "  Security: insecure-dev: any local process may post reviews to the functions; no pod-create policy.",
    ...(cluster.openfaas
      ? [
          `  OpenFaaS gateway ${cluster.openfaas.gatewayUrl} (TLS for webhooks: --webhook-gateway-url ${cluster.openfaas.webhookGatewayUrl});`,
          "  password: kubectl -n openfaas get secret basic-auth -o jsonpath='{.data.basic-auth-password}' | base64 -d",
        ]
      : []),
    `  Logs: ${cluster.logDir}. Ctrl-C stops everything and removes ${cluster.dir}.`,
    "",
  ].join("\n");
}

const CLUSTER_FLAGS = {
  "sim-name": { type: "string" },
  reschedule: { type: "boolean" },
  trace: { type: "string" },
  "real-node": { type: "boolean" },
  knative: { type: "boolean" },
  "cert-manager": { type: "boolean" },
  "no-cert-manager": { type: "boolean" },
  openfaas: { type: "boolean" },
  json: { type: "boolean" },
  "insecure-dev": { type: "boolean" },
  "pod-reads": { type: "string" },
} as const;

function parseFlags(args: string[]) {
  try {
    return parseArgs({ args, options: CLUSTER_FLAGS, allowPositionals: true });
  } catch (err) {
    throw new ClusterUsageError(argumentErrorMessage(err));
  }
}

/** The flags, every one checked before anything starts: a bad one would otherwise surface minutes later. */
export function parseClusterArgs(args: string[]) {
  const { values, positionals } = parseFlags(args);
  if (positionals.length !== 1 || positionals[0] !== "up")
    throw new ClusterUsageError("cluster takes one subcommand: up");
  const simName = values["sim-name"];
  if (simName !== undefined && !isDns1123Label(simName))
    throw new ClusterUsageError(
      `--sim-name "${simName}" is not a valid Simulation name: ${DNS1123_LABEL_RULE}`,
    );
  const podReads = values["pod-reads"];
  if (podReads !== undefined && !(POD_READS as readonly string[]).includes(podReads))
    throw new ClusterUsageError(`--pod-reads must be one of ${POD_READS.join(", ")}, got "${podReads}"`);
  if (values["cert-manager"] && values["no-cert-manager"])
    throw new ClusterUsageError("--cert-manager and --no-cert-manager exclude each other");
  if (values.knative && values.openfaas)
    throw new ClusterUsageError("--knative and --openfaas each serve the functions: choose one");
  const tracePath = values.trace === undefined ? undefined : path.resolve(values.trace);
  if (tracePath !== undefined && !existsSync(tracePath))
    throw new ClusterUsageError(`--trace: no such file: ${tracePath}`);
  // cert-manager issues the certificates every rendered Knative platform trusts, so --knative brings it.
  const certManager = values["cert-manager"] ?? (values.knative === true && !values["no-cert-manager"]);
  return { values, tracePath, podReads: podReads as PodReads | undefined, certManager };
}

export async function runClusterCommand(args: string[], context: ClusterCommandContext): Promise<number> {
  const { values, tracePath, podReads, certManager } = parseClusterArgs(args);

  const binaries = await resolveControlPlane({
    searchFrom: context.searchFrom,
    ...(context.binDir ? { binDir: context.binDir } : {}),
  });
  const knative = values.knative ? await resolveKnativeServing(context.searchFrom) : undefined;
  const certManagerBuild = certManager ? await resolveCertManager(context.searchFrom) : undefined;
  const openfaas = values.openfaas ? await resolveOpenfaas(context.searchFrom) : undefined;
  const cluster = await startLocalCluster({
    binaries,
    simName: values["sim-name"] ?? DEFAULT_SIM_NAME,
    reschedule: values.reschedule ?? false,
    realNode: values["real-node"] ?? false,
    ...(knative ? { knative } : {}),
    ...(certManagerBuild ? { certManager: certManagerBuild } : {}),
    ...(openfaas ? { openfaas } : {}),
    ...(tracePath ? { tracePath } : {}),
    insecureDev: values["insecure-dev"] ?? false,
    ...(podReads ? { podReads } : {}),
  });
  if (!values.json) process.stdout.write(humanSummary(cluster));
  process.stdout.write(`${JSON.stringify(readyLine(cluster))}\n`);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    cluster.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`simkube-fn: stopping the cluster failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return -1; // stays up
}
