// npm run bench:knative-cold: pod CREATEs from zero through Knative, each taken apart. `cluster up --knative`
// with the functions deployed as knative-functions.test.ts deploys them (`manifests --platform kind --ingress
// traefik`, the default image, the autoscaler's window and grace at Knative's 6 s minimum). Each cycle waits
// until mutate-create has no pod at all (a draining pod may still answer), then creates one simulation pod
// through the API server, which calls mutate-create through Traefik and, at zero, Knative's activator. Per cycle:
//   created     the create sent → mutate-create's pod first listed (the activator asked the autoscaler for a
//               pod, the autoscaler scaled the Deployment, the ReplicaSet made the pod)
//   started     → the function's process started (scheduling, sandbox, network, the container), taken apart
//               from the listings and containerd's log (pod-start-pieces.ts): scheduled, the kubelet until it
//               asks for the sandbox (volumes), the sandbox, the function's container created and started; and
//               beside it queue-proxy's container (started after the function's) and the pod's IP listed
//   listening   → `serve` listening (Node and the bundle loaded, everything built)
//   answered    → the create answered (queue-proxy's and the activator's probes found the pod ready, the
//               activator handed the review over, the review itself, the way back); of it, `review` is the
//               review's own time in the function (its latency histogram's sum: the pod's only review)
// and, beside them, when the pod first showed Ready (kubelet's probe of queue-proxy; the activator probes pods
// itself, so this may come after the answer). The process's start and listening come from the function itself:
// GET /<secret>/stats's uptimeSeconds and the simkube_fn_cold_start_seconds gauge of GET /metrics, read from
// the pod right after the answer; the pod's appearance and readiness from listing pods every POLL_MS.
// BENCH_KNATIVE_COLD_CYCLES cycles (default 20). Prints one line per cycle, then p50 / p99 / max per piece.
// After each cycle a pause pod of each kind (pod-start-floor.ts) shows the node's floor under any pod's start.
// BENCH_KNATIVE_COLD_CPU_REQUEST / _QUEUE_CPU_REQUEST: the same again with another CPU request for the function
// / queue-proxy, to see what the pod's CPU share on a busy node does to each piece.

import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import path from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { percentile } from "../../functions/cli/loadtest/load.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { deployThroughKnative, revisionPods, serviceName } from "../support/cluster/knative-functions.js";
import { barePod, clientsFor, createVirtualNamespace, eventually } from "../support/cluster/kube.js";
import { startKnativeBenchCluster } from "./bench-clusters.js";
import { imageNodeRelease } from "./node-children.js";
import { createFloorNamespace, FLOOR_KINDS, type FloorStart, floorStart } from "./pod-start-floor.js";
import { type PodStart, podStartFromLog } from "./pod-start-log.js";
import { START_PIECES, type StartPieces, startPieces } from "./pod-start-pieces.js";
import { watchPods } from "./pod-watch.js";

const CYCLES = Number(process.env.BENCH_KNATIVE_COLD_CYCLES ?? 20);
const NS = "virtual-cold";
/**
 * BENCH_KNATIVE_COLD_CPU_REQUEST (e.g. 1): also BENCH_KNATIVE_COLD_CYCLES cycles with the container's CPU
 * request at that (`manifests --cpu-request`; rendered: 100m), in blocks of 5 alternating with the rendered one.
 */
const CPU_REQUEST = process.env.BENCH_KNATIVE_COLD_CPU_REQUEST?.trim() || undefined;
/**
 * BENCH_KNATIVE_COLD_QUEUE_CPU_REQUEST (e.g. 1): queue-proxy's CPU request in that other variant (the revision's
 * queue.sidecar.serving.knative.dev/cpu-resource-request; Knative's default: 25m), with or without the above.
 */
const QUEUE_CPU_REQUEST = process.env.BENCH_KNATIVE_COLD_QUEUE_CPU_REQUEST?.trim() || undefined;
const QUEUE_CPU_ANNOTATION = "queue.sidecar.serving.knative.dev/cpu-resource-request";

/** What the other variant changes in the Knative Service; empty as rendered. */
interface Variant {
  cpu?: string;
  queueCpu?: string;
}

const variantName = (v: Variant) =>
  [v.cpu && `cpu request ${v.cpu}`, v.queueCpu && `queue-proxy cpu request ${v.queueCpu}`]
    .filter(Boolean)
    .join(", ") || "as rendered";
const BLOCK = 5;

