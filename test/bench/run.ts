// `npm run bench`: the project's benchmarks, each a ratio against a baseline measured in the same run, so
// that the numbers mean something on a noisy machine. Never part of `npm test`.
//
// Layout (this machine has 2 cores): the load generator is this process; the server under test is a child
// process (the built bundle `serve <fn>`, or the bare node:http baseline), and the API double is another
// child, mostly idle. Servers are measured one at a time, alternating function and baseline round by round;
// each server gets a warm-up first. Every child is started and stopped by pid on a free 127.0.0.1 port, and
// every wait is bounded.
//
//   issue 2  mutate-create CREATE throughput and p99 (SEQUENCE_STORE=memory) vs the bare server; cold start
//            (spawn to first admitted review) and idle RSS vs the bare server started the same way
//   issue 3  teardown burst (DELETE reviews from functions/loadtest) against reschedule-delete vs the bare
//            server: errors, clones, throughput, p99, API requests the double saw
//   issue 4  mutate-create with SEQUENCE_STORE=cluster vs memory (plus benchSequence())
//   hash     benchHash()
//   issue 8  benchClusterTeardown(): 2,000 pods torn down on a real control plane, DELETE webhook vs none
//
// Results: a table on stdout and dist/bench-results.json. Environment knobs: BENCH_ROUNDS (default 3),
// BENCH_REVIEWS (5000), BENCH_CONCURRENCY (64), BENCH_COLD_STARTS (5), BENCH_TRACE_PATH (none).

import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkAnswer,
  fetchStats,
  type LoadRequest,
  type LoadResult,
  runLoad,
} from "../../functions/cli/loadtest/load.js";
import { clonesIn, summarizeLatency } from "../../functions/cli/loadtest/report.js";
import { buildTeardownReviews } from "../../functions/cli/loadtest/reviews.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import type { RequestCount } from "./api-double-main.js";
import {
  BENCH_ROOT_NAME,
  BENCH_ROOT_UID,
  BENCH_SIM_NAME,
  BENCH_STORE_NAMESPACE,
  BENCH_TRACED_NAMESPACES,
  BENCH_VIRTUAL_NAMESPACES,
} from "./bench-world.js";
import type { TeardownRound } from "./cluster-teardown-bench.js";
import { buildCreateRequests } from "./create-reviews.js";
import { type Child, freePort, isTimedOut, rssOf, startChild, waitUntil, within } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../../..");
const BUNDLE = join(REPO, "dist/bundle/simkube-fn.mjs");
const BARE_SERVER = join(HERE, "bare-server.js");
const API_DOUBLE = join(HERE, "api-double-main.js");
const RESULTS_FILE = join(REPO, "dist/bench-results.json");

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

const ROUNDS = envInt("BENCH_ROUNDS", 3);
const REVIEWS = envInt("BENCH_REVIEWS", 5000);
const CONCURRENCY = envInt("BENCH_CONCURRENCY", 64);
const COLD_STARTS = envInt("BENCH_COLD_STARTS", 5);
const WARMUP_REVIEWS = 1000;
// Logging every review into a pipe costs; warn keeps the functions quiet on their normal paths.
const LOG_LEVEL = "warn";
const BURST_TIMEOUT_MS = 45_000;
const START_TIMEOUT_MS = 20_000;

// ---------------------------------------------------------------------------------------------------------
// Servers

interface ServerSpec {
  label: string;
  args: string[];
  env: Record<string, string>;
}

interface RunningServer {
  spec: ServerSpec;
  child: Child;
  url: URL;
}

function bareSpec(): ServerSpec {
  return { label: "bare node:http", args: [BARE_SERVER], env: {} };
}

function functionSpec(
  fn: "mutate-create" | "reschedule-delete",
  kubeconfig: string,
  extra: Record<string, string> = {},
): ServerSpec {
  return {
    label: `${fn}${extra.SEQUENCE_STORE ? ` (${extra.SEQUENCE_STORE} store)` : ""}`,
    args: [BUNDLE, "serve", fn],
    env: {
      SIM_NAME: BENCH_SIM_NAME,
      KUBECONFIG: kubeconfig,
      LOG_LEVEL,
      SEQUENCE_STORE: "memory",
      SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
      // Optional: mutate-create then also looks up lifecycles (the bench pods are not in any trace).
      ...(process.env.BENCH_TRACE_PATH ? { TRACE_PATH: process.env.BENCH_TRACE_PATH } : {}),
      ...extra,
    },
  };
}

