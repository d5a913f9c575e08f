// The bench's load generator: wrk (https://github.com/wg/wrk), a C program on one epoll loop, run as its own
// process and pinned to its own core. Chosen over autocannon because autocannon is itself a Node program:
// per request it does the same kind of JS work (HTTP parsing, buffers, timers) as the servers it measures, so
// at ~20k reviews/s it needs most of a core, which is the saturation this bench exists to rule out. wrk
// spends a few microseconds per request, and reports its own CPU time so that each run shows it.
//
// wrk cycles through prepared AdmissionReviews (one JSON document per line of a file) with a Lua script,
// checks each answer cheaply (HTTP 200, `"allowed":true`, and no `"patch"` where a patch is an error), and
// prints one line of JSON at the end. The full answer check (uid echoed, a valid review) is the Node client's
// job during warm-up (bench-bursts.ts's checkedWarmup): per request it would cost the generator what this file
// avoids.
//
// Install: `apt-get install -y wrk` (Debian/Ubuntu), `brew install wrk` (macOS).

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { LoadRequest } from "../../functions/cli/loadtest/load.js";
import { type Child, startChild, within } from "./processes.js";

const REPORT_PREFIX = "BENCH-WRK ";

// Every Lua state (one per wrk thread, plus the main one for done()) runs this file. `bad` lives in each
// thread's state; done() collects it through the thread objects setup() kept. os.clock() is clock(3), the
// CPU time of the whole wrk process (all threads), read once the load has stopped.
const SCRIPT = `
local threads = {}
function setup(thread) table.insert(threads, thread) end

local requests, count, i, nopatch = {}, 0, 0, false
bad = 0
function init(args)
  nopatch = args[2] == "nopatch"
  local path = wrk.path ~= "" and wrk.path or "/"
  for line in io.lines(args[1]) do
    if #line > 0 then
      count = count + 1
      requests[count] = wrk.format("POST", path, { ["Content-Type"] = "application/json" }, line)
    end
  end
end
function request()
  i = i % count + 1
  return requests[i]
end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"allowed":true', 1, true)
    or (nopatch and string.find(body, '"patch"', 1, true)) then
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  local badTotal = 0
  for _, t in ipairs(threads) do badTotal = badTotal + (t:get("bad") or 0) end
  local e = summary.errors
  io.write(string.format(
    '${REPORT_PREFIX}{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"bad":%d,"cpuSeconds":%.4f}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout, badTotal, os.clock()))
end
`;

// The paced variant: the same script, and each connection waits before each request for an exponentially
// distributed time of mean args[3] ms, so that the connections together send Poisson arrivals at a set rate
// (connections / mean delay) instead of the next request the moment an answer is in. Saturated, every
// server's latency is its queue: with 64 connections busy, latency ~ 64 / throughput, so a p99 ratio there
// only restates the throughput ratio. At a rate both servers sustain, the ratio is the latency a review adds.
// A separate file, because wrk takes the delay path for every request once the script defines delay().
const PACED_SCRIPT = `${SCRIPT}
local meanDelayMs = 0
local initRequests = init
function init(args)
  initRequests(args)
  meanDelayMs = tonumber(args[3]) or 0
  -- one seed per thread state: the address of a fresh table differs between them
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 1000003))
end
function delay()
  return -math.log(1 - math.random()) * meanDelayMs
end
`;

// The fresh-uid variant: every request a new admission call. Each body holds UID_MARK inside its request
// uid; the script puts a serial there (after args[3], a tag per run), so that no two requests of a run, or of
// two runs, share a uid. With a fixed set of uids cycled, mutate-create answers a repeated uid from what it
// remembers (functions/mutate-create/sequence-claims.ts) without asking the sequence store, which is what the sequence bench
// measures. A separate file for the same reason as the paced one.
export const UID_MARK = "@@SERIAL@@";
const FRESH_UID_SCRIPT = `${SCRIPT}
local parts, serial, tag, path = {}, 0, "", "/"
function init(args)
  nopatch = args[2] == "nopatch"
  tag = args[3] or ""
  path = wrk.path ~= "" and wrk.path or "/"
  for line in io.lines(args[1]) do
    local at = string.find(line, "${UID_MARK}", 1, true)
    if at then
      count = count + 1
      parts[count] = { string.sub(line, 1, at - 1), string.sub(line, at + ${UID_MARK.length}) }
    end
  end
end
function request()
  i = i % count + 1
  serial = serial + 1
  local p = parts[i]
  return wrk.format("POST", path, { ["Content-Type"] = "application/json" }, p[1] .. tag .. serial .. p[2])
end
`;

