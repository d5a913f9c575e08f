// sequence-speed.ts, part 1: `serve mutate-create` with the memory store against the same with the cluster
// store, on the real API server, in alternating rounds under wrk. Each request is a new admission call (its
// own uid: wrk.ts freshUidScript). Saturation evidence per round: the server's CPU (cores, from /proc) and
// wrk's own CPU; a wrk near its whole core could be the limit, so the summary prints its maximum.

import http from "node:http";
import { join } from "node:path";
import { runLoad } from "../../functions/cli/loadtest/load.js";
import { FUNCTIONS_NAMESPACE, type LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { freePort } from "../../functions/local-cluster/ports.js";
import { buildCreateRequests } from "./create-reviews.js";
import { REPO, startNode } from "./node-children.js";
import { type Child, cpuTimesOf, pinTo, waitUntil } from "./processes.js";
import { createWrkWorkspace, runWrk, UID_MARK, type WrkWorkspace } from "./wrk.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS) > 0 ? Number(process.env.BENCH_ROUNDS) : 3;
const SECONDS = Number(process.env.BENCH_SECONDS) > 0 ? Number(process.env.BENCH_SECONDS) : 5;
// 64 by default. BENCH_CONNECTIONS=256 measures capacity: with 64 reviews in flight over the bench's 5 spec
// hashes, a shard's write carries at most ~13 reviews, so the cluster store is bound by the API server's
// writes per second before it is bound by its own CPU (docs/performance.md).
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS) > 0 ? Number(process.env.BENCH_CONNECTIONS) : 64;
const REVIEWS = 5_000;
const SERVER_PIN = pinTo(1);
const LOAD_PIN = pinTo(0);
const BUNDLE = join(REPO, "dist/bundle/simkube-fn.mjs");

export interface CreateRound {
  store: "memory" | "cluster";
  throughput: number;
  p99Ms: number;
  errors: number;
  serverCores: number;
  serverUsPerReview: number;
  wrkCores: number;
}

export interface CreateComparison {
  rounds: CreateRound[];
  /** cluster/memory of the best round's throughput, and of the medians. */
  throughputRatio: number;
  medianThroughputRatio: number;
  /** cluster/memory of the best p99, and of the median p99. */
  p99Ratio: number;
  medianP99Ratio: number;
  maxWrkCores: number;
  errors: number;
}

interface Server {
  store: "memory" | "cluster";
  child: Child;
  url: URL;
}

function healthy(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(new URL("/healthz", url), { agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
  });
}

async function startMutateCreate(cluster: LocalCluster, store: "memory" | "cluster"): Promise<Server> {
  const port = await freePort();
  const { NODE_OPTIONS: _n, TRACE_PATH: _t, DRIVER_USERS: _d, POD_NAMESPACE: _p, ...env } = process.env;
  const child = startNode(
    [BUNDLE, "serve", "mutate-create"],
    {
      ...env,
      PORT: String(port),
      SIM_NAME: cluster.simName,
      KUBECONFIG: cluster.functionKubeconfigs["mutate-create"],
      LOG_LEVEL: "warn",
      SEQUENCE_STORE: store,
      SEQUENCE_NAMESPACE: FUNCTIONS_NAMESPACE,
    },
    SERVER_PIN,
  );
  const url = new URL(`http://127.0.0.1:${port}/`);
  if (!(await waitUntil(() => healthy(url), 20_000, 20))) {
    await child.stop();
    throw new Error(`mutate-create (${store} store) did not start:\n${child.output()}`);
  }
  return { store, child, url };
}

/** The bench's CREATE reviews for this cluster's run; UID_MARK in each uid gives every request its own. */
function reviewsFor(cluster: LocalCluster, seed: number) {
  const requests = buildCreateRequests({
    count: REVIEWS,
    rootName: cluster.root.metadata?.name ?? "",
    rootUid: cluster.root.metadata?.uid ?? "",
    namespaces: [`${cluster.virtualNamespacePrefix}-default`],
    seed,
  });
  const marked = requests.map((r) => ({
    uid: r.uid,
    body: Buffer.from(r.body.toString("utf8").replace(`"${r.uid}"`, `"${r.uid}-${UID_MARK}"`)),
  }));
  return { requests, marked };
}

