// The measurements of `npm run bench` (run.ts): one wrk burst against one server with the server's and wrk's
// CPU, the Node client's checked warm-up, the rounds that alternate the contenders on the same reviews
// (compare), and the latency at a set rate (paced).

import { type LoadRequest, runLoad } from "../../functions/cli/loadtest/load.js";
import { fmt, median } from "./bench-format.js";
import { benchReviews } from "./bench-reviews.js";
import { type Builds, type RunningServer, type ServerSpec, startServer } from "./bench-servers.js";
import {
  BURST_TIMEOUT_MS,
  CONCURRENCY,
  LOAD_PIN,
  PACED_RATE,
  PACED_ROUNDS,
  REVIEWS,
  ROUNDS,
  SECONDS,
  WARMUP_REVIEWS,
  WARMUP_SECONDS,
} from "./bench-settings.js";
import { type Child, cpuTimesOf } from "./processes.js";
import { runWrk, type WrkWorkspace, wrkErrors } from "./wrk.js";

/** The CREATE reviews of one round (BENCH_REVIEWS of them, from a seed). */
export function createRequestsFor(seed: number): LoadRequest[] {
  return benchReviews("create", { count: REVIEWS, seed });
}

/** The teardown's DELETE reviews of one round (BENCH_REVIEWS of them, from a seed). */
export function teardownRequestsFor(seed: number): LoadRequest[] {
  return benchReviews("teardown", { count: REVIEWS, seed });
}

export interface Burst {
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  errorsByKind: Record<string, number>;
  /** The server's CPU seconds per wall second during the burst (1.0 = its whole pinned core). */
  serverCores?: number;
  /** wrk's CPU seconds per wall second: well below 1.0 means the generator was not the limit. */
  generatorCores: number;
  /**
   * The server's CPU microseconds per review: what a review costs, whatever share of its core the machine's
   * other work left the server (throughput is that share over this cost).
   */
  serverUsPerReview?: number;
  /**
   * What of serverUsPerReview the kernel spent (syscalls: reading requests, writing answers, and waking the
   * load generator when it sleeps, which it does more the slower the server: on this VM 11 µs per review
   * for the bare server and 23 for mutate-create, with the same syscalls per review).
   */
  serverSystemUsPerReview?: number;
}

interface BurstTarget {
  server: RunningServer;
  /** The review bodies file wrk cycles through. */
  bodies: string;
  allowPatch: boolean;
}

