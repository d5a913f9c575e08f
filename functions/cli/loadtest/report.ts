// The load test's final report: numbers from the load loop and the function's /stats, as plain data, as
// text for a terminal and as JSON. Pure: no I/O, no clock.

import type { ErrorKind, LoadResult } from "./load.js";
import { percentile } from "./load.js";

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadReport {
  target: string;
  reviews: number;
  concurrency: number;
  sent: number;
  ok: number;
  errors: number;
  errorsByKind: Partial<Record<ErrorKind, number>>;
  errorSamples: string[];
  durationSeconds: number;
  /** Answered or failed reviews per second over the whole run. */
  throughput: number;
  latencyMs: LatencySummary;
  /** Clones the function created during the run (from /stats, after minus before), or "unknown". */
  clonesCreated: number | "unknown";
  expectedClones: number;
  /** The function's RSS after the run (from /stats), or "unknown". */
  serverRssBytes: number | "unknown";
  timedOut: boolean;
  /** How many reviews of each kind were generated. */
  reviewKinds?: Record<string, number>;
}

export function summarizeLatency(sorted: ArrayLike<number>): LatencySummary {
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i] as number;
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

// reschedule-delete serves its clone outcomes as `clones: { created, alreadyExisted, failed }`
// (functions/reschedule-delete/stats.ts); the flat spellings keep the report working against functions
// built otherwise.
const FLAT_CLONE_KEYS = ["clonesCreated", "clone:created"];

/** The clone counter in a /stats answer, or undefined when the function does not report one. */
export function clonesIn(stats: Record<string, unknown> | undefined): number | undefined {
  if (!stats) return undefined;
  const clones = stats.clones;
  if (typeof clones === "object" && clones !== null) {
    const created = (clones as Record<string, unknown>).created;
    if (typeof created === "number" && Number.isFinite(created)) return created;
  }
  for (const key of FLAT_CLONE_KEYS) {
    const value = stats[key];
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return undefined;
}

/** The difference of the clone counter across the run; "unknown" unless both snapshots report it. */
export function clonesBetween(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): number | "unknown" {
  const a = clonesIn(before);
  const b = clonesIn(after);
  // A function that created no clone yet may not have the counter at all: count it as 0 if the other has it.
  if (a === undefined && b === undefined) return "unknown";
  if (before === undefined || after === undefined) return "unknown";
  return (b ?? 0) - (a ?? 0);
}

export function rssIn(stats: Record<string, unknown> | undefined): number | "unknown" {
  const value = stats?.rssBytes;
  return typeof value === "number" && Number.isFinite(value) ? value : "unknown";
}

export interface ReportInput {
  target: string;
  concurrency: number;
  result: LoadResult;
  statsBefore?: Record<string, unknown>;
  statsAfter?: Record<string, unknown>;
  expectedClones: number;
  reviewKinds?: Record<string, number>;
}

export function buildReport(input: ReportInput): LoadReport {
  const { result } = input;
  const durationSeconds = result.durationMs / 1000;
  const report: LoadReport = {
    target: input.target,
    reviews: result.total,
    concurrency: input.concurrency,
    sent: result.sent,
    ok: result.ok,
    errors: result.errors,
    errorsByKind: { ...result.errorsByKind },
    errorSamples: [...result.errorSamples],
    durationSeconds,
    throughput: durationSeconds > 0 ? (result.ok + result.errors) / durationSeconds : 0,
    latencyMs: summarizeLatency(result.latenciesMs),
    clonesCreated: clonesBetween(input.statsBefore, input.statsAfter),
    expectedClones: input.expectedClones,
    serverRssBytes: rssIn(input.statsAfter),
    timedOut: result.timedOut,
  };
  if (input.reviewKinds) report.reviewKinds = { ...input.reviewKinds };
  return report;
}

/**
 * Passed: every review sent and admitted cleanly, and no clone beyond the interruptions asked for (when the
 * count is known). A teardown alone must create none. An interruption is cloned only if its pod exists
 * (the function reads the live pod first), so against a cluster without those pods fewer clones are fine.
 */
export function reportPassed(report: LoadReport): boolean {
  if (report.errors > 0 || report.timedOut || report.sent < report.reviews) return false;
  return report.clonesCreated === "unknown" || report.clonesCreated <= report.expectedClones;
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)} ms` : "n/a";
}

function mib(bytes: number | "unknown"): string {
  return bytes === "unknown" ? "unknown" : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatReport(report: LoadReport): string {
  const lines = [
    `target        ${report.target}`,
    `reviews       ${report.sent}/${report.reviews} sent, concurrency ${report.concurrency}${report.timedOut ? " (stopped by --timeout)" : ""}`,
    `duration      ${report.durationSeconds.toFixed(2)} s`,
    `throughput    ${report.throughput.toFixed(0)} reviews/s`,
    `latency       p50 ${ms(report.latencyMs.p50)}  p95 ${ms(report.latencyMs.p95)}  p99 ${ms(report.latencyMs.p99)}  max ${ms(report.latencyMs.max)}`,
    `errors        ${report.errors}${formatKinds(report.errorsByKind)}`,
    `clones        ${report.clonesCreated} created (${report.expectedClones === 0 ? "expected 0" : `at most ${report.expectedClones}: interruptions of pods that exist`})`,
    `server RSS    ${mib(report.serverRssBytes)}`,
  ];
  if (report.reviewKinds) lines.push(`review kinds ${formatKinds(report.reviewKinds) || " none"}`);
  for (const sample of report.errorSamples) lines.push(`  ${sample}`);
  lines.push(reportPassed(report) ? "result        PASS" : "result        FAIL");
  return `${lines.join("\n")}\n`;
}

function formatKinds(counts: Partial<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([kind, n]) => `${kind} ${n}`);
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}
