// `npm run bench`: the project's benchmarks, each a ratio against a baseline measured in the same run, so
// that the numbers mean something on a noisy machine. Never part of `npm test`.
//
// Layout (made for 2 cores): the load generator is wrk (see wrk.ts for why), a process of its own pinned to
// core 0; the server under test is a child process pinned to core 1 (the built bundle `serve <fn>`, or the
// bare node:http baseline, started the same way: same Node, no NODE_OPTIONS, same LOG_LEVEL); the API double
// is another child, mostly idle, on core 0. This process only orchestrates. Servers are measured one at a
// time, alternating function and baseline round by round; each server first gets a warm-up from the Node
// client whose every answer is checked in full (uid echoed, allowed, no patch on DELETE), then a short wrk
// warm-up. Every round prints the saturation evidence: the server's CPU (from /proc, cores = CPU s / wall s)
// and wrk's own CPU. A bare server near 1.0 core with wrk well below 1.0 means the server is the bottleneck,
// so the ratios measure the functions and not the client. Every child is started and stopped by pid on a free
// 127.0.0.1 port, and every wait is bounded.
//
//   issue 2  mutate-create CREATE throughput and p99 (SEQUENCE_STORE=memory) vs the bare server; cold start
//            (spawn to first admitted review) and idle RSS vs the bare server started the same way
//   issue 11 the CREATE floor (floor-server.ts: bare plus the hash, sequence and patch every answer needs)
//            in the same rounds, so the CREATE gap splits into the answer's own cost and mutate-create's
//   issue 3  teardown burst (DELETE reviews from functions/loadtest) against reschedule-delete vs the bare
//            server: errors, clones, throughput, p99, API requests the double saw
//   issue 4  mutate-create with SEQUENCE_STORE=cluster vs memory (plus benchSequence())
//   hash     benchHash()
//   issue 8  benchClusterTeardown(): 2,000 pods torn down on a real control plane, DELETE webhook vs none
//   issue 10 benchBigTrace() (trace-bench.ts): a ~50 MB trace's load time, peak RSS, `trace inspect`, cold start
//
// Results: a table on stdout and dist/bench-results.json. Environment knobs: BENCH_ROUNDS (default 3),
// BENCH_SECONDS (5 per burst), BENCH_PACED_RATE (2000 reviews/s for the latency at a set rate),
// BENCH_REVIEWS (5000 distinct reviews, cycled), BENCH_CONCURRENCY (64
// connections), BENCH_COLD_STARTS (5), BENCH_TRACE_PATH (none), BENCH_NODE (path of the Node that runs the
// servers, default this one), BENCH_COLD_START_ONLY=1 (skip the bursts and micro-benchmarks), BENCH_TRACE_ONLY=1
// (only issue 10's big trace; no wrk needed), BENCH_TRACE_ROUNDS (5), BENCH_SERVE_FLAGS (Node flags for the
// functions, to try them; their code cache is written with them), BENCH_CLUSTER_PODS (2000; 0 leaves out the
// real control plane), BENCH_PARTS (a comma list of create, cold, trace, teardown, micro, instructions,
// cluster; default all; instructions needs valgrind, see instructions.ts),
// BENCH_AGAINST (the dist/bundle folder of another build, measured beside this one).
// Needs wrk (`apt-get install -y wrk`).

import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname } from "node:path";
import type { LoadRequest } from "../../functions/cli/loadtest/load.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { createRequestsFor } from "./bench-bursts.js";
import { fmt, mib, pinText } from "./bench-format.js";
import { instructionGoals, printGoals, type Report, saturationEvidence } from "./bench-report.js";
import { benchReviews } from "./bench-reviews.js";
import {
  type BenchSetup,
  type Builds,
  bareSpec,
  type ColdStart,
  coldStart,
  functionSpec,
  summarizeColdStarts,
} from "./bench-servers.js";
import {
  AGAINST_BUNDLE_DIR,
  COLD_STARTS,
  CONCURRENCY,
  LOAD_PIN,
  LOG_LEVEL,
  RESULTS_FILE,
  REVIEWS,
  ROUNDS,
  runs,
  SECONDS,
  SERVE_ENV,
  SERVE_FLAGS,
  SERVER_PIN,
  TRACE_ONLY,
} from "./bench-settings.js";
import type { TeardownRound } from "./cluster-teardown-bench.js";
import { createRounds } from "./create-rounds.js";
import {
  bundleFor,
  envText,
  imageNodeRelease,
  nodeVersion,
  SERVER_NODE,
  serverNodeLine,
  startApiDouble,
} from "./node-children.js";
import type { Child } from "./processes.js";
import { teardownRounds } from "./teardown-rounds.js";
import { benchBigTrace } from "./trace-bench.js";
import { createWrkWorkspace, wrkInstalled } from "./wrk.js";

