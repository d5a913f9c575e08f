// The measurements bench:knative and bench:openfaas share: the same CREATE reviews sent along one path to a
// function, one at a time (latency per review) or in a burst (throughput), and the medians over rounds of
// each path's figures against the path that reaches the function's pod directly. The reviews are pods
// outside the simulation's namespaces, which mutate-create admits unchanged without an API call, so the
// handler's own work is the same small constant on every path and the differences are the hops.

import { percentile, runLoad } from "../../functions/cli/loadtest/load.js";
import { buildCreateReview } from "../support/builders.js";

export interface OverheadSettings {
  sequential: number;
  burst: number;
  concurrency: number;
  rounds: number;
}

/** <prefix>_SEQUENTIAL (300), _BURST (2000), _CONCURRENCY (32), _ROUNDS (4), e.g. BENCH_KNATIVE_BURST. */
export function overheadSettings(prefix: string): OverheadSettings {
  const env = (name: string, fallback: number) => Number(process.env[`${prefix}_${name}`] ?? fallback);
  return {
    sequential: env("SEQUENTIAL", 300),
    burst: env("BURST", 2000),
    concurrency: env("CONCURRENCY", 32),
    rounds: env("ROUNDS", 4),
  };
}

export interface Target<Name extends string = string> {
  name: Name;
  url: URL;
  headers?: Record<string, string>;
  tls?: { ca: string; servername: string };
}

export interface Row<Name extends string = string> {
  path: Name;
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

async function measure<Name extends string>(
  settings: OverheadSettings,
  t: Target<Name>,
  mode: Row["mode"],
  round: number,
): Promise<Row<Name>> {
  const count = mode === "sequential" ? settings.sequential : settings.burst;
  const result = await runLoad({
    target: t.url,
    requests: reviews(count),
    concurrency: mode === "sequential" ? 1 : settings.concurrency,
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

/** Every path along every mode, the order of the paths reversed every round. */
export async function measureRounds<Name extends string>(
  settings: OverheadSettings,
  all: readonly Target<Name>[],
  log: (line: string) => void,
): Promise<Row<Name>[]> {
  const rows: Row<Name>[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? all : [...all].reverse();
    for (const t of order) {
      for (const mode of ["sequential", "burst"] as const) {
        const row = await measure(settings, t, mode, round);
        log(JSON.stringify(row));
        rows.push(row);
      }
    }
  }
  return rows;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Per path: the medians over rounds; its p50 and p99 over those of `direct` (added ms and ratio), and its
 * burst throughput over direct's. */
export function summary<Name extends string>(
  rows: readonly Row<Name>[],
  paths: readonly Name[],
  direct: Name,
): Record<string, unknown> {
  const of = (p: Name, mode: Row["mode"], key: "p50Ms" | "p99Ms" | "perSecond") =>
    Math.round(median(rows.filter((r) => r.path === p && r.mode === mode).map((r) => r[key])) * 100) / 100;
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    out[p] = {
      sequentialP50Ms: of(p, "sequential", "p50Ms"),
      sequentialP99Ms: of(p, "sequential", "p99Ms"),
      burstPerSecond: of(p, "burst", "perSecond"),
      burstP99Ms: of(p, "burst", "p99Ms"),
      p50AddedMs: Math.round((of(p, "sequential", "p50Ms") - of(direct, "sequential", "p50Ms")) * 100) / 100,
      p99AddedMs: Math.round((of(p, "sequential", "p99Ms") - of(direct, "sequential", "p99Ms")) * 100) / 100,
      p50OverDirect:
        Math.round((of(p, "sequential", "p50Ms") / of(direct, "sequential", "p50Ms")) * 100) / 100,
      throughputOverDirect:
        Math.round((of(p, "burst", "perSecond") / of(direct, "burst", "perSecond")) * 100) / 100,
    };
  }
  return out;
}
