// `npm run bench:sequence-stress`: the proof that sequence numbers stay exact under load. SimKube's cronjob
// and bare-pods traces replayed on the real local cluster (`simkube-fn replay --cluster local --trace FILE
// --json`) while a CPU hog keeps both cores busy, STRESS_RUNS times each. Each run must match every lifecycle
// and read back 0 sequence gaps and 0 duplicates from the store (cluster-report.ts). Heavy: it loads the
// whole machine; never part of `npm test`.
//
// Speeds: bare-pods at 4 (as test/cluster/replay-cluster.test.ts); cronjob at 1, because a CronJob fires on
// the wall clock's minutes whatever the speed (at 4 its 205 s of trace pass before it fires: no pod).
// Knobs: STRESS_RUNS (10 per trace), STRESS_SPEED (overrides both), STRESS_TRACES (bare-pods,cronjob), STRESS_HOGS (2,
// one per core). Each hog is a Node child spinning until its own deadline (the run's timeout), and is ended
// by pid after the run. Results: a table on stdout and dist/sequence-stress.json.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { findSharedTrace } from "../support/trace-builder.js";
import { REPO } from "./node-children.js";

const RUN_TIMEOUT_MS = 600_000;
const envInt = (name: string, fallback: number) => {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};
const RUNS = envInt("STRESS_RUNS", 10);
const SPEED_OVERRIDE = envInt("STRESS_SPEED", 0);
const speedFor = (trace: string) => SPEED_OVERRIDE || (trace === "cronjob" ? 1 : 4);
// 0 is allowed: a second copy beside one that already runs the hogs.
const HOGS = Number.isInteger(Number(process.env.STRESS_HOGS))
  ? Math.max(0, Number(process.env.STRESS_HOGS))
  : 2;
const TRACES = (process.env.STRESS_TRACES ?? "bare-pods,cronjob").split(",").map((t) => t.trim());
const CLI = join(REPO, "dist/bundle/simkube-fn.mjs");
const RESULTS_FILE = join(REPO, `dist/sequence-stress-${TRACES.join("-")}.json`);

interface RunResult {
  trace: string;
  speed: number;
  run: number;
  exitCode: number | null;
  seconds: number;
  counts?: Record<string, unknown>;
  tail: string;
}

/** A child that spins one core until `ms` have passed (it ends itself even if we die). */
function startHog(ms: number): ChildProcess {
  const code = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x = (x * 31 + 7) % 1000003;`;
  const hog = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
  live.add(hog);
  hog.on("exit", () => live.delete(hog));
  return hog;
}

function stopHog(hog: ChildProcess): void {
  if (hog.pid !== undefined && hog.exitCode === null) process.kill(hog.pid, "SIGKILL");
}

/** What runs now, ended by pid when this script is stopped. */
const live = new Set<ChildProcess>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    // The replay stops the cluster it started on SIGTERM; the hogs just end.
    for (const child of live) if (child.exitCode === null) child.kill("SIGTERM");
    setTimeout(() => process.exit(130), 15_000).unref();
  });
}

function replayOnce(tracePath: string, speed: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const args = [
      CLI,
      "replay",
      "--cluster",
      "local",
      "--trace",
      tracePath,
      "--speed",
      String(speed),
      "--json",
    ];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], cwd: REPO });
    live.add(child);
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    // SIGTERM: the command stops the cluster it started before exiting.
    const timer = setTimeout(() => child.kill("SIGTERM"), RUN_TIMEOUT_MS);
    child.on("exit", (code) => {
      live.delete(child);
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

function lastJson(out: string): Record<string, unknown> | undefined {
  const line = out
    .trim()
    .split("\n")
    .reverse()
    .find((l) => l.startsWith("{"));
  try {
    return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function runTrace(trace: string, tracePath: string, run: number): Promise<RunResult> {
  const hogs = Array.from({ length: HOGS }, () => startHog(RUN_TIMEOUT_MS));
  const started = Date.now();
  try {
    const { code, out } = await replayOnce(tracePath, speedFor(trace));
    const counts = lastJson(out);
    const tail = out.trim().split("\n").slice(-14).join("\n");
    return {
      trace,
      speed: speedFor(trace),
      run,
      exitCode: code,
      seconds: (Date.now() - started) / 1000,
      ...(counts ? { counts } : {}),
      tail,
    };
  } finally {
    for (const hog of hogs) stopHog(hog);
  }
}

function passed(r: RunResult): boolean {
  const c = r.counts;
  return (
    c !== undefined &&
    c.lifecyclesMatched === c.lifecyclesExpected &&
    c.sequenceGaps === 0 &&
    c.sequenceDuplicates === 0 &&
    c.errors === 0
  );
}

function row(r: RunResult): string {
  const c = r.counts ?? {};
  return `${r.trace.padEnd(10)} #${String(r.run).padEnd(3)} exit ${r.exitCode}  lifecycles ${c.lifecyclesMatched}/${c.lifecyclesExpected}  seq handed out ${c.sequenceHandedOut}  gaps ${c.sequenceGaps}  duplicates ${c.sequenceDuplicates}  errors ${c.errors}  ${r.seconds.toFixed(0)} s  ${passed(r) ? "OK" : "FAILED"}`;
}

async function main(): Promise<number> {
  const results: RunResult[] = [];
  const speeds = TRACES.map((t) => `${t} at speed ${speedFor(t)}`).join(", ");
  process.stdout.write(`sequence stress: ${speeds}, ${RUNS} runs each, ${HOGS} CPU hog(s)\n`);
  for (const trace of TRACES) {
    const tracePath = findSharedTrace(`${trace}.sktrace`);
    if (!tracePath) throw new Error(`SimKube's ${trace}.sktrace not found beside the repo`);
    for (let run = 1; run <= RUNS; run++) {
      const r = await runTrace(trace, tracePath, run);
      results.push(r);
      process.stdout.write(`${row(r)}\n`);
      if (!passed(r)) process.stdout.write(`${r.tail}\n`);
    }
  }
  const ok = results.filter(passed).length;
  process.stdout.write(`\n${ok}/${results.length} runs matched every lifecycle with 0 sequence gaps\n`);
  mkdirSync(dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(
    RESULTS_FILE,
    `${JSON.stringify({ date: new Date().toISOString(), hogs: HOGS, results }, null, 2)}\n`,
  );
  return ok === results.length ? 0 : 1;
}

// Under the test runner (NODE_TEST_CONTEXT set) it does nothing, like run.ts.
if (!process.env.NODE_TEST_CONTEXT) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`sequence stress failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
