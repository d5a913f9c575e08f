// Issue 10: a big trace (~50 MB, 200,000 pod lifecycles, test/bench/big-trace.ts), fast and frugal.
// Every measure runs in a fresh child process, so each peak RSS is that process's own, and the contenders
// alternate round by round so the machine's other work disturbs them alike:
//
//   load      read + lean decode (loadTraceForLookups, what mutate-create does at start): time, peak RSS
//             (VmHWM) as a multiple of the file size. Goals: < 1 s, < 4x.
//   inspect   `simkube-fn trace inspect FILE --json` (the bundle), spawn to exit, against a child that reads
//             the file and decodes it with msgpackr (no checks), spawn to exit. Goal: <= 2x.
//   read      only reading the bytes (shared/trace/source.ts), to tell its share of the peak; and the lean
//             decode of the file read by one readFileSync (one copy of the bytes instead of chunks + concat).
//   full      loadTrace (every event built, what the replay needs), for comparison.
//   cold      `serve mutate-create` with TRACE_PATH set to the trace, spawn to first admitted review
//             (bench-servers.ts's coldStart), against the same without a trace plus the load time.
//
// BENCH_TRACE_ROUNDS (default 5) sets the rounds.

import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBigTraceBytes, DEFAULT_BIG_TRACE } from "./big-trace.js";
import { REPO } from "./node-children.js";
import { startChild } from "./processes.js";
import type { LoadSample } from "./trace-load-child.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const LOAD_CHILD = join(HERE, "trace-load-child.js");
const CHILD_TIMEOUT_MS = 60_000;

export interface ColdStartSample {
  ms: number;
  firstReviewMs: number;
  idleRssBytes?: number;
}

export interface TraceBenchOptions {
  /** The CLI bundle's entry (for `trace inspect`). */
  bundle: string;
  /** Spawn to first admitted CREATE of `serve mutate-create` with these variables added (run.ts). */
  coldStart: (env: Record<string, string>) => Promise<ColdStartSample>;
  rounds?: number;
}

export interface TraceGoal {
  name: string;
  value: string;
  goal: string;
  met: boolean | "n/a";
}

interface Rounds {
  lean: LoadSample[];
  leanOneRead: LoadSample[];
  read: LoadSample[];
  full: LoadSample[];
  msgpackr: LoadSample[];
  /** Spawn to exit, ms. */
  inspectWall: number[];
  msgpackrWall: number[];
  coldWithTrace: ColdStartSample[];
  coldWithout: ColdStartSample[];
}