/** GET on the pod's own port (the user container, no Knative), with the time halfway through the request. */
async function fromPod(ip: string, pathname: string): Promise<{ text: string; at: number }> {
  const t0 = Date.now();
  const res = await fetch(`http://${ip}:8080${pathname}`);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${pathname} on ${ip}: ${res.status} ${text.slice(0, 200)}`);
  return { text, at: (t0 + Date.now()) / 2 };
}

interface Cycle {
  /** The container start ("started") taken apart: the listings and containerd's log. */
  start: StartPieces;
  /** Each container's create asked / created / started, in ms after the sandbox was ready. */
  containers: string;
  createdMs: number;
  startedMs: number;
  listeningMs: number;
  answeredMs: number;
  /** The review's own time in the function (part of answeredMs). */
  reviewMs: number;
  /**
   * The process's CPU time when read right after the answer (process_cpu_seconds_total: Node's start, the
   * review, the bench's GET /stats): set against listening + answered, how much of the wall time it ran.
   */
  cpuMs?: number;
  /** From the create sent until the pod was listed Ready; undefined if not within the grace. */
  readyMs?: number;
  totalMs: number;
}

const PIECES = [
  "createdMs",
  "startedMs",
  "listeningMs",
  "answeredMs",
  "reviewMs",
  "cpuMs",
  "totalMs",
] as const;

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
  const selector = encodeURIComponent(`serving.knative.dev/service=${service}`);
  const watch = watchPods(c, `/api/v1/namespaces/${namespace}/pods?labelSelector=${selector}`);
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
  const log = seen.name
    ? podStartFromLog(await readFile(path.join(c.logDir, "containerd.log"), "utf8"), seen.name)
    : undefined;
  const result: Cycle = {
    start: startPieces(seen, log),
    containers: containerTimes(log),
    createdMs: seen.createdAt - t0,
    startedMs: startedAt - seen.createdAt,
    listeningMs: listeningAt - startedAt,
    answeredMs: answeredAt - listeningAt,
    reviewMs: reviewSeconds * 1000,
    ...processCpu(metrics.text),
    totalMs: answeredAt - t0,
  };
  if (seen.readyAt !== undefined) result.readyMs = seen.readyAt - t0;
  return result;
}

function processCpu(metricsText: string): { cpuMs?: number } {
  const seconds = Number(/^process_cpu_seconds_total(?:\{[^}]*\})? (\S+)$/m.exec(metricsText)?.[1]);
  return Number.isFinite(seconds) ? { cpuMs: seconds * 1000 } : {};
}

function containerTimes(log: PodStart | undefined): string {
  const after = (t: number | undefined) =>
    ms(t === undefined || !log?.sandboxReady ? undefined : t - log.sandboxReady);
  return (log?.containers ?? [])
    .map((x) => `${x.name} ${after(x.createAsked)}/${after(x.created)}/${after(x.started)}`)
    .join(", ");
}

interface KnativeService {
  metadata: { generation?: number };
  spec: {
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { resources?: { requests?: Record<string, string> } }[] };
    };
  };
  status?: {
    observedGeneration?: number;
    latestReadyRevisionName?: string;
    latestCreatedRevisionName?: string;
  };
}

/** The Knative Service as the variant says (as rendered: 100m, no queue-proxy request); waits for its revision. */
async function setVariant(c: LocalCluster, namespace: string, service: string, variant: Variant) {
  const url = `/apis/serving.knative.dev/v1/namespaces/${namespace}/services/${service}`;
  const ksvc = await c.admin.request<KnativeService>("GET", url);
  const template = ksvc.spec.template;
  const [container] = template.spec.containers;
  if (!container?.resources?.requests) throw new Error(`${service} has no resource requests`);
  container.resources.requests.cpu = variant.cpu ?? "100m";
  const annotations = { ...template.metadata.annotations };
  if (variant.queueCpu) annotations[QUEUE_CPU_ANNOTATION] = variant.queueCpu;
  else delete annotations[QUEUE_CPU_ANNOTATION];
  template.metadata.annotations = annotations;
  const before = ksvc.status?.latestReadyRevisionName;
  const updated = await c.admin.request<KnativeService>("PUT", url, ksvc);
  // The same template (the first block, as rendered) makes no new generation and no new revision.
  if (updated.metadata.generation === ksvc.metadata.generation) return;
  await eventually(
    `${service}'s revision ${variantName(variant)} Ready`,
    async () => {
      const now = await c.admin.request<KnativeService>("GET", url);
      const status = now.status;
      // A new revision, not the old one still named in both fields before the new one is listed.
      return (
        status?.observedGeneration === updated.metadata.generation &&
        status?.latestReadyRevisionName !== undefined &&
        status.latestReadyRevisionName !== before &&
        status.latestReadyRevisionName === status.latestCreatedRevisionName
      );
    },
    180_000,
  );
}

const ms = (n: number | undefined) => (n === undefined ? "-" : String(Math.round(n)));

type Row = Partial<Record<string, number>>;

