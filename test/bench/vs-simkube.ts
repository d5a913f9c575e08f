// `npm run bench:vs-simkube`: mutate-create against SimKube's own pod webhook, the handler of SimKube's sk-driver
// built from SimKube's source archive at 46c21b3 (scripts/build-simkube.sh, cached; skipped with a message when
// cargo or the archive is missing). Both serve https with the same certificate and key and answer the same
// CREATE reviews (the bench's 5,000: bare pods in virtual namespaces owned by the SimulationRoot), both against
// the API double holding the Simulation, its root and SimKube's driver lease. Each server is pinned to core 1,
// wrk and the API double to core 0; rounds alternate between the servers (BENCH_ROUNDS, default 3 each, of
// BENCH_SECONDS, default 10, at BENCH_CONCURRENCY connections, default 64) after a warm-up that sends every
// review at least once (both cache what they learn per pod: SimKube its owners, the function its sequences).
// Per server: reviews/s, CPU µs per review (from /proc of its pid), p50/p99, RSS right after its last round, its
// peak RSS and its RSS at the end, threads; the function over plain http and the floor over https
// (floor-server.ts: what any Node server answering these reviews over TLS costs at the least) and the floor's
// answer through the function's HTTP adapter (adapter-floor-server.ts: the adapter's share of the gap) beside
// them; the ratios function/SimKube last, also round by round.
// BENCH_AGAINST=<another build's dist/bundle> adds that build's mutate-create over https to the same rounds, and
// prints this build's reviews per core over it round by round (to measure one change).
//
// sk-driver runs as in a simulation: --sim-name, --trace-path (a trace of two empty events far apart, so its
// runner sleeps while the webhook serves), DRIVER_NAME (its root is `<name>-root`), --controller-ns (its
// lease), at log level warn like the function (LOG_LEVEL=warn), so neither writes a line per review.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import { join } from "node:path";
import { checkAnswer, type LoadRequest } from "../../functions/cli/loadtest/load.js";
import { createPki } from "../../functions/local-cluster/pki.js";
import { freePort } from "../../functions/local-cluster/ports.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { buildTraceBytes } from "../support/trace-builder.js";
import { benchReviews } from "./bench-reviews.js";
import { BENCH_ROOT_NAME, BENCH_SIM_NAME, BENCH_STORE_NAMESPACE } from "./bench-world.js";
import {
  envText,
  imageNodeRelease,
  nodeVersion,
  REPO,
  SERVER_NODE,
  serveNodeEnv,
  serveNodeFlags,
  serverNodeLine,
  startApiDouble,
  startNode,
} from "./node-children.js";
import { procStatusBytes } from "./proc-status.js";
import { type Child, cpuTimesOf, pinTo, rssOf, startChild, waitUntil } from "./processes.js";
import { createWrkWorkspace, runWrk, type WrkReport, wrkErrors, wrkInstalled } from "./wrk.js";

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

const ROUNDS = envInt("BENCH_ROUNDS", 3);
const SECONDS = envInt("BENCH_SECONDS", 10);
const CONNECTIONS = envInt("BENCH_CONCURRENCY", 64);
const WARMUP_SECONDS = envInt("BENCH_WARMUP_SECONDS", 5);
const START_TIMEOUT_MS = 60_000;
/** The share of a round's answers that may be bad (denied) before the run fails; see round(). */
const BAD_ANSWERS_TOLERATED = 0.01;
const SERVER_PIN = pinTo(1);
const LOAD_PIN = pinTo(0);
const BUNDLE = join(REPO, "dist/bundle/simkube-fn.mjs");

interface Server {
  label: string;
  child: Child;
  url: URL;
  /** RSS once started and checked (200 reviews answered), before any load. */
  idle?: Memory;
}

interface Memory {
  rssBytes?: number;
  /** The process's own memory (heap, stacks) and its mapped files' pages (the binary above all). */
  rssAnonBytes?: number;
  rssFileBytes?: number;
}

interface Round {
  report: WrkReport;
  cpuSeconds: number;
  /** Of cpuSeconds, the kernel's on the server's behalf (syscalls: the socket reads and writes above all). */
  sysSeconds: number;
  /** Right after the round's load: what it holds under load (later, a function may have collected when idle). */
  memory: Memory;
}

