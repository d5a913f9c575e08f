// npm run bench:knative-cold: pod CREATEs from zero through Knative, each taken apart. `cluster up --knative`
// with the functions deployed as knative-functions.test.ts deploys them (`manifests --platform kind --ingress
// traefik`, the default image, the autoscaler's window and grace at Knative's 6 s minimum). Each cycle waits
// until mutate-create has no pod at all (a draining pod may still answer), then creates one simulation pod
// through the API server, which calls mutate-create through Traefik and, at zero, Knative's activator. Per cycle:
//   created     the create sent → mutate-create's pod first listed (the activator asked the autoscaler for a
//               pod, the autoscaler scaled the Deployment, the ReplicaSet made the pod)
//   started     → the function's process started (scheduling, sandbox, network, queue-proxy, the container)
//   listening   → `serve` listening (Node and the bundle loaded, everything built)
//   answered    → the create answered (queue-proxy's and the activator's probes found the pod ready, the
//               activator handed the review over, the review itself, the way back); of it, `review` is the
//               review's own time in the function (its latency histogram's sum: the pod's only review)
// and, beside them, when the pod first showed Ready (kubelet's probe of queue-proxy; the activator probes pods
// itself, so this may come after the answer). The process's start and listening come from the function itself:
// GET /<secret>/stats's uptimeSeconds and the simkube_fn_cold_start_seconds gauge of GET /metrics, read from
// the pod right after the answer; the pod's appearance and readiness from listing pods every POLL_MS.
// BENCH_KNATIVE_COLD_CYCLES cycles (default 20). Prints one line per cycle, then p50 / p99 / max per piece.
// BENCH_KNATIVE_COLD_CPU_REQUEST: the same again with another CPU request, to see what the pod's CPU share on a
// busy node does to each piece.

import type { V1Pod } from "@kubernetes/client-node";
import { percentile } from "../../functions/cli/loadtest/load.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { deployThroughKnative, revisionPods, serviceName } from "../support/cluster/knative-functions.js";
import { barePod, clientsFor, createVirtualNamespace, eventually } from "../support/cluster/kube.js";
import { startKnativeBenchCluster } from "./bench-clusters.js";

const CYCLES = Number(process.env.BENCH_KNATIVE_COLD_CYCLES ?? 20);
const POLL_MS = 20;
const NS = "virtual-cold";
/**
 * BENCH_KNATIVE_COLD_CPU_REQUEST (e.g. 1): also BENCH_KNATIVE_COLD_CYCLES cycles with the container's CPU
 * request at that (`manifests --cpu-request`; rendered: 100m), in blocks of 5 alternating with the rendered one.
 */
const CPU_REQUEST = process.env.BENCH_KNATIVE_COLD_CPU_REQUEST?.trim() || undefined;
const BLOCK = 5;

interface PodSighting {
  /** When a pod of the revision was first listed. */
  createdAt?: number;
  /** When it was first listed Ready. */
  readyAt?: number;
  ip?: string;
}