/** p50 / p99 / max of each key over the rows, as a markdown table. */
function printSummary(rows: Row[], keys: readonly string[]): void {
  console.log("\n| piece | p50 ms | p99 ms | max ms |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const key of keys) {
    const values = rows.map((x) => x[key]).filter((v): v is number => v !== undefined);
    const sorted = values.sort((a, b) => a - b);
    const cells = [percentile(sorted, 50), percentile(sorted, 99), sorted.at(-1)].map(ms);
    console.log(`| ${key.replace(/Ms$/, "")} | ${cells.join(" | ")} |`);
  }
}

const startCells = (p: StartPieces) => START_PIECES.map((k) => ms(p[k])).join(" | ");

/** One pause pod of each kind, in turns so neither always goes first. */
async function floorRound(c: LocalCluster, i: number, floors: Map<string, FloorStart[]>): Promise<void> {
  const kinds = i % 2 === 0 ? FLOOR_KINDS : [...FLOOR_KINDS].reverse();
  for (const kind of kinds) {
    const f = await floorStart(c, `floor-${i}-${kind.split(" ")[0]}`, kind);
    floors.get(kind)?.push(f);
    console.log(`  floor ${kind}: running ${ms(f.runningMs)} | ready ${ms(f.readyMs)} | ${startCells(f)}`);
  }
}

async function main(): Promise<void> {
  const { cluster: c, archive } = await startKnativeBenchCluster();
  try {
    const deployed = await deployThroughKnative(c, archive, 0);
    const o = resolveOptions(deployed.options);
    const service = serviceName(deployed.options, "mutate-create");
    await createVirtualNamespace(c, clientsFor(c.kubeconfig).core, NS);
    await createFloorNamespace(c);
    const other: Variant = {
      ...(CPU_REQUEST ? { cpu: CPU_REQUEST } : {}),
      ...(QUEUE_CPU_REQUEST ? { queueCpu: QUEUE_CPU_REQUEST } : {}),
    };
    const variants: Variant[] = [{}, ...(Object.keys(other).length > 0 ? [other] : [])];
    console.log(
      `bench:knative-cold: ${CYCLES} cycles${variants.length > 1 ? ` of each variant (${variants.map(variantName).join(" / ")}) in blocks of ${BLOCK}` : ""}, each from no pod at all, and a pause pod of each kind after each; the image's Node ${imageNodeRelease()}; times in ms from the create sent`,
    );
    console.log(
      "cycle | created | +started | +listening | +answered | (of it the review) | (process CPU) | total | pod Ready (kubelet) | load",
    );
    console.log(`  started taken apart: ${START_PIECES.map((k) => k.replace(/Ms$/, "")).join(" | ")}`);
    const cycles = new Map<Variant, Cycle[]>(variants.map((v) => [v, []]));
    const floors = new Map<string, FloorStart[]>(FLOOR_KINDS.map((k) => [k, []]));
    for (let i = 0; i < CYCLES * variants.length; i++) {
      const variant = variants[Math.floor(i / BLOCK) % variants.length] ?? {};
      if (variants.length > 1 && i % BLOCK === 0) await setVariant(c, o.namespace, service, variant);
      const r = await cycle(c, i, o.namespace, service, o.pathSecret ?? "");
      // Answered before the new pod listened: another pod answered (one deleted at once whose process still ran
      // and that the activator still knew), so the cycle measured no cold start; it is shown, not counted.
      const stale = r.answeredMs < 0;
      if (!stale) cycles.get(variant)?.push(r);
      const cells = [
        r.createdMs,
        r.startedMs,
        r.listeningMs,
        r.answeredMs,
        r.reviewMs,
        r.cpuMs,
        r.totalMs,
        r.readyMs,
      ];
      const load = loadavg()[0]?.toFixed(1);
      console.log(
        `${i + 1} | ${cells.map(ms).join(" | ")} | ${load}${variants.length > 1 ? ` | ${variantName(variant)}` : ""}${stale ? " | answered by another pod: not counted" : ""}`,
      );
      console.log(
        `  started taken apart: ${startCells(r.start)} | containers asked/created/started: ${r.containers}`,
      );
      await floorRound(c, i, floors);
    }
    for (const [variant, list] of cycles) {
      console.log(`\n${variantName(variant)}: ${list.length} cycles`);
      printSummary(list as unknown as Row[], [...PIECES, "readyMs"]);
      printSummary(
        list.map((x) => x.start as Row),
        START_PIECES,
      );
    }
    for (const [kind, list] of floors) {
      console.log(`\npause pod, ${kind}: ${list.length} pods`);
      printSummary(list as Row[], ["runningMs", "readyMs", ...START_PIECES]);
    }
  } finally {
    await c.stop();
  }
}

// Under the test runner (NODE_TEST_CONTEXT set), as every file under dist/test/ may be, it does nothing.
if (!process.env.NODE_TEST_CONTEXT) await main();
