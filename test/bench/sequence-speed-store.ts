// sequence-speed.ts, parts 2 and 3: the store's next() against the real API server, before and after.
// - benchReplicas: 1, 2 and 4 replica processes (sequence-replica.ts) started together for the same seconds,
//   over the same 4 spec hashes of one simulation run ("shared": every replica writes the same shards), then
//   each over 4 hashes of its own in shards no other replica writes ("own"): aggregate next()/s, each
//   replica's CPU. The two layouts separate the cost of replicas contending for a shard from the API
//   server's own limit.
// - benchHashes: one store in this process growing one run to 1,000, 10,000 and 100,000 distinct hashes.

import { join } from "node:path";
import type { KubeObject } from "../../shared/kube/api.js";
import { sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";
import { REPO, startNode } from "./node-children.js";
import { isTimedOut, within } from "./processes.js";
import { distinctHash } from "./sequence-bench.js";
import { loadStoreModules, percentile, type ReplicaJob, type ReplicaResult } from "./sequence-replica.js";

export interface StoreWorld {
  /** mutate-create's own service account: the store's RBAC as deployed. */
  kubeconfig: string;
  namespace: string;
  /** The cluster's SimulationRoot: the shards' owner (an owner that does not exist gets them collected). */
  root: KubeObject;
}

export interface Build {
  label: string;
  distRoot: string;
}

const HASHES = ["1234567890123456789", "42", "18446744073709551615", "7"];
const REPLICA_COUNTS = [1, 2, 4];
const CONCURRENCY = 32;
const SECONDS = Number(process.env.BENCH_SECONDS) > 0 ? Number(process.env.BENCH_SECONDS) : 5;
const REPLICA_SCRIPT = join(REPO, "dist/test/bench/sequence-replica.js");
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

let runs = 0;
function freshScope(world: StoreWorld, label: string): SequenceScope {
  const meta = world.root.metadata ?? {};
  return {
    simName: `seqspeed-${label}-${++runs}-${Date.now().toString(36)}`,
    owner: {
      apiVersion: world.root.apiVersion ?? "",
      kind: world.root.kind ?? "",
      name: meta.name ?? "",
      uid: meta.uid ?? "",
    },
  };
}

/** "shared": all replicas call next() on the same hashes; "own": each on hashes in shards of its own. */
export type HashLayout = "shared" | "own";

export interface ReplicaRow {
  build: string;
  hashes: HashLayout;
  replicas: number;
  callsPerSec: number;
  failures: number;
  /** The slowest replica's p99. */
  p99Ms: number;
  /** The busiest replica's CPU (cores): well below 1 means it waited on the API server, not on itself. */
  maxReplicaCores: number;
  /** Over all replicas: ConfigMap requests per next(), and the 409s among them. */
  requestsPerCall: number;
  conflictsPerCall: number;
}

async function runReplica(job: ReplicaJob): Promise<ReplicaResult> {
  const child = startNode([REPLICA_SCRIPT, JSON.stringify(job)], process.env, []);
  const code = await within(child.exited, job.startAt - Date.now() + job.durationMs + 60_000);
  if (isTimedOut(code) || code !== 0) {
    await child.stop();
    throw new Error(`replica failed (${String(isTimedOut(code) ? "timeout" : code)}):\n${child.output()}`);
  }
  const line = child.output().trim().split("\n").pop() ?? "";
  return JSON.parse(line) as ReplicaResult;
}

/** `replicas` sets of HASHES.length hashes, no two of them (within or across sets) in the same shard. */
export function hashesInOwnShards(replicas: number): string[][] {
  const used = new Set<number>();
  const sets: string[][] = [];
  let i = 0;
  for (let r = 0; r < replicas; r++) {
    const set: string[] = [];
    while (set.length < HASHES.length) {
      const hash = distinctHash(i++);
      const shard = sequenceShardOf(hash);
      if (used.has(shard)) continue;
      used.add(shard);
      set.push(hash);
    }
    sets.push(set);
  }
  return sets;
}

async function replicaRow(
  world: StoreWorld,
  build: Build,
  replicas: number,
  layout: HashLayout,
): Promise<ReplicaRow> {
  const job: ReplicaJob = {
    distRoot: build.distRoot,
    kubeconfig: world.kubeconfig,
    namespace: world.namespace,
    scope: freshScope(world, build.label),
    hashes: HASHES,
    concurrency: CONCURRENCY,
    startAt: Date.now() + 3_000,
    durationMs: SECONDS * 1000,
  };
  const own = hashesInOwnShards(replicas);
  const results = await Promise.all(
    own.map((hashes) => runReplica(layout === "own" ? { ...job, hashes } : job)),
  );
  const calls = results.reduce((sum, r) => sum + r.calls, 0);
  return {
    build: build.label,
    hashes: layout,
    replicas,
    callsPerSec: round((calls / Math.max(...results.map((r) => r.elapsedMs))) * 1000, 0),
    failures: results.reduce((sum, r) => sum + r.failures, 0),
    p99Ms: round(Math.max(...results.map((r) => r.p99Ms))),
    maxReplicaCores: round(Math.max(...results.map((r) => r.cpuCores))),
    requestsPerCall: round(
      results.reduce((sum, r) => sum + r.requestsPerCall * r.calls, 0) / Math.max(1, calls),
      3,
    ),
    conflictsPerCall: round(
      results.reduce((sum, r) => sum + r.conflictsPerCall * r.calls, 0) / Math.max(1, calls),
      3,
    ),
  };
}

/** Rows alternate builds per replica count, so that both see the same moment of the machine. */
export async function benchReplicas(world: StoreWorld, builds: Build[]): Promise<ReplicaRow[]> {
  const rows: ReplicaRow[] = [];
  process.stdout.write(`replicas (${CONCURRENCY} next() in flight each, 4 hashes each, ${SECONDS} s):\n`);
  for (const layout of ["shared", "own"] as const) {
    for (const replicas of REPLICA_COUNTS) {
      for (const build of builds) {
        const row = await replicaRow(world, build, replicas, layout);
        rows.push(row);
        process.stdout.write(`  ${JSON.stringify(row)}\n`);
      }
    }
  }
  return rows;
}

export interface HashRow {
  build: string;
  distinctHashes: number;
  callsPerSec: number;
  p99Ms: number;
  /** Calls denied (fill and timed), and what the first denial said. */
  failures: number;
  firstFailure?: string;
}

/** `total` calls with `concurrency` in flight, call i on hashOf(i). */
async function runCalls(
  store: SequenceStore,
  scope: SequenceScope,
  hashOf: (i: number) => string,
  total: number,
  concurrency: number,
): Promise<{ callsPerSec: number; p99Ms: number; failures: number; firstFailure?: string }> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const hash = hashOf(next++);
        const t0 = performance.now();
        await store.next(hash, scope).then(
          () => latencies.push(performance.now() - t0),
          (err: unknown) => {
            failures += 1;
            firstFailure ??= (err as Error).message;
          },
        );
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const result = {
    callsPerSec: round((total / elapsed) * 1000, 0),
    p99Ms: round(percentile(latencies, 0.99)),
    failures,
  };
  return firstFailure === undefined ? result : { ...result, firstFailure };
}

