// `simkube-fn loadtest teardown`: send a teardown burst of realistic pod DELETE reviews to a running
// reschedule-delete and report throughput, latency percentiles, errors, clones created and server RSS.
// An adapter: parses flags, wires the generator, the load loop and the report, draws a progress bar on a
// terminal. Reads no environment: everything comes in through args.

import { parseArgs } from "node:util";
import cliProgress from "cli-progress";
import { usage } from "../args.js";
import { argumentErrorMessage } from "../parse-error.js";
import { UsageError, usageErrorText } from "../usage-error.js";
import { fetchStats, type LoadRequest, runLoad, statsUrl, validateTarget } from "./load.js";
import { buildReport, formatReport, reportPassed } from "./report.js";
import { buildTeardownReviews, DEFAULT_NAMESPACES } from "./reviews.js";

/** Its help, as `help loadtest` shows it (args.ts defines every command's). */
export const LOADTEST_USAGE = usage("loadtest");

export interface CommandIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  now: () => Date;
}

const defaultIo: CommandIo = { stdout: process.stdout, stderr: process.stderr, now: () => new Date() };

export interface TeardownArgs {
  target: URL;
  reviews: number;
  concurrency: number;
  timeoutMs: number;
  requestTimeoutMs: number;
  interruptions: number;
  simName: string;
  rootName: string;
  rootUid: string;
  namespaces: string[];
  seed: number;
  stats?: URL;
  insecure: boolean;
  json: boolean;
}

function positiveInt(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${flag} must be a positive whole number, got "${raw}"`);
  }
  return value;
}

function positiveSeconds(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${flag} must be a positive number of seconds, got "${raw}"`);
  }
  return value;
}

const TEARDOWN_FLAGS = {
  target: { type: "string" },
  reviews: { type: "string" },
  concurrency: { type: "string" },
  timeout: { type: "string" },
  "request-timeout": { type: "string" },
  interruptions: { type: "string" },
  "sim-name": { type: "string" },
  /** The old spelling of --sim-name (args.ts warns about it). */
  sim: { type: "string" },
  root: { type: "string" },
  "root-uid": { type: "string" },
  namespaces: { type: "string" },
  seed: { type: "string" },
  stats: { type: "string" },
  insecure: { type: "boolean" },
  json: { type: "boolean" },
} as const;

/** The --target and --stats URLs. */
function parseUrls(values: { target?: string; stats?: string }): { target: URL; stats?: URL } {
  if (!values.target) throw new RangeError("--target URL is required");
  const target = validateTarget(values.target);
  if (typeof target === "string") throw new RangeError(target);
  if (!values.stats) return { target };
  const stats = validateTarget(values.stats);
  if (typeof stats === "string") throw new RangeError(`--stats: ${stats}`);
  return { target, stats };
}

function parseInterruptions(raw: string | undefined): number {
  const interruptions = raw === undefined ? 0 : Number(raw);
  if (!Number.isFinite(interruptions) || interruptions < 0 || interruptions > 1) {
    throw new RangeError(`--interruptions must be a fraction from 0 to 1, got "${raw}"`);
  }
  return interruptions;
}

function parseSeed(raw: string | undefined): number {
  const seed = raw === undefined ? 1 : Number(raw);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`--seed must be a whole number, got "${raw}"`);
  return seed;
}

function parseNamespaces(raw: string | undefined): string[] {
  const namespaces = (raw ?? DEFAULT_NAMESPACES.join(","))
    .split(",")
    .map((ns) => ns.trim())
    .filter((ns) => ns !== "");
  return namespaces.length > 0 ? namespaces : [...DEFAULT_NAMESPACES];
}

/** Pure: the flags of `loadtest teardown`, validated. Throws RangeError with a one-line reason. */
export function parseTeardownArgs(args: string[]): TeardownArgs {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: TEARDOWN_FLAGS });
  if (positionals[0] !== "teardown" || positionals.length !== 1) {
    throw new RangeError('loadtest has one scenario: "teardown"');
  }
  const { target, stats } = parseUrls(values);
  const interruptions = parseInterruptions(values.interruptions);
  const seed = parseSeed(values.seed);
  const simName = values["sim-name"]?.trim() || values.sim?.trim() || "loadtest";
  const namespaces = parseNamespaces(values.namespaces);
  const parsed: TeardownArgs = {
    target,
    reviews: positiveInt(values.reviews, 1000, "--reviews"),
    concurrency: positiveInt(values.concurrency, 32, "--concurrency"),
    timeoutMs: positiveSeconds(values.timeout, 120, "--timeout") * 1000,
    requestTimeoutMs: positiveSeconds(values["request-timeout"], 10, "--request-timeout") * 1000,
    interruptions,
    simName,
    rootName: values.root?.trim() || `sk-${simName}-driver-00000-root`,
    rootUid: values["root-uid"]?.trim() || "loadtest-root-uid",
    namespaces,
    seed,
    insecure: values.insecure ?? false,
    json: values.json ?? false,
  };
  if (stats) parsed.stats = stats;
  return parsed;
}

/** The reviews, serialized up front so the loop spends its time on the wire, not in JSON.stringify. */
function prepareReviews(options: TeardownArgs, now: Date) {
  const generated = buildTeardownReviews({
    count: options.reviews,
    simName: options.simName,
    rootName: options.rootName,
    rootUid: options.rootUid,
    namespaces: options.namespaces,
    interruptions: options.interruptions,
    seed: options.seed,
    now,
  });
  const requests: LoadRequest[] = generated.reviews.map((r) => ({
    uid: r.uid,
    body: Buffer.from(JSON.stringify(r.review)),
  }));
  return { generated, requests };
}

/** A progress bar on a terminal; none when piped or printing JSON. */
function progressBar(io: CommandIo, options: TeardownArgs): cliProgress.SingleBar | undefined {
  if (!io.stdout.isTTY || options.json) return undefined;
  return new cliProgress.SingleBar(
    {
      stream: io.stdout as NodeJS.WritableStream,
      format: "teardown [{bar}] {value}/{total} reviews | {eta_formatted} left",
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
}

async function sendWithProgress(io: CommandIo, options: TeardownArgs, requests: LoadRequest[]) {
  const bar = progressBar(io, options);
  bar?.start(requests.length, 0);
  const result = await runLoad({
    target: options.target,
    requests,
    concurrency: options.concurrency,
    timeoutMs: options.timeoutMs,
    requestTimeoutMs: options.requestTimeoutMs,
    insecure: options.insecure,
    check: { allowPatch: false },
    ...(bar ? { onProgress: (done: number) => bar.update(done) } : {}),
  });
  bar?.stop();
  return result;
}

export async function runLoadtestCommand(args: string[], io: CommandIo = defaultIo): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.stdout.write(LOADTEST_USAGE);
    return 0;
  }
  let options: TeardownArgs;
  try {
    options = parseTeardownArgs(args);
  } catch (err) {
    io.stderr.write(usageErrorText(new UsageError(argumentErrorMessage(err), "loadtest")));
    return 2;
  }
  const { generated, requests } = prepareReviews(options, io.now());
  const stats = options.stats ?? statsUrl(options.target);
  const statsOptions = { insecure: options.insecure };
  const before = await fetchStats(stats, statsOptions);
  const result = await sendWithProgress(io, options, requests);
  const after = await fetchStats(stats, statsOptions);
  const report = buildReport({
    target: options.target.href,
    concurrency: options.concurrency,
    result,
    statsBefore: before,
    statsAfter: after,
    expectedClones: generated.expectedClones,
    reviewKinds: generated.byKind,
  });
  io.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return reportPassed(report) ? 0 : 1;
}