async function main(): Promise<number> {
  const startedAt = performance.now();
  if (!wrkInstalled()) {
    process.stderr.write(
      "bench needs wrk, the load generator: apt-get install -y wrk (macOS: brew install wrk)\n",
    );
    return 2;
  }
  printSetup();
  const report: Report = { goals: [], results: { meta: runMeta() }, everySummary: [] };
  const { goals, results, everySummary } = report;
  const running: Child[] = [];
  const workspace = createWrkWorkspace();
  const bundle = bundleFor(SERVER_NODE, SERVE_FLAGS);
  const against = AGAINST_BUNDLE_DIR ? bundleFor(SERVER_NODE, SERVE_FLAGS, AGAINST_BUNDLE_DIR) : undefined;
  const builds: Builds = { bundle: bundle.entry, against: against?.entry ?? "" };
  let kubeconfig: string | undefined;
  try {
    const api = await startApiDouble(LOAD_PIN);
    running.push(api.child);
    kubeconfig = await writeKubeconfig(api.url);
    const setup: BenchSetup = { builds, kubeconfig, api, workspace, running };

    // --- issue 2 and 4: CREATE throughput (memory and cluster sequence store) vs bare ----------------------
    if (runs("create")) await createRounds(setup, report);

    // --- issue 2: cold start and idle RSS ---------------------------------------------------------------------
    if (runs("cold")) await coldStarts(setup, report);

    // --- issue 10: a big trace ------------------------------------------------------------------------------
    if (runs("trace")) {
      const bigTrace = await traceSection(builds, kubeconfig, createRequestsFor(77)[0] as LoadRequest);
      results.bigTrace = bigTrace.results;
      goals.push(...bigTrace.goals);
    }

    // --- issue 3: teardown burst ----------------------------------------------------------------------------
    if (runs("teardown")) await teardownRounds(setup, report);

    await api.child.stop();
  } finally {
    for (const child of running) await child.stop();
    if (kubeconfig) await removeKubeconfig(kubeconfig);
    workspace.remove();
    bundle.remove();
    against?.remove();
  }
  if (everySummary.length > 0) {
    const evidence = saturationEvidence(everySummary);
    process.stdout.write(`\n${evidence.text}\n`);
    goals.unshift(...evidence.goals);
    results.saturation = evidence.goals;
  }

  // --- in-process micro-benchmarks of other modules ---------------------------------------------------------
  await microBenches(report);

  process.stdout.write("\nSummary (ratios: function / baseline, same run; best round of each, see above)\n");
  printGoals(goals);
  results.goals = goals;
  results.meta = { ...(results.meta as object), durationSeconds: (performance.now() - startedAt) / 1000 };
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nwrote ${RESULTS_FILE} in ${fmt((performance.now() - startedAt) / 1000, 1)} s\n`);
  return 0;
}

/** The first lines of the output: Node, cores, load, and how load and servers are run and pinned. */
function printSetup(): void {
  const load = os.loadavg().map((l) => l.toFixed(2));
  process.stdout.write(
    `simkube-fn bench: node ${process.version}, ${os.cpus().length} cores, load average ${load.join(" ")}\n` +
      `  load: wrk, 1 thread, ${CONCURRENCY} connections, ${SECONDS} s per burst x ${ROUNDS} rounds, cycling ${REVIEWS} reviews (${pinText(LOAD_PIN)})\n` +
      `  servers: ${pinText(SERVER_PIN)} ${SERVER_NODE} (${nodeVersion(SERVER_NODE)}), no NODE_OPTIONS, functions at LOG_LEVEL=${LOG_LEVEL} with node flags [${SERVE_FLAGS.join(" ")}] and the image's environment [${envText(SERVE_ENV)}] (bare: none)\n` +
      `  ${serverNodeLine(nodeVersion(SERVER_NODE), imageNodeRelease())}\n`,
  );
}

/** results.meta: what the run was made with. */
function runMeta(): Record<string, unknown> {
  return {
    node: process.version,
    serverNode: nodeVersion(SERVER_NODE),
    cpus: os.cpus().length,
    loadAverage: os.loadavg(),
    generator: "wrk -t1",
    secondsPerBurst: SECONDS,
    reviews: REVIEWS,
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    serverPin: SERVER_PIN,
    loadPin: LOAD_PIN,
    logLevel: LOG_LEVEL,
    serveNodeFlags: SERVE_FLAGS,
    statistic: "best and median over rounds",
    date: new Date().toISOString(),
  };
}