/** One wrk run against one server; paced (Poisson arrivals at CONCURRENCY / meanDelayMs) when given a delay. */
export async function burst(
  workspace: WrkWorkspace,
  target: BurstTarget,
  seconds: number,
  meanDelayMs?: number,
): Promise<Burst> {
  const cpuBefore = cpuTimesOf(target.server.child.pid);
  const started = performance.now();
  const report = await runWrk({
    url: target.server.url,
    script: meanDelayMs === undefined ? workspace.script : workspace.pacedScript,
    bodies: target.bodies,
    seconds,
    connections: CONCURRENCY,
    noPatch: !target.allowPatch,
    pin: LOAD_PIN,
    ...(meanDelayMs === undefined ? {} : { meanDelayMs }),
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuTimesOf(target.server.child.pid);
  const durationSeconds = report.durationUs / 1e6;
  const { connect, read, write, status, timeout, bad } = report;
  const result: Burst = {
    throughput: report.requests / durationSeconds,
    p50Ms: report.p50Us / 1000,
    p99Ms: report.p99Us / 1000,
    errors: wrkErrors(report),
    errorsByKind: { connect, read, write, status, timeout, bad },
    generatorCores: report.cpuSeconds / durationSeconds,
  };
  if (cpuBefore !== undefined && cpuAfter !== undefined) {
    // wrk's wall time includes its start (reading the bodies); the server idles then, so this is a floor.
    const system = cpuAfter.system - cpuBefore.system;
    const total = cpuAfter.user - cpuBefore.user + system;
    const reviews = Math.max(1, report.requests);
    result.serverCores = total / wallSeconds;
    result.serverUsPerReview = (total * 1e6) / reviews;
    result.serverSystemUsPerReview = (system * 1e6) / reviews;
  }
  return result;
}

/** The Node client's checked warm-up: errors here are wrong answers (uid, allowed, patch), not speed. */
async function checkedWarmup(url: URL, requests: LoadRequest[], allowPatch: boolean): Promise<number> {
  const result = await runLoad({
    target: url,
    requests,
    concurrency: CONCURRENCY,
    timeoutMs: BURST_TIMEOUT_MS,
    check: { allowPatch },
  });
  if (result.errors > 0) {
    process.stdout.write(`  warm-up errors: ${result.errorSamples.slice(0, 3).join("; ")}\n`);
  }
  return result.errors + (result.total - result.sent);
}

export interface Contender {
  server: RunningServer;
  allowPatch: boolean;
  bursts: Burst[];
  warmupErrors: number;
  /** Called around each measured burst (e.g. to count API requests). */
  around?: (run: () => Promise<Burst>) => Promise<Burst>;
}

/**
 * Warm each server up, then alternate them round by round with the same requests. `afterWarmup` runs between
 * the two (the paced rounds: there they do not change what the RSS after the bursts measures).
 */
export async function compare(
  workspace: WrkWorkspace,
  name: string,
  contenders: Contender[],
  requestsFor: (seed: number) => LoadRequest[],
  afterWarmup?: () => Promise<void>,
): Promise<void> {
  const warmup = requestsFor(1000).slice(0, WARMUP_REVIEWS);
  const warmupBodies = workspace.writeBodies(`${name}-warmup`, warmup);
  for (const c of contenders) {
    c.warmupErrors = await checkedWarmup(c.server.url, warmup, c.allowPatch);
    const target = { server: c.server, bodies: warmupBodies, allowPatch: c.allowPatch };
    c.warmupErrors += (await burst(workspace, target, WARMUP_SECONDS)).errors;
  }
  await afterWarmup?.();
  for (let round = 0; round < ROUNDS; round++) {
    const bodies = workspace.writeBodies(`${name}-round-${round + 1}`, requestsFor(round + 1));
    for (const c of contenders) {
      const run = () => burst(workspace, { server: c.server, bodies, allowPatch: c.allowPatch }, SECONDS);
      const result = await (c.around ? c.around(run) : run());
      c.bursts.push(result);
      process.stdout.write(`  ${roundLine(round, c.server.spec.label, result)}\n`);
    }
  }
}

/** Latency at PACED_RATE: best p99 and median p50 over the rounds, and the rate each server was sent. */
export interface PacedLatency {
  label: string;
  rounds: Burst[];
  p99Ms: number;
  medianP50Ms: number;
  rate: number;
  errors: number;
}

/** The contenders (warmed up by compare) alternate PACED_ROUNDS times at PACED_RATE, on the same reviews. */
async function pacedLatency(
  workspace: WrkWorkspace,
  name: string,
  contenders: Contender[],
  requests: LoadRequest[],
): Promise<PacedLatency[]> {
  const bodies = workspace.writeBodies(`${name}-paced`, requests);
  const meanDelayMs = (CONCURRENCY * 1000) / PACED_RATE;
  const rounds = contenders.map((): Burst[] => []);
  process.stdout.write(`  at ${PACED_RATE} reviews/s (Poisson arrivals over ${CONCURRENCY} connections):\n`);
  for (let round = 0; round < PACED_ROUNDS; round++) {
    for (const [i, c] of contenders.entries()) {
      const target = { server: c.server, bodies, allowPatch: c.allowPatch };
      const result = await burst(workspace, target, SECONDS, meanDelayMs);
      rounds[i]?.push(result);
      process.stdout.write(
        `  paced ${round + 1} ${c.server.spec.label.padEnd(30)} ${fmt(result.throughput, 0).padStart(6)} rev/s  p50 ${fmt(result.p50Ms, 2)} ms  p99 ${fmt(result.p99Ms, 2)} ms  errors ${result.errors}\n`,
      );
    }
  }
  return contenders.map((c, i) => {
    const bursts = rounds[i] ?? [];
    return {
      label: c.server.spec.label,
      rounds: bursts,
      p99Ms: Math.min(...bursts.map((b) => b.p99Ms)),
      medianP50Ms: median(bursts.map((b) => b.p50Ms)),
      rate: median(bursts.map((b) => b.throughput)),
      errors: bursts.reduce((sum, b) => sum + b.errors, 0),
    };
  });
}

/** compare(), with the first two contenders (bare, then the function) paced between warm-up and rounds. */
export async function compareWithPaced(
  workspace: WrkWorkspace,
  name: string,
  contenders: Contender[],
  requestsFor: (seed: number) => LoadRequest[],
): Promise<[PacedLatency, PacedLatency]> {
  let paced: PacedLatency[] = [];
  await compare(workspace, name, contenders, requestsFor, async () => {
    paced = await pacedLatency(workspace, name, contenders.slice(0, 2), requestsFor(ROUNDS + 1));
  });
  return paced as [PacedLatency, PacedLatency];
}

function roundLine(round: number, label: string, b: Burst): string {
  return (
    `round ${round + 1} ${label.padEnd(30)} ${fmt(b.throughput, 0).padStart(6)} rev/s  p99 ${fmt(b.p99Ms, 1).padStart(5)} ms` +
    `  server ${fmt(b.serverCores)} core ${fmt(b.serverUsPerReview, 1).padStart(5)} µs/rev (sys ${fmt(b.serverSystemUsPerReview, 1).padStart(4)})  wrk ${fmt(b.generatorCores)} core  errors ${b.errors}`
  );
}

/** BENCH_AGAINST's build as one more contender, started like this build's; undefined without it. */
export async function againstContender(
  builds: Builds,
  spec: ServerSpec,
  running: Child[],
  allowPatch = true,
): Promise<Contender | undefined> {
  if (!builds.against) return undefined;
  const server = await startServer(spec);
  running.push(server.child);
  return { server, allowPatch, bursts: [], warmupErrors: 0 };
}
