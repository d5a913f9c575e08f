// One replica of the cluster sequence store in its own process, for sequence-speed.ts: from a wall-clock
// start, `concurrency` next() calls in flight against the API server for `durationMs`, then one line of JSON
// (calls answered, failures, p50/p99 in ms) on stdout. The store and the API client are loaded from
// `distRoot` (this build's dist, or the base build's), so "before" and "after" run the same loop.
// Usage: node dist/test/bench/sequence-replica.js '<ReplicaJob as JSON>'

import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { KubeApi } from "../../shared/kube/api.js";
import type { createKubeApi } from "../../shared/kube/client.js";
import type { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";

export interface ReplicaJob {
  /** A build's dist folder: the sequence store and API client are loaded from its shared/. */
  distRoot: string;
  kubeconfig: string;
  namespace: string;
  scope: SequenceScope;
  hashes: string[];
  concurrency: number;
  /** Epoch ms at which every replica starts, so that they overlap. */
  startAt: number;
  durationMs: number;
}

export interface ReplicaResult {
  calls: number;
  failures: number;
  /** What the first failure said (a denial under contention is a result, not a crash). */
  firstFailure?: string;
  elapsedMs: number;
  /** This process's CPU seconds per wall second over the loop: well below 1, it waited on the API server. */
  cpuCores: number;
  /** This process's CPU microseconds per answered call. */
  cpuUsPerCall: number;
  /** ConfigMap requests per answered call (reads, creates, writes), and the 409s among them. */
  requestsPerCall: number;
  conflictsPerCall: number;
  p50Ms: number;
  p99Ms: number;
}

/** The store and API client of the build at `distRoot`. */
export async function loadStoreModules(distRoot: string): Promise<{
  createClusterSequenceStore: typeof createClusterSequenceStore;
  createKubeApi: typeof createKubeApi;
}> {
  // The rooms' public surfaces; a base build from before shared/ had rooms keeps both in flat files.
  const roomed = existsSync(join(distRoot, "shared", "sequence", "index.js"));
  const load = (file: string) => import(pathToFileURL(join(distRoot, "shared", file)).href);
  const [store, kube] = await Promise.all(
    roomed
      ? [load("sequence/index.js"), load("kube/index.js")]
      : [load("cluster-sequence-store.js"), load("kube.js")],
  );
  return { createClusterSequenceStore: store.createClusterSequenceStore, createKubeApi: kube.createKubeApi };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number;
}

export interface RequestCounts {
  requests: number;
  conflicts: number;
}

/** `kube` counting its requests and the 409s it got. */
export function countingKube(kube: KubeApi): { kube: KubeApi; counts: RequestCounts } {
  const counts: RequestCounts = { requests: 0, conflicts: 0 };
  const counted = <T>(call: () => Promise<T>): Promise<T> => {
    counts.requests += 1;
    return call().catch((err: unknown) => {
      if ((err as { status?: number }).status === 409) counts.conflicts += 1;
      throw err;
    });
  };
  return {
    counts,
    kube: {
      read: (ref) => counted(() => kube.read(ref)),
      create: (object) => counted(() => kube.create(object)),
      replace: (object) => counted(() => kube.replace(object)),
    },
  };
}

/** `concurrency` loops calling next() over `hashes` round-robin until `durationMs` has passed. */
export async function loadStore(
  store: SequenceStore,
  job: Pick<ReplicaJob, "scope" | "hashes" | "concurrency" | "durationMs">,
  counts: RequestCounts,
): Promise<ReplicaResult> {
  const countsBefore = { ...counts };
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let i = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + job.durationMs;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (performance.now() < end) {
        const hash = job.hashes[i++ % job.hashes.length] as string;
        const t0 = performance.now();
        try {
          await store.next(hash, job.scope);
          latencies.push(performance.now() - t0);
        } catch (err) {
          failures += 1;
          firstFailure ??= (err as Error).message;
        }
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const result: ReplicaResult = {
    calls: latencies.length,
    failures,
    elapsedMs,
    cpuCores: (cpu.user + cpu.system) / 1000 / elapsedMs,
    cpuUsPerCall: (cpu.user + cpu.system) / Math.max(1, latencies.length),
    requestsPerCall: (counts.requests - countsBefore.requests) / Math.max(1, latencies.length),
    conflictsPerCall: (counts.conflicts - countsBefore.conflicts) / Math.max(1, latencies.length),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
  if (firstFailure !== undefined) result.firstFailure = firstFailure;
  return result;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? "") as ReplicaJob;
  const modules = await loadStoreModules(job.distRoot);
  const { kube, counts } = countingKube(modules.createKubeApi({ kubeconfigPath: job.kubeconfig }));
  const store = modules.createClusterSequenceStore(kube, { namespace: job.namespace });
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, job.startAt - Date.now())));
  const result = await loadStore(store, job, counts);
  // Give back what a lease reserved, as mutate-create does on shutdown (absent in builds without leases).
  await store.close?.();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