/** Issue 2's cold starts (BENCH_PARTS cold): spawn to first admitted CREATE and idle RSS, vs bare. */
async function coldStarts(setup: BenchSetup, report: Report): Promise<void> {
  const { builds, kubeconfig } = setup;
  const { goals, results } = report;
  const createReview = createRequestsFor(77)[0] as LoadRequest;
  const bareRuns: ColdStart[] = [];
  const fnRuns: ColdStart[] = [];
  const againstRuns: ColdStart[] = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    bareRuns.push(await coldStart(bareSpec(), createReview, true));
    fnRuns.push(await coldStart(functionSpec(builds, "mutate-create", kubeconfig), createReview, true));
    if (builds.against) {
      const spec = functionSpec(builds, "mutate-create", kubeconfig, {}, true);
      againstRuns.push(await coldStart(spec, createReview, true));
    }
  }
  const bare = summarizeColdStarts(bareRuns);
  const fn = summarizeColdStarts(fnRuns);
  const against = builds.against ? summarizeColdStarts(againstRuns) : undefined;
  const ratio = fn.bestMs / bare.bestMs;
  process.stdout.write(
    `\nCold start: spawn to first admitted CREATE (best, median of ${COLD_STARTS}; the first review alone, median); idle RSS (median)\n` +
      (
        [
          ["bare node:http", bare],
          ["mutate-create (bundle)", fn],
          ...(against ? [["mutate-create AGAINST", against] as const] : []),
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
    goal: "<= 1.5 (issue 11)",
    met: ratio <= 1.5,
  });
  if (against) {
    goals.push({
      name: "cold start: this build / BENCH_AGAINST",
      value: `${fmt(fn.bestMs / against.bestMs)} best (${fmt(fn.bestMs, 0)}/${fmt(against.bestMs, 0)} ms), ${fmt(fn.medianMs / against.medianMs)} median`,
      goal: "(reported)",
      met: "n/a",
    });
  }
  goals.push({
    name: "issue 2: idle RSS",
    value: `${mib(fn.idleRssBytes)} (bare ${mib(bare.idleRssBytes)})`,
    goal: "< 70 MiB (issue 11)",
    met: fn.idleRssBytes === undefined ? "n/a" : fn.idleRssBytes < 70 * 1024 * 1024,
  });
  results.coldStart = { bare, mutateCreate: fn, ratio };
}

/** The in-process micro-benchmarks, the instruction counts and the real control plane, each when its part runs. */
async function microBenches(report: Report): Promise<void> {
  const { goals, results } = report;
  results.sequence = runs("micro")
    ? await optionalBench("./sequence-bench.js", "benchSequence")
    : { skipped: "BENCH_PARTS" };
  results.hash = runs("micro")
    ? await optionalBench("./hash-bench.js", "benchHash")
    : { skipped: "BENCH_PARTS" };
  const hash = results.hash as { ratio?: number; name?: string; baselineName?: string };
  if (typeof hash.ratio === "number") {
    goals.push({
      name: `hash: ${hash.name ?? "benchHash"} vs ${hash.baselineName ?? "baseline"}`,
      value: fmt(hash.ratio),
      goal: "(reported)",
      met: "n/a",
    });
  }
  // Instructions per review under valgrind (instructions.ts): the figures this VM's noise does not move.
  results.instructions = runs("instructions")
    ? await optionalBench("./instructions.js", "benchInstructions")
    : { skipped: "BENCH_PARTS" };
  goals.push(...instructionGoals(results.instructions));
  // A real control plane (issue 8): skipped with a reason when Go is missing.
  results.clusterTeardown = runs("cluster")
    ? await optionalBench("./cluster-teardown-bench.js", "benchClusterTeardown")
    : { skipped: "BENCH_PARTS" };
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
  process.stdout.write(`instructions: ${JSON.stringify(results.instructions)}\n`);
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

/** Issue 10 (trace-bench.ts), with this file's cold start of mutate-create. */
function traceSection(
  builds: Builds,
  kubeconfig: string,
  review: LoadRequest,
): ReturnType<typeof benchBigTrace> {
  return benchBigTrace({
    bundle: builds.bundle,
    coldStart: (env) => coldStart(functionSpec(builds, "mutate-create", kubeconfig, env), review, true),
  });
}

/** BENCH_TRACE_ONLY=1: the big trace alone. */
async function traceOnlyMain(): Promise<number> {
  const bundle = bundleFor(SERVER_NODE);
  const builds: Builds = { bundle: bundle.entry, against: "" };
  const api = await startApiDouble(LOAD_PIN);
  const kubeconfig = await writeKubeconfig(api.url);
  try {
    const review = benchReviews("create", { count: 1, seed: 77 })[0] as LoadRequest;
    const { results, goals } = await traceSection(builds, kubeconfig, review);
    process.stdout.write("\nSummary (same run)\n");
    printGoals(goals);
    mkdirSync(dirname(RESULTS_FILE), { recursive: true });
    writeFileSync(
      RESULTS_FILE,
      `${JSON.stringify({ bigTrace: results, goals, date: new Date().toISOString() }, null, 2)}\n`,
    );
    return 0;
  } finally {
    await api.child.stop();
    await removeKubeconfig(kubeconfig);
    bundle.remove();
  }
}

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) {
  (TRACE_ONLY ? traceOnlyMain() : main()).then(
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