export interface WrkReport {
  requests: number;
  durationUs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  /** Answers the script judged wrong (not 200, not allowed, or a patch where none may be). */
  bad: number;
  /** wrk's own CPU time (all threads) over the run. */
  cpuSeconds: number;
}

const REPORT_FIELDS: readonly (keyof WrkReport)[] = [
  "requests",
  "durationUs",
  "p50Us",
  "p99Us",
  "maxUs",
  "connect",
  "read",
  "write",
  "status",
  "timeout",
  "bad",
  "cpuSeconds",
];

/** Pure: the report line the script's done() printed, or an error message saying what is missing. */
export function parseWrkReport(stdout: string): WrkReport | string {
  const line = stdout.split("\n").find((l) => l.startsWith(REPORT_PREFIX));
  if (!line) return `wrk printed no report line:\n${stdout.slice(-2000)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.slice(REPORT_PREFIX.length));
  } catch (err) {
    return `wrk's report is not JSON (${(err as Error).message}): ${line}`;
  }
  const record = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const missing = REPORT_FIELDS.filter((f) => typeof record[f] !== "number" || !Number.isFinite(record[f]));
  if (missing.length > 0) return `wrk's report lacks ${missing.join(", ")}: ${line}`;
  return record as unknown as WrkReport;
}

/** Pure: every failed request wrk counted (socket errors, HTTP >= 400, timeouts, answers judged wrong). */
export function wrkErrors(report: WrkReport): number {
  return report.connect + report.read + report.write + report.status + report.timeout + report.bad;
}

export function wrkInstalled(): boolean {
  return spawnSync("wrk", ["--version"], { stdio: "ignore" }).error === undefined;
}

/** Files wrk reads: the script, and one file of review bodies per request set. */
export interface WrkWorkspace {
  script: string;
  /** The script that paces each connection (WrkOptions.meanDelayMs). */
  pacedScript: string;
  /** The script that gives every request a new uid (bodies with UID_MARK in the uid; WrkOptions.tag). */
  freshUidScript: string;
  writeBodies(name: string, requests: readonly LoadRequest[]): string;
  remove(): void;
}

export function createWrkWorkspace(): WrkWorkspace {
  const dir = mkdtempSync(join(os.tmpdir(), "simkube-fn-bench-"));
  const script = join(dir, "reviews.lua");
  writeFileSync(script, SCRIPT);
  const pacedScript = join(dir, "reviews-paced.lua");
  writeFileSync(pacedScript, PACED_SCRIPT);
  const freshUidScript = join(dir, "reviews-fresh-uid.lua");
  writeFileSync(freshUidScript, FRESH_UID_SCRIPT);
  return {
    script,
    pacedScript,
    freshUidScript,
    writeBodies(name, requests) {
      const file = join(dir, `${name}.jsonl`);
      // JSON.stringify never emits a raw newline, so one review per line is unambiguous.
      writeFileSync(file, `${requests.map((r) => r.body.toString("utf8")).join("\n")}\n`);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface WrkOptions {
  url: URL;
  script: string;
  bodies: string;
  seconds: number;
  connections: number;
  /** Count any patch in an answer as an error (DELETE reviews). */
  noPatch: boolean;
  /** Prefix for the command, e.g. ["taskset", "-c", "0"]. */
  pin: string[];
  /** Paced load: `script` must be the workspace's pacedScript; each connection waits this long on average. */
  meanDelayMs?: number;
  /** With the workspace's freshUidScript: put before each request's serial, distinct per run. */
  tag?: string;
}

/** Runs wrk once (one thread); rejects when it fails or prints no report. */
export async function runWrk(options: WrkOptions): Promise<WrkReport> {
  const args = [
    "wrk",
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--timeout",
    "10s",
    "-s",
    options.script,
    options.url.href,
    "--",
    options.bodies,
    options.noPatch ? "nopatch" : "patch-ok",
    ...(options.meanDelayMs !== undefined ? [String(options.meanDelayMs)] : []),
    ...(options.tag !== undefined ? [options.tag] : []),
  ];
  const [command, ...rest] = [...options.pin, ...args] as [string, ...string[]];
  const child: Child = startChild(command, rest);
  const exit = await within(child.exited, (options.seconds + 30) * 1000);
  if (exit !== 0) {
    await child.stop();
    throw new Error(`wrk failed (exit ${String(exit)}):\n${child.output()}`);
  }
  const report = parseWrkReport(child.output());
  if (typeof report === "string") throw new Error(report);
  return report;
}
