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

import path from "node:path";
import { fileURLToPath } from "node:url";
import { percentile, runLoad } from "../../functions/cli/loadtest/load.js";
import { resolveControlPlane } from "../../functions/local-cluster/binaries.js";
import { resolveCertManager } from "../../functions/local-cluster/cert-manager/build.js";
import { startLocalCluster } from "../../functions/local-cluster/cluster.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveKnativeServing } from "../../functions/local-cluster/knative/serving-build.js";
import { TRAEFIK_PORTS } from "../../functions/local-cluster/knative/traefik.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { gatewayHost } from "../../knative/gateway-route.js";
import { buildCreateReview } from "../support/builders.js";
import { buildImage } from "../support/cluster/function-pods.js";
import { deployThroughKnative, revisionPods, serviceName } from "../support/cluster/knative-functions.js";
import { eventually } from "../support/cluster/kube.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SEQUENTIAL = Number(process.env.BENCH_KNATIVE_SEQUENTIAL ?? 300);
const BURST = Number(process.env.BENCH_KNATIVE_BURST ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_KNATIVE_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_KNATIVE_ROUNDS ?? 4);
const QUEUE_PROXY_PORT = 8012;
const ACTIVATOR_PORT = 8012;

interface Target {
  name: "direct" | "queue-proxy" | "activator" | "ingress";
  url: URL;
  headers?: Record<string, string>;
  tls?: { ca: string; servername: string };
}

interface Row {
  path: Target["name"];
  round: number;
  mode: "sequential" | "burst";
  reviews: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  perSecond: number;
}

function reviews(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const review = buildCreateReview({
      pod: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `bench-${i}`, namespace: "default" },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
      },
    });
    return { body: Buffer.from(JSON.stringify(review)), uid: review.request?.uid ?? "" };
  });
}

async function measure(t: Target, mode: Row["mode"], round: number): Promise<Row> {
  const count = mode === "sequential" ? SEQUENTIAL : BURST;
  const result = await runLoad({
    target: t.url,
    requests: reviews(count),
    concurrency: mode === "sequential" ? 1 : CONCURRENCY,
    timeoutMs: 600_000,
    requestTimeoutMs: 30_000,
    ...(t.headers ? { headers: t.headers } : {}),
    ...(t.tls ? { tls: t.tls } : {}),
  });
  const round1 = (n: number) => Math.round(n * 100) / 100;
  return {
    path: t.name,
    round,
    mode,
    reviews: count,
    errors: result.errors,
    p50Ms: round1(percentile(result.latenciesMs, 50)),
    p99Ms: round1(percentile(result.latenciesMs, 99)),
    perSecond: Math.round((result.ok / result.durationMs) * 1000),
  };
}

async function podIp(c: LocalCluster, namespace: string, selector: string): Promise<string> {
  const list = await c.admin.request<{ items: { status?: { phase?: string; podIP?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  const ip = list.items.find((p) => p.status?.phase === "Running")?.status?.podIP;
  if (!ip) throw new Error(`no running pod for ${selector} in ${namespace}`);
  return ip;
}

async function targets(c: LocalCluster, options: Parameters<typeof resolveOptions>[0]): Promise<Target[]> {
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
      tls: { ca: c.caCertPem, servername: host },
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

function summary(rows: Row[]) {
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  const of = (p: Target["name"], mode: Row["mode"], key: "p50Ms" | "p99Ms" | "perSecond") =>
    median(rows.filter((r) => r.path === p && r.mode === mode).map((r) => r[key]));
  const out: Record<string, unknown> = {};
  for (const p of ["direct", "queue-proxy", "activator", "ingress"] as const) {
    out[p] = {
      sequentialP50Ms: of(p, "sequential", "p50Ms"),
      sequentialP99Ms: of(p, "sequential", "p99Ms"),
      burstPerSecond: of(p, "burst", "perSecond"),
      burstP99Ms: of(p, "burst", "p99Ms"),
      p50OverDirect:
        Math.round((of(p, "sequential", "p50Ms") / of("direct", "sequential", "p50Ms")) * 100) / 100,
      throughputOverDirect:
        Math.round((of(p, "burst", "perSecond") / of("direct", "burst", "perSecond")) * 100) / 100,
    };
  }
  return out;
}

async function main(): Promise<void> {
  const searchFrom = [process.cwd(), repoRoot];
  const binaries = await resolveControlPlane({ searchFrom, buildOutput: "inherit" });
  const knative = await resolveKnativeServing(searchFrom, "inherit");
  // cert-manager issues the functions' certificates the rendering trusts (deployThroughKnative).
  const certManager = await resolveCertManager(searchFrom, "inherit");
  const archive = await buildImage(repoRoot);
  const c = await startLocalCluster({
    binaries,
    realNode: true,
    reschedule: true,
    knative,
    certManager,
    logLevel: "warn",
  });
  try {
    const deployed = await deployThroughKnative(c, archive, 1);
    const all = await targets(c, deployed.options);
    const o = resolveOptions(deployed.options);
    const revision = all.find((t) => t.name === "activator")?.headers?.["Knative-Serving-Revision"] ?? "";
    const rows: Row[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? all : [...all].reverse();
      for (const t of order) {
        for (const mode of ["sequential", "burst"] as const) {
          const row = await measure(t, mode, round);
          process.stderr.write(`  knative bench: ${JSON.stringify(row)}\n`);
          rows.push(row);
        }
      }
    }
    const mode = await serverlessServiceMode(c, o.namespace, revision);
    const replicas = (await revisionPods(c, o.namespace, serviceName(deployed.options, "mutate-create")))
      .length;
    process.stdout.write(
      `${JSON.stringify({ concurrency: CONCURRENCY, serverlessServiceMode: mode, replicasAfter: replicas, summary: summary(rows), rows }, null, 2)}\n`,
    );
  } finally {
    await c.stop();
  }
}

await main();