/** Every answer checked in full (uid, allowed), then a short wrk warm-up; throws on any wrong answer. */
async function warmUp(workspace: WrkWorkspace, server: Server, cluster: LocalCluster): Promise<void> {
  const { requests, marked } = reviewsFor(cluster, 1000 + (server.store === "memory" ? 0 : 1));
  const checked = await runLoad({
    target: server.url,
    requests: requests.slice(0, 1_000),
    concurrency: CONNECTIONS,
    timeoutMs: 60_000,
    check: { allowPatch: true },
  });
  if (checked.errors > 0 || checked.sent !== checked.total)
    throw new Error(
      `${server.store} store: wrong answers in warm-up: ${checked.errorSamples.slice(0, 3).join("; ")}`,
    );
  const bodies = workspace.writeBodies(`warmup-${server.store}`, marked);
  await burst(workspace, server, bodies, `w-${server.store}-`, 2);
}

async function burst(
  workspace: WrkWorkspace,
  server: Server,
  bodies: string,
  tag: string,
  seconds = SECONDS,
): Promise<CreateRound> {
  const before = cpuTimesOf(server.child.pid);
  const started = performance.now();
  const report = await runWrk({
    url: server.url,
    script: workspace.freshUidScript,
    bodies,
    seconds,
    connections: CONNECTIONS,
    noPatch: false,
    pin: LOAD_PIN,
    tag,
  });
  const wall = (performance.now() - started) / 1000;
  const after = cpuTimesOf(server.child.pid);
  const cpu = before && after ? after.user - before.user + after.system - before.system : 0;
  const duration = report.durationUs / 1e6;
  const { connect, read, write, status, timeout, bad } = report;
  return {
    store: server.store,
    throughput: Math.round(report.requests / duration),
    p99Ms: report.p99Us / 1000,
    errors: connect + read + write + status + timeout + bad,
    serverCores: Number((cpu / wall).toFixed(2)),
    serverUsPerReview: Math.round((cpu * 1e6) / Math.max(1, report.requests)),
    wrkCores: Number((report.cpuSeconds / duration).toFixed(2)),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function compare(rounds: CreateRound[]): CreateComparison {
  const of = (store: string) => rounds.filter((r) => r.store === store);
  const [memory, cluster] = [of("memory"), of("cluster")];
  const best = (rs: CreateRound[]) => Math.max(...rs.map((r) => r.throughput));
  const bestP99 = (rs: CreateRound[]) => Math.min(...rs.map((r) => r.p99Ms));
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  return {
    rounds,
    throughputRatio: ratio(best(cluster), best(memory)),
    medianThroughputRatio: ratio(
      median(cluster.map((r) => r.throughput)),
      median(memory.map((r) => r.throughput)),
    ),
    p99Ratio: ratio(bestP99(cluster), bestP99(memory)),
    medianP99Ratio: ratio(median(cluster.map((r) => r.p99Ms)), median(memory.map((r) => r.p99Ms))),
    maxWrkCores: Math.max(...rounds.map((r) => r.wrkCores)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

export async function benchCreate(cluster: LocalCluster): Promise<CreateComparison> {
  const workspace = createWrkWorkspace();
  const servers: Server[] = [];
  try {
    for (const store of ["memory", "cluster"] as const) servers.push(await startMutateCreate(cluster, store));
    for (const server of servers) await warmUp(workspace, server, cluster);
    process.stdout.write(`CREATE (${CONNECTIONS} connections, ${SECONDS} s, every request a new uid):\n`);
    const rounds: CreateRound[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const bodies = workspace.writeBodies(`round-${r}`, reviewsFor(cluster, r).marked);
      for (const server of servers) {
        const result = await burst(workspace, server, bodies, `r${r}-${server.store}-`);
        rounds.push(result);
        process.stdout.write(`  round ${r} ${JSON.stringify(result)}\n`);
      }
    }
    const comparison = compare(rounds);
    const { rounds: _r, ...summary } = comparison;
    process.stdout.write(`  cluster/memory: ${JSON.stringify(summary)}\n`);
    return comparison;
  } finally {
    for (const server of servers) await server.child.stop();
    workspace.remove();
  }
}
