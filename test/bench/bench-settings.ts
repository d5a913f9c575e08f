// The settings of `npm run bench` (run.ts): the BENCH_* knobs read from the environment once (run.ts's header
// says what each does), the paths of the baseline servers and of the results file, and the constants every
// section shares (warm-up, paced rate, timeouts, pinning, saturation thresholds).

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_IDLE_MS, DEFAULT_SETTLE_MS } from "../../functions/runtime/idle-memory.js";
import { BENCH_REVIEW_COUNT } from "./bench-reviews.js";
import { REPO, serveNodeEnv, serveNodeFlags } from "./node-children.js";
import { pinTo } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
// Node flags for the functions: the image's (BENCH_SERVE_FLAGS to try others); never the bare one.
export const SERVE_FLAGS = serveNodeFlags();
// ... and the image's environment, under the caller's.
export const SERVE_ENV = serveNodeEnv();
export const BARE_SERVER = join(HERE, "bare-server.js");
export const FLOOR_SERVER = join(HERE, "floor-server.js");
export const RESULTS_FILE = join(REPO, "dist/bench-results.json");

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export const ROUNDS = envInt("BENCH_ROUNDS", 3);
export const REVIEWS = envInt("BENCH_REVIEWS", BENCH_REVIEW_COUNT);
export const SECONDS = envInt("BENCH_SECONDS", 5);
// Only the cold starts (e.g. with BENCH_NODE, to compare Node majors without a whole run).
const COLD_START_ONLY = process.env.BENCH_COLD_START_ONLY === "1";
export const TRACE_ONLY = process.env.BENCH_TRACE_ONLY === "1";
// BENCH_PARTS=create,cold,trace,teardown,micro,instructions,cluster (any subset; default all): to rerun one
// part alone.
const PARTS = new Set(
  (process.env.BENCH_PARTS ?? "create,cold,trace,teardown,micro,instructions,cluster")
    .split(",")
    .map((p) => p.trim()),
);
export const runs = (part: string) => PARTS.has(part) && (!COLD_START_ONLY || part === "cold");
// BENCH_AGAINST=<dist/bundle of another build> (e.g. a worktree at an older commit): its functions join the
// CREATE, cold-start and teardown rounds as one more contender, so a change is measured against its base in
// one run.
export const AGAINST_BUNDLE_DIR = process.env.BENCH_AGAINST?.trim() || undefined;
// BENCH_AGAINST_STORE=cluster: in the CREATE rounds the other build runs with the cluster sequence store and
// is compared with this build's cluster-store contender (default: both with the memory store).
export const AGAINST_STORE = process.env.BENCH_AGAINST_STORE === "cluster" ? "cluster" : "memory";
// The RSS a function keeps once idle: read this long after its last burst, past collectWhenIdle's two
// collections, 30 s and 35.5 s after the last review (functions/runtime/idle-memory.ts). The RSS right after
// is printed too: what a replica holds between the bursts of one simulation.
export const IDLE_SETTLE_MS = DEFAULT_IDLE_MS + DEFAULT_SETTLE_MS + 1_500;
export const CONCURRENCY = envInt("BENCH_CONCURRENCY", 64);
export const COLD_STARTS = envInt("BENCH_COLD_STARTS", 5);
export const WARMUP_REVIEWS = 1000;
// Logging every review into a pipe costs; warn keeps the functions quiet on their normal paths.
export const LOG_LEVEL = "warn";
export const WARMUP_SECONDS = 1;
// Latency at a set rate (wrk.ts's paced script), well below every server's throughput: saturated, a p99 ratio
// only restates the throughput ratio. 2,000 reviews/s is more than a simulation sends (a real teardown of
// 2,000 pods sent ~53 DELETE reviews/s, bounded by the controller-manager's client rate limit).
export const PACED_RATE = envInt("BENCH_PACED_RATE", 2000);
export const PACED_ROUNDS = 2;
export const BURST_TIMEOUT_MS = 45_000;
export const START_TIMEOUT_MS = 20_000;
// Servers on core 1, load generator and API double on core 0 (empty where taskset or the core is missing).
export const SERVER_PIN = pinTo(1);
export const LOAD_PIN = pinTo(0);
// A generator above this share of its core may be what limits the rate.
export const GENERATOR_SATURATED_CORES = 0.9;
/** The bare server's median CPU, in cores, below which a run's rounds shared their core with other work. */
export const BASELINE_WHOLE_CORE = 0.9;