// ---------------------------------------------------------------------------------------------------------
// SimKube's sk-driver

/**
 * The cached sk-driver, built when absent; undefined (the script said why) when cargo or the archive is missing.
 * BENCH_SK_DRIVER names a binary built before (for instance under another cache key) instead.
 */
function skDriverBinary(): string | undefined {
  const given = process.env.BENCH_SK_DRIVER?.trim();
  if (given) return given;
  console.log(
    "bench:vs-simkube: SimKube's sk-driver from the cache, built first when absent (minutes; cached after)",
  );
  const build = spawnSync("bash", [join(REPO, "scripts/build-simkube.sh")], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  if (build.status === 3) return undefined;
  if (build.status !== 0) throw new Error(`scripts/build-simkube.sh failed (exit ${String(build.status)})`);
  return build.stdout.trim().split("\n").pop();
}

/** Two empty events ten million seconds apart: sk-driver's runner sleeps between them, the webhook serves. */
function writeIdleTrace(dir: string): string {
  const file = join(dir, "idle.sktrace");
  writeFileSync(file, buildTraceBytes({ events: [{ ts: 1_700_000_000 }, { ts: 1_710_000_000 }] }));
  return file;
}

interface Tls {
  certFile: string;
  keyFile: string;
}

async function startSkDriver(binary: string, kubeconfig: string, tls: Tls, trace: string): Promise<Server> {
  const port = await freePort();
  const args = [
    ...[binary, "--sim-name", BENCH_SIM_NAME, "--controller-ns", BENCH_STORE_NAMESPACE],
    ...["--admission-webhook-port", String(port), "--trace-path", trace, "--verbosity", "warn"],
    ...["--cert-path", tls.certFile, "--key-path", tls.keyFile],
  ];
  const [command, ...rest] = [...SERVER_PIN, ...args] as [string, ...string[]];
  const env = { ...process.env, KUBECONFIG: kubeconfig, DRIVER_NAME: BENCH_ROOT_NAME.replace(/-root$/, "") };
  const child = startChild(command, rest, { env });
  return { label: "SimKube sk-driver (https)", child, url: new URL(`https://127.0.0.1:${port}/`) };
}

// ---------------------------------------------------------------------------------------------------------
// The function

/** A variant of the https function to measure beside it (BENCH_VS_VARIANTS): Node flags and environment. */
interface Variant {
  label: string;
  flags: string[];
  env: Record<string, string>;
  /** Another build's dist/bundle (BENCH_AGAINST) instead of this build's. */
  bundleDir?: string;
}

/** BENCH_AGAINST=<another build's dist/bundle>: that build's mutate-create over https, in the same rounds. */
function againstVariant(): Variant | undefined {
  const dir = process.env.BENCH_AGAINST?.trim();
  // Started with the same flags as this build's function, so the two differ only in their build.
  return dir ? { label: "BENCH_AGAINST", flags: serveNodeFlags(), env: {}, bundleDir: dir } : undefined;
}

/**
 * BENCH_VS_VARIANTS="label: --a-node-flag NAME=value; other: ...": each an extra mutate-create over https in
 * the same alternating rounds, started with those Node flags (instead of the image's) and environment variables
 * (over the image's; `NAME=` unsets one).
 */
function variants(): Variant[] {
  const given = process.env.BENCH_VS_VARIANTS?.trim();
  if (!given) return [];
  return given.split(";").map((entry) => {
    const [label = "", rest = ""] = entry.split(":").map((x) => x.trim());
    const words = rest.split(/\s+/).filter(Boolean);
    const env = Object.fromEntries(
      words
        .filter((w) => !w.startsWith("--"))
        .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
    );
    return { label, flags: words.filter((w) => w.startsWith("--")), env };
  });
}

async function startFunction(kubeconfig: string, tls: Tls | undefined, variant?: Variant): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...serveNodeEnv(),
    ...variant?.env,
    PORT: String(port),
    SIM_NAME: BENCH_SIM_NAME,
    KUBECONFIG: kubeconfig,
    LOG_LEVEL: "warn",
    SEQUENCE_STORE: "memory",
    SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
  };
  const unset = Object.keys(variant?.env ?? {}).filter((key) => variant?.env[key] === "");
  for (const key of [
    "TRACE_PATH",
    "DRIVER_USERS",
    "POD_NAMESPACE",
    "TLS_CERT_FILE",
    "TLS_KEY_FILE",
    ...unset,
  ]) {
    delete env[key];
  }
  const tlsArgs = tls ? ["--tls-cert", tls.certFile, "--tls-key", tls.keyFile] : [];
  const bundle = variant?.bundleDir ? join(variant.bundleDir, "simkube-fn.mjs") : BUNDLE;
  const child = startNode(
    [bundle, "serve", "mutate-create", ...tlsArgs],
    env,
    SERVER_PIN,
    false,
    variant ? variant.flags : serveNodeFlags(),
    SERVER_NODE,
  );
  const scheme = tls ? "https" : "http";
  const label = `mutate-create (${scheme}${variant ? `, ${variant.label}` : ""})`;
  return { label, child, url: new URL(`${scheme}://127.0.0.1:${port}/`) };
}