function childEnv(spec: ServerSpec, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...spec.env, PORT: String(port) };
  // The functions read these; the bench decides them.
  if (!spec.env.TRACE_PATH) delete env.TRACE_PATH;
  for (const key of ["DRIVER_USERS", "POD_NAMESPACE"]) delete env[key];
  if (!spec.env.KUBECONFIG) delete env.KUBECONFIG;
  return env;
}

function getStatus(url: URL, timeoutMs: number): Promise<number> {
  return new Promise((resolveStatus) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolveStatus(0));
  });
}

async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const port = await freePort();
  const child = startChild(process.execPath, spec.args, { env: childEnv(spec, port), cwd: REPO });
  const url = new URL(`http://127.0.0.1:${port}/`);
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  const ready = await waitUntil(
    async () => exited || (await getStatus(new URL("/healthz", url), 1_000)) === 200,
    START_TIMEOUT_MS,
    10,
  );
  if (!ready || exited) {
    await child.stop();
    throw new Error(`${spec.label} did not start (${exited ? "exited" : "no /healthz"}):\n${child.output()}`);
  }
  return { spec, child, url };
}

/** POSTs one review on a fresh connection; the answer's check, or "refused" when nothing listens yet. */
function postOnce(url: URL, request: LoadRequest, allowPatch: boolean): Promise<"ok" | "refused" | string> {
  return new Promise((resolveResult) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent: false,
        timeout: 5_000,
        headers: { "content-type": "application/json", "content-length": request.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const checked = checkAnswer(
            res.statusCode ?? 0,
            Buffer.concat(chunks).toString("utf8"),
            request.uid,
            {
              allowPatch,
            },
          );
          resolveResult(checked.error ? `${checked.error}: ${checked.detail}` : "ok");
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) =>
      resolveResult(err.code === "ECONNREFUSED" ? "refused" : `transport: ${err.message}`),
    );
    req.end(request.body);
  });
}

interface ColdStartSummary {
  bestMs: number;
  medianMs: number;
  /** Median time of the first review alone (API calls, lazy init). */
  medianFirstReviewMs: number;
  idleRssBytes?: number;
  runs: ColdStart[];
}

function summarizeColdStarts(runs: ColdStart[]): ColdStartSummary {
  const rss = runs.flatMap((r) => (r.idleRssBytes === undefined ? [] : [r.idleRssBytes]));
  const summary: ColdStartSummary = {
    bestMs: Math.min(...runs.map((r) => r.ms)),
    medianMs: median(runs.map((r) => r.ms)),
    medianFirstReviewMs: median(runs.map((r) => r.firstReviewMs)),
    runs,
  };
  if (rss.length > 0) summary.idleRssBytes = median(rss);
  return summary;
}

interface ColdStart {
  ms: number;
  /** How long the admitted review itself took: the rest of `ms` is starting up until listening. */
  firstReviewMs: number;
  idleRssBytes?: number;
}