export async function benchBigTrace(
  options: TraceBenchOptions,
): Promise<{ results: Record<string, unknown>; goals: TraceGoal[] }> {
  const dir = mkdtempSync(join(tmpdir(), "simkube-fn-trace-bench-"));
  try {
    const file = join(dir, "big.sktrace");
    const built = performance.now();
    writeFileSync(file, buildBigTraceBytes(DEFAULT_BIG_TRACE));
    const size = statSync(file).size;
    const lifecycles =
      DEFAULT_BIG_TRACE.barePods + DEFAULT_BIG_TRACE.deployments * DEFAULT_BIG_TRACE.podsPerDeployment;
    process.stdout.write(
      `\nBig trace: ${mb(size)} (${lifecycles} pod lifecycles), written in ${fmt((performance.now() - built) / 1000, 1)} s\n`,
    );
    const rounds = await measure(options, file);
    return report(rounds, size);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(options: TraceBenchOptions, file: string): Promise<Rounds> {
  const r: Rounds = {
    lean: [],
    leanOneRead: [],
    read: [],
    full: [],
    msgpackr: [],
    inspectWall: [],
    msgpackrWall: [],
    coldWithTrace: [],
    coldWithout: [],
  };
  const count = options.rounds ?? envInt("BENCH_TRACE_ROUNDS", 5);
  for (let round = 0; round < count; round++) {
    r.lean.push((await nodeChild([LOAD_CHILD, "lean", file])).sample);
    const plain = await nodeChild([LOAD_CHILD, "msgpackr", file]);
    r.msgpackr.push(plain.sample);
    r.msgpackrWall.push(plain.wallMs);
    r.inspectWall.push((await nodeChild([options.bundle, "trace", "inspect", file, "--json"])).wallMs);
    r.full.push((await nodeChild([LOAD_CHILD, "full", file])).sample);
    r.read.push((await nodeChild([LOAD_CHILD, "read", file])).sample);
    r.leanOneRead.push((await nodeChild([LOAD_CHILD, "lean-one-read", file])).sample);
    r.coldWithout.push(await options.coldStart({}));
    r.coldWithTrace.push(await options.coldStart({ TRACE_PATH: file }));
    const last = (xs: { ms: number }[]) => fmt(xs.at(-1)?.ms, 0);
    process.stdout.write(
      `  round ${round + 1}: load ${last(r.lean)} ms (peak ${mb(r.lean.at(-1)?.peakRssBytes)}), msgpackr ${last(r.msgpackr)} ms, ` +
        `inspect ${fmt(r.inspectWall.at(-1), 0)} ms vs msgpackr process ${fmt(r.msgpackrWall.at(-1), 0)} ms, full ${last(r.full)} ms, ` +
        `cold start ${last(r.coldWithTrace)} ms with trace, ${last(r.coldWithout)} ms without\n`,
    );
  }
  return r;
}

/** Runs `node ...args` to its end: its JSON line (when it prints one) and its wall time from spawn to exit. */
async function nodeChild(args: string[]): Promise<{ sample: LoadSample; wallMs: number }> {
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const started = performance.now();
  const child = startChild(process.execPath, args, { env, cwd: REPO });
  const timer = setTimeout(() => void child.stop(), CHILD_TIMEOUT_MS);
  const code = await child.exited;
  const wallMs = performance.now() - started;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`node ${args.join(" ")} exited with ${code}:\n${child.output()}`);
  const line = child.output().trim().split("\n").at(-1) ?? "";
  const sample = (line.startsWith('{"mode"') ? JSON.parse(line) : { mode: "cli", ms: wallMs }) as LoadSample;
  return { sample, wallMs };
}

function report(r: Rounds, size: number): { results: Record<string, unknown>; goals: TraceGoal[] } {
  const ms = (xs: { ms: number }[]) => xs.map((x) => x.ms);
  const lean = stats(ms(r.lean));
  const plain = stats(ms(r.msgpackr));
  const full = stats(ms(r.full));
  const inspect = stats(r.inspectWall);
  const plainWall = stats(r.msgpackrWall);
  const peak = stats(r.lean.map((s) => s.peakRssBytes));
  const rssBefore = stats(r.lean.map((s) => s.rssBeforeBytes));
  const fullPeak = stats(r.full.map((s) => s.peakRssBytes));
  const readPeak = stats(r.read.map((s) => s.peakRssBytes));
  const read = stats(ms(r.read));
  const oneRead = stats(ms(r.leanOneRead));
  const oneReadPeak = stats(r.leanOneRead.map((s) => s.peakRssBytes));
  const plainPeak = stats(r.msgpackr.map((s) => s.peakRssBytes));
  const withTrace = stats(ms(r.coldWithTrace));
  const without = stats(ms(r.coldWithout));
  const expected = without.median + lean.median;
  const lines = [
    `Big trace, ${r.lean.length} rounds (best / median):`,
    `  load (read + lean decode)      ${fmt(lean.best, 0)} / ${fmt(lean.median, 0)} ms, peak RSS ${mb(peak.median)} = ${fmt(peak.median / size)}x the file (${fmt((peak.median - rssBefore.median) / size)}x above the ${mb(rssBefore.median)} the process had before)`,
    `  of which reading the bytes     ${fmt(read.best, 0)} / ${fmt(read.median, 0)} ms, peak RSS ${mb(readPeak.median)} = ${fmt(readPeak.median / size)}x`,
    `  lean, file read in one piece   ${fmt(oneRead.best, 0)} / ${fmt(oneRead.median, 0)} ms, peak RSS ${mb(oneReadPeak.median)} = ${fmt(oneReadPeak.median / size)}x`,
    `  full decode (loadTrace)        ${fmt(full.best, 0)} / ${fmt(full.median, 0)} ms, peak RSS ${mb(fullPeak.median)} = ${fmt(fullPeak.median / size)}x`,
    `  msgpackr read + decode         ${fmt(plain.best, 0)} / ${fmt(plain.median, 0)} ms, peak RSS ${mb(plainPeak.median)} = ${fmt(plainPeak.median / size)}x`,
    `  trace inspect (process)        ${fmt(inspect.best, 0)} / ${fmt(inspect.median, 0)} ms vs msgpackr process ${fmt(plainWall.best, 0)} / ${fmt(plainWall.median, 0)} ms`,
    `  cold start, TRACE_PATH         ${fmt(withTrace.best, 0)} / ${fmt(withTrace.median, 0)} ms vs without ${fmt(without.best, 0)} / ${fmt(without.median, 0)} ms (+ load: ${fmt(expected, 0)} ms)`,
    `  idle RSS after the first review ${mb(idleRss(r.coldWithTrace))} with the trace, ${mb(idleRss(r.coldWithout))} without (median)`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  const results = {
    fileBytes: size,
    shape: DEFAULT_BIG_TRACE,
    rounds: r,
    lean,
    full,
    msgpackr: plain,
    inspect,
    plainWall,
    peak,
    rssBefore,
    read,
    readPeak,
    oneRead,
    oneReadPeak,
    fullPeak,
    plainPeak,
    withTrace,
    without,
  };
  return {
    results,
    goals: goals({
      lean,
      peak,
      rssBefore,
      inspect,
      plainWall,
      plain,
      withTrace,
      expected,
      expectedBest: without.best + lean.best,
      size,
    }),
  };
}

function idleRss(runs: ColdStartSample[]): number | undefined {
  const rss = runs.flatMap((c) => (c.idleRssBytes === undefined ? [] : [c.idleRssBytes]));
  return rss.length > 0 ? stats(rss).median : undefined;
}

interface Figures {
  lean: Stats;
  peak: Stats;
  rssBefore: Stats;
  inspect: Stats;
  plainWall: Stats;
  plain: Stats;
  withTrace: Stats;
  expected: number;
  expectedBest: number;
  size: number;
}

function goals(f: Figures): TraceGoal[] {
  const inspectRatio = f.inspect.best / f.plainWall.best;
  return [
    {
      name: "issue 10: big trace load (read + lean decode)",
      value: `${fmt(f.lean.median, 0)} ms median (best ${fmt(f.lean.best, 0)})`,
      goal: "< 1000 ms",
      met: f.lean.median < 1000,
    },
    {
      name: "issue 10: big trace peak RSS / file size",
      value: `${fmt(f.peak.median / f.size)}x (${fmt((f.peak.median - f.rssBefore.median) / f.size)}x above start)`,
      goal: "< 4x",
      met: f.peak.median / f.size < 4,
    },
    {
      name: "issue 10: trace inspect vs msgpackr decode",
      value: `${fmt(inspectRatio)} best (${fmt(f.inspect.median / f.plainWall.median)} median)`,
      goal: "<= 2",
      met: inspectRatio <= 2,
    },
    {
      name: "issue 10: lean decode vs msgpackr, in process",
      value: `${fmt(f.lean.best / f.plain.best)} best (${fmt(f.lean.median / f.plain.median)} median)`,
      goal: "(reported)",
      met: "n/a",
    },
    {
      name: "issue 10: cold start with trace vs without + load",
      // Best against best (other work only ever slows a cold start down), then the medians.
      value: `${fmt(f.withTrace.best / f.expectedBest)} best (${fmt(f.withTrace.best, 0)}/${fmt(f.expectedBest, 0)} ms), ${fmt(f.withTrace.median / f.expected)} median`,
      goal: "(reported)",
      met: "n/a",
    },
  ];
}

interface Stats {
  best: number;
  median: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { best: sorted[0] ?? Number.NaN, median };
}

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

function fmt(value: number | undefined, digits = 2): string {
  return value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits);
}

function mb(bytes: number | undefined): string {
  return bytes === undefined ? "n/a" : `${(bytes / 1e6).toFixed(1)} MB`;
}