interface ListedPod {
  metadata: { name: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** Lists the revision's pods every POLL_MS until stopped, noting when one first appeared and was Ready. */
function watchPods(c: LocalCluster, namespace: string, service: string) {
  const seen: PodSighting = {};
  let stopped = false;
  const selector = encodeURIComponent(`serving.knative.dev/service=${service}`);
  const poll = async () => {
    while (!stopped) {
      const list = await c.admin.request<{ items: ListedPod[] }>(
        "GET",
        `/api/v1/namespaces/${namespace}/pods?labelSelector=${selector}`,
      );
      const now = Date.now();
      const [pod] = list.items;
      if (pod) {
        seen.createdAt ??= now;
        if (pod.status?.podIP) seen.ip = pod.status.podIP;
        if (pod.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True"))
          seen.readyAt ??= now;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  const done = poll();
  return {
    seen,
    /** Stops once the pod was seen Ready, or after `graceMs`. */
    async stop(graceMs: number): Promise<PodSighting> {
      const deadline = Date.now() + graceMs;
      while (seen.readyAt === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      stopped = true;
      await done;
      return seen;
    },
  };
}

/** GET on the pod's own port (the user container, no Knative), with the time halfway through the request. */
async function fromPod(ip: string, pathname: string): Promise<{ text: string; at: number }> {
  const t0 = Date.now();
  const res = await fetch(`http://${ip}:8080${pathname}`);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${pathname} on ${ip}: ${res.status} ${text.slice(0, 200)}`);
  return { text, at: (t0 + Date.now()) / 2 };
}

interface Cycle {
  createdMs: number;
  startedMs: number;
  listeningMs: number;
  answeredMs: number;
  /** The review's own time in the function (part of answeredMs). */
  reviewMs: number;
  /** From the create sent until the pod was listed Ready; undefined if not within the grace. */
  readyMs?: number;
  totalMs: number;
}

const PIECES = ["createdMs", "startedMs", "listeningMs", "answeredMs", "reviewMs", "totalMs"] as const;

function checkMutated(pod: V1Pod): void {
  if (pod.spec?.nodeSelector?.type !== "virtual") {
    throw new Error(`${pod.metadata?.name} was not mutated: ${JSON.stringify(pod.spec?.nodeSelector)}`);
  }
}

/**
 * Until Knative has scaled mutate-create to zero, then until no pod is left at all: the ones still draining
 * (about 30 s each, and a draining pod may still answer) are deleted at once, so a cycle takes seconds.
 */
async function atZero(c: LocalCluster, namespace: string, service: string): Promise<void> {
  await eventually(
    "mutate-create scaled to zero",
    async () => (await revisionPods(c, namespace, service)).length === 0,
    180_000,
  );
  for (const pod of await revisionPods(c, namespace, service, true)) {
    await c.admin
      .request("DELETE", `/api/v1/namespaces/${namespace}/pods/${pod.name}?gracePeriodSeconds=0`)
      .catch(() => undefined); // already gone
  }
  await eventually(
    "no mutate-create pod left at all",
    async () => (await revisionPods(c, namespace, service, true)).length === 0,
    60_000,
  );
  // A pod deleted at once may still run on the node for a moment, its token no longer valid; the activator
  // must not hand it the next review (it would be denied: Unauthorized). Its private Endpoints say when it is out.
  await eventually(
    "no address left in mutate-create's private Endpoints",
    async () => (await privateAddresses(c, namespace, service)) === 0,
    60_000,
  );
}

/** Addresses, ready or not, in the Endpoints of the service's revisions' private Services (what the activator reads). */
async function privateAddresses(c: LocalCluster, namespace: string, service: string): Promise<number> {
  const selector = encodeURIComponent(
    `serving.knative.dev/service=${service},networking.internal.knative.dev/serviceType=Private`,
  );
  const list = await c.admin.request<{
    items: { subsets?: { addresses?: unknown[]; notReadyAddresses?: unknown[] }[] }[];
  }>("GET", `/api/v1/namespaces/${namespace}/endpoints?labelSelector=${selector}`);
  return list.items
    .flatMap((e) => e.subsets ?? [])
    .reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
}

async function cycle(c: LocalCluster, i: number, namespace: string, service: string, secret: string) {
  await atZero(c, namespace, service);
  const core = clientsFor(c.kubeconfig).core;
  const watch = watchPods(c, namespace, service);
  const t0 = Date.now();
  const created = await core.createNamespacedPod({ namespace: NS, body: barePod(c, `cold-${i}`) });
  const answeredAt = Date.now();
  checkMutated(created);
  const seen = await watch.stop(5_000);
  if (!seen.ip || seen.createdAt === undefined) throw new Error(`cycle ${i}: mutate-create's pod not seen`);
  const stats = await fromPod(seen.ip, `/${secret}/stats`);
  const uptime = (JSON.parse(stats.text) as { uptimeSeconds: number }).uptimeSeconds;
  const metrics = await fromPod(seen.ip, "/metrics");
  const coldStart = Number(/^simkube_fn_cold_start_seconds\{[^}]*\} (\S+)$/m.exec(metrics.text)?.[1]);
  if (!Number.isFinite(uptime) || !Number.isFinite(coldStart)) throw new Error(`cycle ${i}: no uptime`);
  const reviewSeconds = [
    ...metrics.text.matchAll(/^simkube_fn_admission_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
  ]
    .map((m) => Number(m[1]))
    .reduce((a, b) => a + b, 0);
  const startedAt = stats.at - uptime * 1000;
  const listeningAt = startedAt + coldStart * 1000;
  const result: Cycle = {
    createdMs: seen.createdAt - t0,
    startedMs: startedAt - seen.createdAt,
    listeningMs: listeningAt - startedAt,
    answeredMs: answeredAt - listeningAt,
    reviewMs: reviewSeconds * 1000,
    totalMs: answeredAt - t0,
  };
  if (seen.readyAt !== undefined) result.readyMs = seen.readyAt - t0;
  return result;
}

interface KnativeService {
  metadata: { generation?: number };
  spec: { template: { spec: { containers: { resources?: { requests?: Record<string, string> } }[] } } };
  status?: {
    observedGeneration?: number;
    latestReadyRevisionName?: string;
    latestCreatedRevisionName?: string;
  };
}

/** The Knative Service's CPU request, `undefined` as rendered (100m); waits for its new revision to be Ready. */
async function setCpuRequest(c: LocalCluster, namespace: string, service: string, cpu: string | undefined) {
  const url = `/apis/serving.knative.dev/v1/namespaces/${namespace}/services/${service}`;
  const ksvc = await c.admin.request<KnativeService>("GET", url);
  const [container] = ksvc.spec.template.spec.containers;
  if (!container?.resources?.requests) throw new Error(`${service} has no resource requests`);
  container.resources.requests.cpu = cpu ?? "100m";
  const updated = await c.admin.request<KnativeService>("PUT", url, ksvc);
  await eventually(
    `${service}'s revision with cpu request ${cpu ?? "100m"} Ready`,
    async () => {
      const now = await c.admin.request<KnativeService>("GET", url);
      const status = now.status;
      return (
        status?.observedGeneration === updated.metadata.generation &&
        status?.latestReadyRevisionName !== undefined &&
        status.latestReadyRevisionName === status.latestCreatedRevisionName
      );
    },
    180_000,
  );
}

const ms = (n: number | undefined) => (n === undefined ? "-" : String(Math.round(n)));

function printSummary(cycles: Cycle[]): void {
  console.log("\n| piece | p50 ms | p99 ms | max ms |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const piece of [...PIECES, "readyMs" as const]) {
    const values = cycles.map((x) => x[piece]).filter((v): v is number => v !== undefined);
    const sorted = values.sort((a, b) => a - b);
    const cells = [percentile(sorted, 50), percentile(sorted, 99), sorted.at(-1)].map(ms);
    console.log(`| ${piece.replace(/Ms$/, "")} | ${cells.join(" | ")} |`);
  }
}

async function main(): Promise<void> {
  const { cluster: c, archive } = await startKnativeBenchCluster();
  try {
    const deployed = await deployThroughKnative(c, archive, 0);
    const o = resolveOptions(deployed.options);
    const service = serviceName(deployed.options, "mutate-create");
    await createVirtualNamespace(c, clientsFor(c.kubeconfig).core, NS);
    console.log(
      `bench:knative-cold: ${CYCLES} cycles${CPU_REQUEST ? ` as rendered and ${CYCLES} with cpu request ${CPU_REQUEST}` : ""}, each from no pod at all; times in ms from the create sent`,
    );
    console.log(
      "cycle | created | +started | +listening | +answered | (of it the review) | total | pod Ready (kubelet)",
    );
    const variants = [undefined, ...(CPU_REQUEST ? [CPU_REQUEST] : [])];
    const cycles = new Map<string | undefined, Cycle[]>(variants.map((v) => [v, []]));
    for (let i = 0; i < CYCLES * variants.length; i++) {
      const variant = variants[Math.floor(i / BLOCK) % variants.length];
      if (variants.length > 1 && i % BLOCK === 0) await setCpuRequest(c, o.namespace, service, variant);
      const r = await cycle(c, i, o.namespace, service, o.pathSecret ?? "");
      cycles.get(variant)?.push(r);
      const cells = [r.createdMs, r.startedMs, r.listeningMs, r.answeredMs, r.reviewMs, r.totalMs, r.readyMs];
      console.log(`${i + 1} | ${cells.map(ms).join(" | ")}${variant ? ` | cpu request ${variant}` : ""}`);
    }
    for (const [variant, list] of cycles) {
      console.log(`\n${variant ? `cpu request ${variant}` : "as rendered"}: ${list.length} cycles`);
      printSummary(list);
    }
  } finally {
    await c.stop();
  }
}

// Under the test runner (NODE_TEST_CONTEXT set), as every file under dist/test/ may be, it does nothing.
if (!process.env.NODE_TEST_CONTEXT) await main();