/** Spawn to first admitted review, then the RSS after a short idle moment. */
async function coldStart(spec: ServerSpec, request: LoadRequest, allowPatch: boolean): Promise<ColdStart> {
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/`);
  const started = performance.now();
  const child = startChild(process.execPath, spec.args, { env: childEnv(spec, port), cwd: REPO });
  try {
    let last = "";
    let firstReviewMs = 0;
    const admitted = await waitUntil(
      async () => {
        const sent = performance.now();
        last = await postOnce(url, request, allowPatch);
        firstReviewMs = performance.now() - sent;
        if (last !== "ok" && last !== "refused") throw new Error(`${spec.label} answered badly: ${last}`);
        return last === "ok";
      },
      START_TIMEOUT_MS,
      2,
    );
    const ms = performance.now() - started;
    if (!admitted)
      throw new Error(`${spec.label} admitted nothing within ${START_TIMEOUT_MS} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 500));
    const rss = rssOf(child.pid) ?? (await fetchStats(new URL("/stats", url)))?.rssBytes;
    return typeof rss === "number" ? { ms, firstReviewMs, idleRssBytes: rss } : { ms, firstReviewMs };
  } finally {
    await child.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------
// The API double

interface ApiDouble {
  child: Child;
  url: string;
  requests(): Promise<RequestCount>;
}

async function startApiDouble(): Promise<ApiDouble> {
  const child = startChild(process.execPath, [API_DOUBLE], { ipc: true, cwd: REPO });
  let url = "";
  const ready = await waitUntil(
    async () => {
      const line = child.output().split("\n")[0] ?? "";
      if (!line.startsWith("{")) return false;
      url = (JSON.parse(line) as { url: string }).url;
      return true;
    },
    START_TIMEOUT_MS,
    10,
  );
  if (!ready) {
    await child.stop();
    throw new Error(`the API double did not start:\n${child.output()}`);
  }
  const requests = async (): Promise<RequestCount> => {
    const answer = new Promise<RequestCount>((resolveCount) => {
      const onMessage = (message: RequestCount) => {
        if (message?.type !== "requests") return;
        child.process.off("message", onMessage);
        resolveCount(message);
      };
      child.process.on("message", onMessage);
      child.process.send({ type: "requests" });
    });
    const count = await within(answer, 5_000);
    if (isTimedOut(count)) throw new Error("the API double did not report its request count");
    return count;
  };
  return { child, url, requests };
}

// ---------------------------------------------------------------------------------------------------------
// Measurements

interface Burst {
  throughput: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  errors: number;
  errorsByKind: LoadResult["errorsByKind"];
  errorSamples: string[];
  timedOut: boolean;
}

async function burst(url: URL, requests: LoadRequest[], allowPatch: boolean): Promise<Burst> {
  const result = await runLoad({
    target: url,
    requests,
    concurrency: CONCURRENCY,
    timeoutMs: BURST_TIMEOUT_MS,
    check: { allowPatch },
  });
  const latency = summarizeLatency(result.latenciesMs);
  return {
    throughput: (result.ok + result.errors) / (result.durationMs / 1000),
    p50Ms: latency.p50,
    p95Ms: latency.p95,
    p99Ms: latency.p99,
    errors: result.errors + (result.total - result.sent),
    errorsByKind: result.errorsByKind,
    errorSamples: result.errorSamples.slice(0, 3),
    timedOut: result.timedOut,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

// Other work on the machine only ever slows a round down, so the least disturbed round (best throughput,
// best p99) is the better estimate of what the code costs; the median is reported next to it.
interface Summary {
  label: string;
  rounds: Burst[];
  throughput: number;
  p99Ms: number;
  medianThroughput: number;
  medianP50Ms: number;
  medianP99Ms: number;
  errors: number;
}

function summarize(label: string, rounds: Burst[]): Summary {
  return {
    label,
    rounds,
    throughput: Math.max(...rounds.map((r) => r.throughput)),
    p99Ms: Math.min(...rounds.map((r) => r.p99Ms)),
    medianThroughput: median(rounds.map((r) => r.throughput)),
    medianP50Ms: median(rounds.map((r) => r.p50Ms)),
    medianP99Ms: median(rounds.map((r) => r.p99Ms)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

interface Contender {
  server: RunningServer;
  allowPatch: boolean;
  bursts: Burst[];
  /** Called around each measured burst (e.g. to count API requests). */
  around?: (run: () => Promise<Burst>) => Promise<Burst>;
}

/** Warm each server up, then alternate them round by round with the same requests. */
async function compare(contenders: Contender[], requestsFor: (seed: number) => LoadRequest[]): Promise<void> {
  const warmup = requestsFor(1000).slice(0, WARMUP_REVIEWS);
  for (const c of contenders) await burst(c.server.url, warmup, c.allowPatch);
  for (let round = 0; round < ROUNDS; round++) {
    const requests = requestsFor(round + 1);
    for (const c of contenders) {
      const run = () => burst(c.server.url, requests, c.allowPatch);
      c.bursts.push(await (c.around ? c.around(run) : run()));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Output

function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? "n/a" : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

interface Goal {
  name: string;
  value: string;
  goal: string;
  met: boolean | "n/a";
}

function printGoals(goals: Goal[]): void {
  const width = Math.max(...goals.map((g) => g.name.length));
  for (const g of goals) {
    const mark = g.met === "n/a" ? "  -  " : g.met ? " PASS" : " MISS";
    process.stdout.write(`${mark}  ${g.name.padEnd(width)}  ${g.value.padEnd(28)} goal ${g.goal}\n`);
  }
}

function printSummaries(title: string, summaries: Summary[]): void {
  process.stdout.write(`\n${title}\n`);
  const head = ["best rev/s", "median", "best p99", "median p99", "med p50", "errors"];
  process.stdout.write(`  ${"server".padEnd(30)}${head.map((h) => h.padStart(11)).join("")}\n`);
  for (const s of summaries) {
    const cells = [
      fmt(s.throughput, 0),
      fmt(s.medianThroughput, 0),
      `${fmt(s.p99Ms, 1)} ms`,
      `${fmt(s.medianP99Ms, 1)} ms`,
      `${fmt(s.medianP50Ms, 1)} ms`,
      String(s.errors),
    ];
    process.stdout.write(`  ${s.label.padEnd(30)}${cells.map((c) => c.padStart(11)).join("")}\n`);
  }
}

async function optionalBench(module: string, exportName: string): Promise<unknown> {
  try {
    const mod = (await import(module)) as Record<string, unknown>;
    const fn = mod[exportName];
    if (typeof fn !== "function") return { skipped: `${module} has no ${exportName}()` };
    return await (fn as () => Promise<unknown>)();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ERR_MODULE_NOT_FOUND") return { skipped: `${module} not built` };
    return { failed: (err as Error).message };
  }
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const startedAt = performance.now();
  process.stdout.write(
    `simkube-fn bench: node ${process.version}, ${os.cpus().length} cores, ${REVIEWS} reviews x ${ROUNDS} rounds at concurrency ${CONCURRENCY}, functions at LOG_LEVEL=${LOG_LEVEL}\n`,
  );
  const results: Record<string, unknown> = {
    meta: {
      node: process.version,
      cpus: os.cpus().length,
      reviews: REVIEWS,
      rounds: ROUNDS,
      concurrency: CONCURRENCY,
      logLevel: LOG_LEVEL,
      statistic: "median over rounds",
      date: new Date().toISOString(),
    },
  };
  const goals: Goal[] = [];
  const running: Child[] = [];
  let kubeconfig: string | undefined;
  try {
    const api = await startApiDouble();
    running.push(api.child);
    kubeconfig = await writeKubeconfig(api.url);
    const createRequestsFor = (seed: number) =>
      buildCreateRequests({
        count: REVIEWS,
        rootName: BENCH_ROOT_NAME,
        rootUid: BENCH_ROOT_UID,
        namespaces: BENCH_VIRTUAL_NAMESPACES,
        seed,
      });
    const teardownFor = (seed: number) =>
      buildTeardownReviews({
        count: REVIEWS,
        simName: BENCH_SIM_NAME,
        rootName: BENCH_ROOT_NAME,
        rootUid: BENCH_ROOT_UID,
        namespaces: BENCH_TRACED_NAMESPACES,
        seed,
        now: new Date(),
      });
    const teardownRequestsFor = (seed: number): LoadRequest[] =>
      teardownFor(seed).reviews.map((r) => ({ uid: r.uid, body: Buffer.from(JSON.stringify(r.review)) }));

    // --- issue 2 and 4: CREATE throughput (memory and cluster sequence store) vs bare ----------------------
    {
      const bare = await startServer(bareSpec());
      running.push(bare.child);
      const memory = await startServer(
        functionSpec("mutate-create", kubeconfig, { SEQUENCE_STORE: "memory" }),
      );
      running.push(memory.child);
      const cluster = await startServer(
        functionSpec("mutate-create", kubeconfig, { SEQUENCE_STORE: "cluster" }),
      );
      running.push(cluster.child);
      const contenders: Contender[] = [
        { server: bare, allowPatch: true, bursts: [] },
        { server: memory, allowPatch: true, bursts: [] },
        { server: cluster, allowPatch: true, bursts: [] },
      ];
      const apiBefore = await api.requests();
      await compare(contenders, createRequestsFor);
      const apiAfter = await api.requests();
      const [sBare, sMemory, sCluster] = contenders.map((c) => summarize(c.server.spec.label, c.bursts)) as [
        Summary,
        Summary,
        Summary,
      ];
      printSummaries("CREATE reviews (mutate-create)", [sBare, sMemory, sCluster]);
      for (const s of [bare, memory, cluster]) await s.child.stop();

      const throughputRatio = sMemory.throughput / sBare.throughput;
      const p99Ratio = sMemory.p99Ms / sBare.p99Ms;
      const clusterRatio = sCluster.throughput / sMemory.throughput;
      const clusterP99Ratio = sCluster.p99Ms / sMemory.p99Ms;
      goals.push({
        name: "issue 2: CREATE throughput vs bare",
        value: `${fmt(throughputRatio)} (${fmt(sMemory.throughput, 0)}/${fmt(sBare.throughput, 0)})`,
        goal: ">= 0.5",
        met: throughputRatio >= 0.5 && sMemory.errors === 0,
      });
      goals.push({
        name: "issue 2: CREATE p99 vs bare",
        value: `${fmt(p99Ratio)} (${fmt(sMemory.p99Ms)}/${fmt(sBare.p99Ms)} ms)`,
        goal: "(reported)",
        met: "n/a",
      });
      goals.push({
        name: "issue 4: cluster vs memory store throughput",
        value: `${fmt(clusterRatio)} (${fmt(sCluster.throughput, 0)}/${fmt(sMemory.throughput, 0)})`,
        goal: "(reported)",
        met: sCluster.errors === 0 ? "n/a" : false,
      });
      goals.push({
        name: "issue 4: cluster vs memory store p99",
        value: `${fmt(clusterP99Ratio)} (${fmt(sCluster.p99Ms)}/${fmt(sMemory.p99Ms)} ms)`,
        goal: "(reported)",
        met: "n/a",
      });
      results.issue2 = { bare: sBare, mutateCreate: sMemory, throughputRatio, p99Ratio };
      results.issue4 = {
        memory: sMemory,
        cluster: sCluster,
        throughputRatio: clusterRatio,
        p99Ratio: clusterP99Ratio,
        apiRequestsDuringCreateBursts: apiAfter.total - apiBefore.total,
      };
    }

    // --- issue 2: cold start and idle RSS ---------------------------------------------------------------------
    {
      const createReview = createRequestsFor(77)[0] as LoadRequest;
      const bareRuns: ColdStart[] = [];
      const fnRuns: ColdStart[] = [];
      for (let i = 0; i < COLD_STARTS; i++) {
        bareRuns.push(await coldStart(bareSpec(), createReview, true));
        fnRuns.push(await coldStart(functionSpec("mutate-create", kubeconfig), createReview, true));
      }
      const bare = summarizeColdStarts(bareRuns);
      const fn = summarizeColdStarts(fnRuns);
      const ratio = fn.bestMs / bare.bestMs;
      process.stdout.write(
        `\nCold start: spawn to first admitted CREATE (best, median of ${COLD_STARTS}; the first review alone, median); idle RSS (median)\n` +
          (
            [
              ["bare node:http", bare],
              ["mutate-create (bundle)", fn],
            ] as const
          )
            .map(
              ([label, c]) =>
                `  ${label.padEnd(26)}${fmt(c.bestMs, 0).padStart(6)} ms ${fmt(c.medianMs, 0).padStart(6)} ms` +
                `   first review ${fmt(c.medianFirstReviewMs, 0).padStart(4)} ms   ${mib(c.idleRssBytes)}\n`,
            )
            .join(""),
      );
      goals.push({
        name: "issue 2: cold start vs bare node",
        value: `${fmt(ratio)} (${fmt(fn.bestMs, 0)}/${fmt(bare.bestMs, 0)} ms)`,
        goal: "<= 2",
        met: ratio <= 2,
      });
      goals.push({
        name: "issue 2: idle RSS",
        value: `${mib(fn.idleRssBytes)} (bare ${mib(bare.idleRssBytes)})`,
        goal: "< 80 MB",
        met: fn.idleRssBytes === undefined ? "n/a" : fn.idleRssBytes < 80 * 1024 * 1024,
      });
      results.coldStart = { bare, mutateCreate: fn, ratio };
    }

    // --- issue 3: teardown burst ----------------------------------------------------------------------------
    {
      const bare = await startServer(bareSpec());
      running.push(bare.child);
      const fn = await startServer(functionSpec("reschedule-delete", kubeconfig));
      running.push(fn.child);
      const apiPerBurst: number[] = [];
      const statsUrl = new URL("/stats", fn.url);
      const statsBefore = await fetchStats(statsUrl);
      const contenders: Contender[] = [
        { server: bare, allowPatch: false, bursts: [] },
        {
          server: fn,
          allowPatch: false,
          bursts: [],
          around: async (run) => {
            const before = await api.requests();
            const result = await run();
            apiPerBurst.push((await api.requests()).total - before.total);
            return result;
          },
        },
      ];
      await compare(contenders, teardownRequestsFor);
      const statsAfter = await fetchStats(statsUrl);
      const [sBare, sFn] = contenders.map((c) => summarize(c.server.spec.label, c.bursts)) as [
        Summary,
        Summary,
      ];
      printSummaries(`Teardown burst (${REVIEWS} DELETE reviews, concurrency ${CONCURRENCY})`, [sBare, sFn]);
      const before = clonesIn(statsBefore);
      const after = clonesIn(statsAfter);
      const clones = before !== undefined && after !== undefined ? after - before : undefined;
      const rss = typeof statsAfter?.rssBytes === "number" ? statsAfter.rssBytes : undefined;
      process.stdout.write(
        `  clones created: ${clones ?? "unknown"}; API requests per burst: ${apiPerBurst.join(", ")}; reschedule-delete RSS after: ${mib(rss)}\n`,
      );
      for (const s of [bare, fn]) await s.child.stop();

      const throughputRatio = sFn.throughput / sBare.throughput;
      const p99Ratio = sFn.p99Ms / sBare.p99Ms;
      goals.push({ name: "issue 3: errors", value: String(sFn.errors), goal: "0", met: sFn.errors === 0 });
      goals.push({
        name: "issue 3: clones",
        value: String(clones ?? "unknown"),
        goal: "0",
        met: clones === 0,
      });
      goals.push({
        name: "issue 3: throughput vs bare",
        value: `${fmt(throughputRatio)} (${fmt(sFn.throughput, 0)}/${fmt(sBare.throughput, 0)})`,
        goal: ">= 0.8",
        met: throughputRatio >= 0.8,
      });
      goals.push({
        name: "issue 3: p99 vs bare",
        value: `${fmt(p99Ratio)} (${fmt(sFn.p99Ms)}/${fmt(sBare.p99Ms)} ms)`,
        goal: "< 2",
        met: p99Ratio < 2,
      });
      const teardown = teardownFor(1);
      results.issue3 = {
        bare: sBare,
        rescheduleDelete: sFn,
        throughputRatio,
        p99Ratio,
        clonesCreated: clones ?? "unknown",
        apiRequestsPerBurst: apiPerBurst,
        reviewKinds: teardown.byKind,
        rescheduleDeleteStats: statsAfter ?? "unknown",
      };
    }

    await api.child.stop();
  } finally {
    for (const child of running) await child.stop();
    if (kubeconfig) await removeKubeconfig(kubeconfig);
  }

  // --- in-process micro-benchmarks of other modules ---------------------------------------------------------
  results.sequence = await optionalBench("./sequence-bench.js", "benchSequence");
  results.hash = await optionalBench("./hash-bench.js", "benchHash");
  const hash = results.hash as { ratio?: number; name?: string; baselineName?: string };
  if (typeof hash.ratio === "number") {
    goals.push({
      name: `hash: ${hash.name ?? "benchHash"} vs ${hash.baselineName ?? "baseline"}`,
      value: fmt(hash.ratio),
      goal: "(reported)",
      met: "n/a",
    });
  }
  // A real control plane (issue 8): skipped with a reason when Go is missing.
  results.clusterTeardown = await optionalBench("./cluster-teardown-bench.js", "benchClusterTeardown");
  const ct = results.clusterTeardown as { ratio?: number; rounds?: TeardownRound[] };
  if (typeof ct.ratio === "number" && ct.rounds) {
    const [hooked, bare] = ct.rounds as [TeardownRound, TeardownRound];
    goals.push({
      name: `issue 8: real teardown of ${hooked.pods} pods, DELETE webhook vs none`,
      value: `${fmt(ct.ratio)} (${fmt(hooked.teardownMs / 1000, 1)}/${fmt(bare.teardownMs / 1000, 1)} s), ${hooked.clonesCreated} clones, ${hooked.webhookErrors} webhook errors`,
      goal: "0 clones, 0 errors",
      met: hooked.clonesCreated === 0 && hooked.webhookErrors === 0,
    });
  }
  process.stdout.write(`\ncluster teardown: ${JSON.stringify(results.clusterTeardown)}\n`);
  process.stdout.write(`sequence store: ${JSON.stringify(results.sequence)}\n`);
  process.stdout.write(`hash: ${JSON.stringify(results.hash)}\n`);

  process.stdout.write("\nSummary (ratios: function / baseline, same run; best round of each, see above)\n");
  printGoals(goals);
  results.goals = goals;
  results.meta = { ...(results.meta as object), durationSeconds: (performance.now() - startedAt) / 1000 };
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nwrote ${RESULTS_FILE} in ${fmt((performance.now() - startedAt) / 1000, 1)} s\n`);
  return 0;
}

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