const DISTINCT_HASH_COUNTS = [1_000, 10_000, 100_000];
const TIMED_NEW_HASHES = 1_000;

/** One run grown to each size (most hashes loaded 512 in flight), the last 1,000 new hashes timed at 32. */
async function hashRows(world: StoreWorld, build: Build): Promise<HashRow[]> {
  const modules = await loadStoreModules(build.distRoot);
  const kube = modules.createKubeApi({ kubeconfigPath: world.kubeconfig });
  const store = modules.createClusterSequenceStore(kube, { namespace: world.namespace, deadlineMs: 60_000 });
  const scope = freshScope(world, build.label);
  const rows: HashRow[] = [];
  let loaded = 0;
  for (const count of DISTINCT_HASH_COUNTS) {
    const from = loaded;
    const fill = await runCalls(
      store,
      scope,
      (i) => distinctHash(from + i),
      count - TIMED_NEW_HASHES - from,
      512,
    );
    const base = count - TIMED_NEW_HASHES;
    const timed = await runCalls(store, scope, (i) => distinctHash(base + i), TIMED_NEW_HASHES, CONCURRENCY);
    loaded = count;
    const row: HashRow = {
      build: build.label,
      distinctHashes: count,
      ...timed,
      failures: fill.failures + timed.failures,
    };
    const firstFailure = fill.firstFailure ?? timed.firstFailure;
    if (firstFailure !== undefined) row.firstFailure = firstFailure;
    rows.push(row);
    process.stdout.write(`  ${JSON.stringify(row)}\n`);
  }
  return rows;
}

export async function benchHashes(world: StoreWorld, builds: Build[]): Promise<HashRow[]> {
  process.stdout.write(
    "distinct hashes (one store, the last 1,000 new hashes at each size, 32 in flight):\n",
  );
  const rows: HashRow[] = [];
  for (const build of builds) rows.push(...(await hashRows(world, build)));
  return rows;
}