/**
 * The reference servers over https, each a compiled entry started without flags:
 * - the floor (floor-server.ts): node:https, the JSON parse, and the pod hash, sequence number and patch every
 *   faithful answer needs, written as the function writes them; no express, logger or metrics. What any Node
 *   server answering these reviews over TLS costs at the least, measured in the same rounds;
 * - the floor's answer through the function's HTTP adapter (adapter-floor-server.ts): its distance from the
 *   floor is what the adapter costs, its distance from mutate-create what the handler costs beyond the floor's work.
 */
const FLOOR_SERVERS = {
  floor: { label: "floor, node:https", entry: join(REPO, "dist/test/bench/floor-server.js") },
  adapterFloor: {
    label: "floor, through the adapter",
    entry: join(REPO, "dist/test/bench/adapter-floor-server.js"),
  },
} as const;

async function startFloorServer(tls: Tls, which: keyof typeof FLOOR_SERVERS): Promise<Server> {
  const { label, entry } = FLOOR_SERVERS[which];
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile };
  const child = startNode([entry], env, SERVER_PIN, false, [], SERVER_NODE);
  return { label, child, url: new URL(`https://127.0.0.1:${port}/`) };
}

// ---------------------------------------------------------------------------------------------------------
// Answers

function post(url: URL, body?: Buffer): Promise<{ status: number; text: string }> {
  const client = url.protocol === "https:" ? https : http;
  const headers = body ? { "content-type": "application/json", "content-length": body.length } : {};
  return new Promise((resolvePost, reject) => {
    const req = client.request(
      url,
      {
        method: body ? "POST" : "GET",
        agent: false,
        timeout: 5_000,
        rejectUnauthorized: false,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Waits until the server admits a review, notes its idle RSS half a second later (as `npm run bench` does), then
 * checks a sample of answers in full (uid, allowed, a patch).
 */
async function checkServer(server: Server, requests: readonly LoadRequest[]): Promise<void> {
  const first = requests[0] as LoadRequest;
  let last = "";
  const ready = await waitUntil(
    async () => {
      if (server.child.process.exitCode !== null) return true;
      const answer = await post(server.url, first.body).catch((err: Error) => ({
        status: 0,
        text: err.message,
      }));
      last = `${answer.status} ${answer.text.slice(0, 300)}`;
      return answer.status === 200;
    },
    START_TIMEOUT_MS,
    100,
  );
  if (!ready || server.child.process.exitCode !== null) {
    throw new Error(`${server.label} did not answer (${last}):\n${server.child.output()}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  server.idle = memoryOf(server.child.pid);
  for (const request of requests.slice(0, 200)) {
    const answer = await post(server.url, request.body);
    const checked = checkAnswer(answer.status, answer.text, request.uid, { allowPatch: true });
    if (checked.error) throw new Error(`${server.label} answered badly: ${checked.error}: ${checked.detail}`);
    if (!answer.text.includes('"patch"')) throw new Error(`${server.label} sent no patch: ${answer.text}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Load

interface Load {
  script: string;
  bodies: string;
  /** How many distinct reviews the bodies hold. */
  count: number;
}

async function round(server: Server, load: Load, seconds: number): Promise<Round> {
  const before = cpuTimesOf(server.child.pid);
  const report = await runWrk({
    url: server.url,
    script: load.script,
    bodies: load.bodies,
    seconds,
    connections: CONNECTIONS,
    noPatch: false,
    pin: LOAD_PIN,
  });
  const after = cpuTimesOf(server.child.pid);
  if (!before || !after) throw new Error(`${server.label}: no CPU times in /proc (exited?)`);
  // A few answers that are not allowed-with-a-patch are the API double too slow to answer a cache refresh (the
  // Simulation is read again every 5 s; a read past its deadline denies the reviews waiting for it, fail closed)
  // on a machine loaded by others: counted and printed. Anything else, or more, fails the run.
  const errors = wrkErrors(report);
  if (errors > 0 && (errors !== report.bad || errors > report.requests * BAD_ANSWERS_TOLERATED))
    throw new Error(`${server.label}: wrk counted errors: ${JSON.stringify(report)}`);
  const sysSeconds = after.system - before.system;
  const memory = memoryOf(server.child.pid);
  return { report, cpuSeconds: after.user - before.user + sysSeconds, sysSeconds, memory };
}

function threadsOf(pid: number): number | undefined {
  try {
    const found = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return found === undefined ? undefined : Number(found);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Figures

interface Summary extends Memory {
  label: string;
  throughput: number;
  cpuUsPerReview: number;
  sysUsPerReview: number;
  p50Ms: number;
  p99Ms: number;
  threads?: number;
  idle?: Memory;
  /** The peak RSS of the process's life (VmHWM): under load, for every server here. */
  peakBytes?: number;
  /** At the end of the run, after the other servers' rounds (a function idle for 30 s has collected). */
  end: Memory;
  rounds: Round[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function summarize(server: Server, rounds: Round[]): Summary {
  const rate = (r: Round) => r.report.requests / (r.report.durationUs / 1e6);
  const summary: Summary = {
    label: server.label,
    throughput: median(rounds.map(rate)),
    cpuUsPerReview: median(rounds.map((r) => (r.cpuSeconds * 1e6) / r.report.requests)),
    sysUsPerReview: median(rounds.map((r) => (r.sysSeconds * 1e6) / r.report.requests)),
    p50Ms: median(rounds.map((r) => r.report.p50Us / 1000)),
    p99Ms: median(rounds.map((r) => r.report.p99Us / 1000)),
    end: memoryOf(server.child.pid),
    rounds,
  };
  // The RSS right after its last round; the peak over its life.
  Object.assign(summary, rounds.at(-1)?.memory ?? {});
  const peak = procStatusBytes(server.child.pid, "VmHWM");
  if (peak !== undefined) summary.peakBytes = peak;
  const threads = threadsOf(server.child.pid);
  if (threads !== undefined) summary.threads = threads;
  if (server.idle) summary.idle = server.idle;
  return summary;
}

function memoryOf(pid: number): Memory {
  const memory: Memory = {};
  const rss = rssOf(pid);
  const anon = procStatusBytes(pid, "RssAnon");
  const file = procStatusBytes(pid, "RssFile");
  if (rss !== undefined) memory.rssBytes = rss;
  if (anon !== undefined) memory.rssAnonBytes = anon;
  if (file !== undefined) memory.rssFileBytes = file;
  return memory;
}

const fmt = (n: number | undefined, digits = 2) => (n === undefined ? "?" : n.toFixed(digits));
const mib = (bytes: number | undefined) => (bytes === undefined ? "?" : (bytes / 1048576).toFixed(1));

function roundLine(round: Round): string {
  const seconds = round.report.durationUs / 1e6;
  const rate = round.report.requests / seconds;
  const cores = round.cpuSeconds / seconds;
  const wrkCores = round.report.cpuSeconds / seconds;
  const us = (round.cpuSeconds * 1e6) / round.report.requests;
  const sys = (round.sysSeconds * 1e6) / round.report.requests;
  const bad = round.report.bad > 0 ? `, ${round.report.bad} answers not allowed with a patch` : "";
  return `${fmt(rate, 0)}/s, ${fmt(us, 1)} µs/review (sys ${fmt(sys, 1)}), server ${fmt(cores)} core, wrk ${fmt(wrkCores)} core, p99 ${fmt(round.report.p99Us / 1000)} ms${bad}`;
}

const rssCell = (m: Memory | undefined) =>
  `${mib(m?.rssBytes)} (${mib(m?.rssAnonBytes)} + ${mib(m?.rssFileBytes)})`;

function printSummaries(summaries: Summary[]): void {
  console.log(
    "\n| server | reviews/s | CPU µs/review (of it sys) | p50 ms | p99 ms | RSS MiB right after its last round (anon + file) | peak RSS MiB | RSS MiB at the end | idle RSS MiB | threads |",
  );
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const s of summaries) {
    const cpu = `${fmt(s.cpuUsPerReview, 1)} (${fmt(s.sysUsPerReview, 1)})`;
    const cells = [fmt(s.throughput, 0), cpu, fmt(s.p50Ms), fmt(s.p99Ms)];
    console.log(
      `| ${s.label} | ${cells.join(" | ")} | ${rssCell(s)} | ${mib(s.peakBytes)} | ${rssCell(s.end)} | ${rssCell(s.idle)} | ${s.threads ?? "?"} |`,
    );
  }
  const [fn, sk] = summaries as [Summary, Summary];
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? fmt(a / b) : "?");
  console.log("\nRatios function (https) / SimKube (https), medians of the rounds:");
  console.log(
    `  reviews/s        ${ratio(fn.throughput, sk.throughput)}  (above 1: the function serves more)`,
  );
  console.log(
    `  CPU per review   ${ratio(fn.cpuUsPerReview, sk.cpuUsPerReview)}  (below 1: the function spends less)`,
  );
  console.log(`  p50              ${ratio(fn.p50Ms, sk.p50Ms)}`);
  console.log(`  p99              ${ratio(fn.p99Ms, sk.p99Ms)}`);
  console.log(`  RSS after load   ${ratio(fn.rssBytes, sk.rssBytes)}  (right after the last round)`);
  console.log(`  peak RSS         ${ratio(fn.peakBytes, sk.peakBytes)}`);
  console.log(`  threads          ${ratio(fn.threads, sk.threads)}`);
  const https = (x: Summary) => x.label.startsWith("mutate-create (https") || x.label.startsWith("floor");
  for (const s of summaries.filter(https)) printPerRound(s, sk);
  const floor = summaries.find((x) => x.label === FLOOR_SERVERS.floor.label);
  const adapterFloor = summaries.find((x) => x.label === FLOOR_SERVERS.adapterFloor.label);
  if (floor && adapterFloor) printPerRound(adapterFloor, floor, "the floor's");
  if (adapterFloor) printPerRound(fn, adapterFloor, "the floor through the adapter's");
  const against = summaries.find((x) => x.label.endsWith("BENCH_AGAINST)"));
  if (against) printPerRound(fn, against, "BENCH_AGAINST's");
}

/** Reviews per core of the function over another's (SimKube's), round by round (each pair ran in the same round). */
function printPerRound(fn: Summary, sk: Summary, other = "SimKube's"): void {
  const perCore = (r: Round) => r.report.requests / r.cpuSeconds;
  const ratios = fn.rounds.map((r, i) => {
    const other = sk.rounds[i];
    return other ? perCore(r) / perCore(other) : Number.NaN;
  });
  console.log(
    `  ${fn.label}: reviews per core / ${other}, per round: ${ratios.map((r) => fmt(r)).join(", ")}; lowest ${fmt(Math.min(...ratios))}`,
  );
}

// ---------------------------------------------------------------------------------------------------------
// The run

async function measure(servers: Server[], load: Load): Promise<Summary[]> {
  // Until every review has been answered once: SimKube asks the API server for each new pod's owners.
  for (const server of servers) {
    for (let answered = 0; answered < load.count; ) {
      const warm = await round(server, load, WARMUP_SECONDS);
      answered += warm.report.requests;
      console.log(`  warm-up ${server.label}: ${roundLine(warm)}`);
    }
  }
  const rounds = new Map<Server, Round[]>(servers.map((s) => [s, []]));
  for (let i = 1; i <= ROUNDS; i++) {
    for (const server of i % 2 ? servers : [...servers].reverse()) {
      const r = await round(server, load, SECONDS);
      rounds.get(server)?.push(r);
      console.log(`  round ${i} ${server.label}: ${roundLine(r)}`);
    }
  }
  return servers.map((s) => summarize(s, rounds.get(s) ?? []));
}

/** The functions' own view of their memory after the rounds: V8's heap, total and live (their /stats). */
async function printHeaps(servers: Server[]): Promise<void> {
  for (const server of servers.filter((s) => s.label.startsWith("mutate-create"))) {
    const answer = await post(new URL("/stats", server.url)).catch(() => undefined);
    const stats = answer?.status === 200 ? (JSON.parse(answer.text) as Record<string, number>) : {};
    console.log(
      `  ${server.label}: V8 heap ${mib(stats.heapTotalBytes)} MiB, of it live ${mib(stats.heapUsedBytes)} MiB`,
    );
  }
}

async function main(): Promise<number> {
  if (!wrkInstalled()) return skip("wrk is not installed (apt-get install -y wrk)");
  const binary = skDriverBinary();
  if (!binary) return skip("SimKube's sk-driver could not be built (see the message above)");
  const dir = mkdtempSync(join(os.tmpdir(), "simkube-fn-vs-simkube-"));
  process.env.BENCH_SIMKUBE_DRIVER = "1";
  const api = await startApiDouble(LOAD_PIN);
  const kubeconfig = await writeKubeconfig(api.url);
  const workspace = createWrkWorkspace();
  const servers: Server[] = [];
  try {
    const pki = await createPki(dir);
    const tls = { certFile: pki.webhookCertFile, keyFile: pki.webhookKeyFile };
    const requests = benchReviews("create");
    const bodies = workspace.writeBodies("create", requests);
    const load = { script: workspace.script, bodies, count: requests.length };
    servers.push(await startFunction(kubeconfig, tls));
    servers.push(await startSkDriver(binary, kubeconfig, tls, writeIdleTrace(dir)));
    servers.push(await startFunction(kubeconfig, undefined));
    servers.push(await startFloorServer(tls, "floor"));
    servers.push(await startFloorServer(tls, "adapterFloor"));
    for (const variant of variants()) servers.push(await startFunction(kubeconfig, tls, variant));
    const against = againstVariant();
    if (against) servers.push(await startFunction(kubeconfig, tls, against));
    for (const server of servers) await checkServer(server, requests);
    console.log(
      `bench:vs-simkube: ${requests.length} CREATE reviews, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s; ` +
        `servers ${SERVER_PIN.join(" ") || "unpinned"}, wrk and API double ${LOAD_PIN.join(" ") || "unpinned"}; ${os.cpus().length} cores, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")}`,
    );
    console.log(`bench:vs-simkube: ${serverNodeLine(nodeVersion(SERVER_NODE), imageNodeRelease())}`);
    console.log(
      `bench:vs-simkube: the function with node flags [${serveNodeFlags().join(" ")}] and the image's environment [${envText(serveNodeEnv())}]`,
    );
    const summaries = await measure(servers, load);
    printSummaries(summaries);
    await printHeaps(servers);
    const requestCount = await api.requests();
    console.log(
      `\nAPI double served ${requestCount.total} requests: ${JSON.stringify(requestCount.byMethod)}`,
    );
    return 0;
  } finally {
    for (const server of servers) await server.child.stop();
    await api.child.stop();
    await removeKubeconfig(kubeconfig);
    workspace.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

function skip(message: string): number {
  console.log(`bench:vs-simkube skipped: ${message}`);
  return 0;
}

// Under the test runner (NODE_TEST_CONTEXT set), as every file under dist/test/ may be, it does nothing.
if (!process.env.NODE_TEST_CONTEXT) process.exitCode = await main();
