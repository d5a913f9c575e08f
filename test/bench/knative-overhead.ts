// npm run bench:knative: what Knative's data path adds per review, on `cluster up --knative` with the
// functions deployed as knative-functions.test.ts deploys them (`manifests --platform kind --ingress
// traefik`), kept warm (min-scale 1) so no cold start is in the figures. The same CREATE reviews go to
// mutate-create's one pod along four paths, in one run, the order reversed every round:
//   direct       the user container on the pod's IP (:8080), no Knative at all;
//   queue-proxy  the pod's queue-proxy (:8012), which then calls the container;
//   activator    an activator pod (:8012) with the revision's headers, then queue-proxy, then the container;
//   ingress      what the API server calls: Traefik's websecure (TLS, SNI and Host of the gateway Service),
//                the host-rewrite route, Traefik's cluster-local entry point, Knative's route, then the
//                revision's Service (the activator while it is in the path), queue-proxy, the container.
// Each path gets a sequential run (one review at a time: latency per review) and a burst (BENCH_KNATIVE_BURST
// reviews, BENCH_KNATIVE_CONCURRENCY at a time: throughput). The reviews are pods outside the simulation's
// namespaces, which mutate-create admits unchanged without an API call, so the handler's own work is the
// same small constant on every path and the differences are the hops. Prints one JSON object on stdout.

import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { TRAEFIK_PORTS } from "../../functions/local-cluster/knative/traefik.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { gatewayHost } from "../../knative/gateway-route.js";
import {
  caBundleInjected,
  deployThroughKnative,
  type KnativeDeployment,
  revisionPods,
  serviceName,
} from "../support/cluster/knative-functions.js";
import { eventually } from "../support/cluster/kube.js";
import { startKnativeBenchCluster } from "./bench-clusters.js";
import {
  measureRounds,
  type Target as OverheadTarget,
  overheadSettings,
  type Row,
  summary,
} from "./overhead-rows.js";

const SETTINGS = overheadSettings("BENCH_KNATIVE");
const QUEUE_PROXY_PORT = 8012;
const ACTIVATOR_PORT = 8012;
const PATHS = ["direct", "queue-proxy", "activator", "ingress"] as const;
type Target = OverheadTarget<(typeof PATHS)[number]>;

async function podIp(c: LocalCluster, namespace: string, selector: string): Promise<string> {
  const list = await c.admin.request<{ items: { status?: { phase?: string; podIP?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  const ip = list.items.find((p) => p.status?.phase === "Running")?.status?.podIP;
  if (!ip) throw new Error(`no running pod for ${selector} in ${namespace}`);
  return ip;
}

/**
 * The CA the API server trusts for the webhooks: cert-manager issued the ingress's certificate from the rendered
 * CA, and its cainjector put that CA into the webhook configuration (the cluster's own CA signed none of it).
 */
async function webhookTrust(c: LocalCluster, deployed: KnativeDeployment): Promise<string> {
  const webhook = deployed.objects.find((m) => m.kind === "MutatingWebhookConfiguration");
  const bundle = await caBundleInjected(c, webhook?.metadata?.name ?? "");
  return Buffer.from(bundle, "base64").toString("utf8");
}

async function targets(c: LocalCluster, deployed: KnativeDeployment): Promise<Target[]> {
  const options = deployed.options;
  const o = resolveOptions(options);
  const service = serviceName(options, "mutate-create");
  const [pod] = await eventually(
    "mutate-create's warm pod",
    async () => {
      const pods = await revisionPods(c, o.namespace, service);
      return pods.length === 1 && pods[0]?.ip ? pods : undefined;
    },
    120_000,
  );
  const ksvc = await c.admin.request<{ status: { latestReadyRevisionName: string } }>(
    "GET",
    `/apis/serving.knative.dev/v1/namespaces/${o.namespace}/services/${service}`,
  );
  const secretPath = `/${o.pathSecret ?? ""}`;
  const activator = await podIp(c, "knative-serving", "app=activator");
  const traefik = await podIp(c, o.traefikNamespace, "app.kubernetes.io/name=traefik");
  const host = gatewayHost(o, "mutate-create");
  return [
    { name: "direct", url: new URL(`http://${pod?.ip}:8080${secretPath}`) },
    { name: "queue-proxy", url: new URL(`http://${pod?.ip}:${QUEUE_PROXY_PORT}${secretPath}`) },
    {
      name: "activator",
      url: new URL(`http://${activator}:${ACTIVATOR_PORT}${secretPath}`),
      headers: {
        "Knative-Serving-Namespace": o.namespace,
        "Knative-Serving-Revision": ksvc.status.latestReadyRevisionName,
      },
    },
    {
      name: "ingress",
      url: new URL(`https://${traefik}:${TRAEFIK_PORTS.websecure}${secretPath}`),
      headers: { host },
      tls: { ca: await webhookTrust(c, deployed), servername: host },
    },
  ];
}

async function serverlessServiceMode(c: LocalCluster, namespace: string, revision: string): Promise<string> {
  const sks = await c.admin.request<{ spec: { mode: string } }>(
    "GET",
    `/apis/networking.internal.knative.dev/v1alpha1/namespaces/${namespace}/serverlessservices/${revision}`,
  );
  return sks.spec.mode;
}

/**
 * Paths on which no review got an answer: their figures are no figures, so the bench fails instead of printing
 * a summary with nulls (a wrong CA once made the ingress path all errors and the run still looked done).
 */
function failedPaths(rows: readonly Row[]): string[] {
  const answered = new Set(rows.filter((r) => r.errors < r.reviews).map((r) => r.path));
  return [...new Set(rows.map((r) => r.path))].filter((p) => !answered.has(p));
}

async function main(): Promise<void> {
  const { cluster: c, archive } = await startKnativeBenchCluster();
  try {
    const deployed = await deployThroughKnative(c, archive, 1);
    const all = await targets(c, deployed);
    const o = resolveOptions(deployed.options);
    const revision = all.find((t) => t.name === "activator")?.headers?.["Knative-Serving-Revision"] ?? "";
    const rows = await measureRounds(SETTINGS, all, (line) =>
      process.stderr.write(`  knative bench: ${line}\n`),
    );
    const mode = await serverlessServiceMode(c, o.namespace, revision);
    const replicas = (await revisionPods(c, o.namespace, serviceName(deployed.options, "mutate-create")))
      .length;
    process.stdout.write(
      `${JSON.stringify({ concurrency: SETTINGS.concurrency, serverlessServiceMode: mode, replicasAfter: replicas, summary: summary(rows, PATHS, "direct"), rows }, null, 2)}\n`,
    );
    const failed = failedPaths(rows);
    if (failed.length > 0)
      throw new Error(`every review failed on: ${failed.join(", ")} (see the rows above)`);
  } finally {
    await c.stop();
  }
}

await main();
