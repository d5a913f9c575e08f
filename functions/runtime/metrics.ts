// Prometheus metrics for one served function (GET /metrics), from prom-client's public API (and the latency
// histogram, latency-histogram.ts, written beside it). Four sources:
// - what the process is: simkube_fn_build_info (version, Node.js version, function, commit when known);
// - what only the server sees: each review's latency and outcome, API errors, start-up times;
// - what the function already counts for GET /stats (decisions by reason, clones): read at scrape time,
//   so the functions keep one set of counters and /metrics can never disagree with /stats;
// - prom-client's default process and Node.js metrics (process_*, nodejs_*: CPU, memory, heap, event-loop
//   lag, GC), which dashboards for any Node service expect.

import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { VERSION } from "../../shared/base/index.js";
import type { KubeApi } from "../../shared/kube/index.js";
import { kubeErrorOf } from "../../shared/kube/index.js";
import { LatencyHistogram } from "./latency-histogram.js";

/** Admission answers take ms when warm; the top buckets cover cold starts up to the webhook timeouts. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** How the server answered a review: with a patch, allowed as is, denied, or an HTTP error. */
export type ReviewOutcome = "patched" | "allowed" | "denied" | "error";

export interface FunctionMetrics {
  readonly registry: Registry;
  /** GET /metrics: the Registry's metrics and the latency histogram, in the text exposition format. */
  exposition(): Promise<string>;
  readonly contentType: string;
  observeReview(outcome: ReviewOutcome, seconds: number): void;
  setColdStart(seconds: number): void;
  setTraceLoad(seconds: number): void;
  /**
   * Adds prom-client's process and Node.js metrics. Once per process, after it listens (not in its cold
   * start): their event-loop-lag monitor runs for the life of the process.
   */
  collectProcessMetrics(): void;
}

/** Decisions that are neither a mutation, a clone, a pin nor a denial: the function let the pod be. */
const NOT_SKIPS = new Set(["mutated", "cloned", "malformed", "error", "no-object", "bad-metadata"]);

export function isSkip(reason: string): boolean {
  return !NOT_SKIPS.has(reason) && !reason.startsWith("pinned-");
}

function numbers(value: unknown): Record<string, number> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, number] => typeof entry[1] === "number"),
  );
}

/** Counters mirrored from the function's own stats snapshot, refreshed on every scrape. */
function registerStatsCounters(registry: Registry, fn: string, stats: () => Record<string, unknown>): void {
  new Counter({
    name: "simkube_fn_decisions_total",
    help: "Reviews by the function's decision (mutated, pinned-*, cloned, a skip reason, a denial).",
    labelNames: ["function", "decision"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [decision, n] of Object.entries(numbers(stats().decisions)))
        this.inc({ function: fn, decision }, n);
    },
  });
  new Counter({
    name: "simkube_fn_skips_total",
    help: "Reviews the function let through untouched, by reason.",
    labelNames: ["function", "reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(numbers(stats().decisions))) {
        if (isSkip(reason)) this.inc({ function: fn, reason }, n);
      }
    },
  });
  new Counter({
    name: "simkube_fn_clones_created_total",
    help: "Clone pods reschedule-delete created for interrupted bare pods.",
    labelNames: ["function"],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ function: fn }, numbers(stats().clones).created ?? 0);
    },
  });
}

/** What the running build is, as the *_build_info convention has it: a gauge of 1 whose labels say it. */
export interface BuildInfo {
  version: string;
  nodeVersion: string;
  /** The source commit, when the deployment says (SIMKUBE_FN_COMMIT); "unknown" otherwise. */
  commit?: string;
}

function registerBuildInfo(registry: Registry, fn: string, build: BuildInfo): void {
  new Gauge({
    name: "simkube_fn_build_info",
    help: "The running build: always 1, labelled with its version, Node.js version, function and commit.",
    labelNames: ["function", "version", "node_version", "commit"],
    registers: [registry],
  }).set(
    {
      function: fn,
      version: build.version,
      node_version: build.nodeVersion,
      commit: build.commit ?? "unknown",
    },
    1,
  );
}

export function createFunctionMetrics(
  fn: string,
  stats: () => Record<string, unknown>,
  build: BuildInfo = { version: VERSION, nodeVersion: process.version },
): FunctionMetrics {
  const registry = new Registry();
  const latency = new LatencyHistogram(
    "simkube_fn_admission_duration_seconds",
    "Time from a review's arrival to its answer, by function and outcome.",
    LATENCY_BUCKETS,
    fn,
  );
  registerBuildInfo(registry, fn, build);
  const coldStart = new Gauge({
    name: "simkube_fn_cold_start_seconds",
    help: "Process start to listening (configuration, API client, trace loaded).",
    labelNames: ["function"],
    registers: [registry],
  });
  const traceLoad = new Gauge({
    name: "simkube_fn_trace_load_seconds",
    help: "Time to read and decode the trace at start-up.",
    labelNames: ["function"],
    registers: [registry],
  });
  registerStatsCounters(registry, fn, stats);
  return {
    registry,
    // The Registry's text ends in a newline; a blank line separates metrics, as the Registry does.
    exposition: async () => `${await registry.metrics()}\n${latency.exposition()}`,
    contentType: registry.contentType,
    observeReview: (outcome, seconds) => latency.observe(outcome, seconds),
    setColdStart: (seconds) => coldStart.set({ function: fn }, seconds),
    setTraceLoad: (seconds) => traceLoad.set({ function: fn }, seconds),
    collectProcessMetrics: () => collectDefaultMetrics({ register: registry }),
  };
}

/** The review's outcome as the API server will apply it. */
export function reviewOutcome(review: unknown): ReviewOutcome {
  const response = (review as { response?: { allowed?: unknown; patch?: unknown } } | undefined)?.response;
  if (response?.allowed !== true) return "denied";
  return response.patch ? "patched" : "allowed";
}

/**
 * The KubeApi with every failed call counted by HTTP status (0: no answer). A 404 is often an expected
 * answer (a deleted owner), a 409 part of optimistic concurrency: the label lets operators tell them apart.
 */
export function countingApiErrors(kube: KubeApi, registry: Registry, fn: string): KubeApi {
  const errors = new Counter({
    name: "simkube_fn_api_errors_total",
    help: "Kubernetes API calls that failed, by verb and HTTP status (0: no answer).",
    labelNames: ["function", "verb", "status"],
    registers: [registry],
  });
  const counted =
    <A extends unknown[], R>(verb: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        errors.inc({ function: fn, verb, status: String(kubeErrorOf(err)?.status ?? 0) });
        throw err;
      }
    };
  return {
    read: counted("get", kube.read.bind(kube)) as KubeApi["read"],
    create: counted("create", kube.create.bind(kube)) as KubeApi["create"],
    replace: counted("update", kube.replace.bind(kube)) as KubeApi["replace"],
  };
}
