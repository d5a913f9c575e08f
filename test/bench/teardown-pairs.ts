// The figures of teardown rounds run in pairs (one with the DELETE webhook, one without, adjacent in time):
// the ratio with/without of each pair, their median and range, the ratio of the medians, and what the rounds
// with the webhook did (errors, clones, reschedule-delete's peak replicas). Pure.
//
// A round's total time is mostly chance: the garbage collector queues the SimulationRoot's dependents (the
// namespace and every pod, all owned by the root) in a Go map's order, deletes the pods one by one at its
// client's rate, and only when it happens to reach the namespace does the namespace controller delete the
// rest at once. So the summary also gives the two phases apart: the garbage collector's time per pod while it
// deletes them one by one, and the namespace's own end (its delete until it is gone), each as pair ratios; and,
// per side, a line through the namespace's end against the pods it had left, from which the teardown expected
// over the namespace's (uniform) place follows.

import type { BurstRound } from "../support/cluster/teardown-burst.js";

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Pairs of rounds, one with the DELETE webhook and one without, the first of a pair alternating. */
export function alternatingOrder(pairs: number): boolean[] {
  return Array.from({ length: pairs }, (_, i) => (i % 2 === 0 ? [true, false] : [false, true])).flat();
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** Fewer pods deleted one by one than this before the namespace was reached: too few to time the pace. */
const MIN_ONE_BY_ONE = 100;

/** The garbage collector's milliseconds per pod while it deleted them one by one; undefined if too few. */
export function oneByOneMsPerPod(r: BurstRound): number | undefined {
  const deleted = r.pods - r.podsUndeletedAtNamespaceDelete;
  if (r.podsUndeletedAtNamespaceDelete < 0 || deleted < MIN_ONE_BY_ONE) return undefined;
  return r.namespaceDeletingMs / deleted;
}

/** The namespace's delete until it was gone (the namespace controller's part). */
export const namespaceEndMs = (r: BurstRound): number => r.teardownMs - r.namespaceDeletingMs;

/** Each pair's `measure` with the webhook over without it; pairs where either side has none are left out. */
function pairRatiosOf(
  rounds: readonly BurstRound[],
  measure: (r: BurstRound) => number | undefined,
): number[] {
  const ratios: number[] = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const pair = [rounds[i], rounds[i + 1]] as [BurstRound, BurstRound];
    const withHook = pair.find((r) => r.webhook);
    const without = pair.find((r) => !r.webhook);
    const a = withHook && measure(withHook);
    const b = without && measure(without);
    if (a !== undefined && b !== undefined && b > 0) ratios.push(round3(a / b));
  }
  return ratios;
}

const geometricMean = (xs: readonly number[]) =>
  xs.length === 0 ? Number.NaN : round3(Math.exp(xs.reduce((sum, r) => sum + Math.log(r), 0) / xs.length));

export interface PhaseRatios {
  pairRatios: number[];
  medianPairRatio: number;
  geometricMeanPairRatio: number;
  minPairRatio: number;
  maxPairRatio: number;
}

function phaseRatios(
  rounds: readonly BurstRound[],
  measure: (r: BurstRound) => number | undefined,
): PhaseRatios {
  const pairRatios = pairRatiosOf(rounds, measure);
  return {
    pairRatios,
    medianPairRatio: round3(median(pairRatios)),
    geometricMeanPairRatio: geometricMean(pairRatios),
    minPairRatio: Math.min(...pairRatios),
    maxPairRatio: Math.max(...pairRatios),
  };
}

export interface LineFit {
  interceptMs: number;
  msPerPodLeft: number;
}

/** Least squares of the namespace's end against the pods left at its delete; undefined below two distinct x. */
export function namespaceEndFit(rounds: readonly BurstRound[]): LineFit | undefined {
  const points = rounds.map((r) => [r.podsUndeletedAtNamespaceDelete, namespaceEndMs(r)] as const);
  const n = points.length;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  if (n < 2 || sxx === 0) return undefined;
  const slope = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0) / sxx;
  return { interceptMs: Math.round(my - slope * mx), msPerPodLeft: round3(slope) };
}

/**
 * What one side's teardown takes on average over the namespace's place, which is uniform among the root's
 * dependents: half the pods one by one at the median pace, the other half left to the namespace's end.
 */
function expectedSide(rounds: readonly BurstRound[]) {
  const paces = rounds.map(oneByOneMsPerPod).filter((x): x is number => x !== undefined);
  const fit = namespaceEndFit(rounds);
  const pods = rounds[0]?.pods ?? 0;
  if (paces.length === 0 || !fit) return undefined;
  const pace = median(paces);
  return {
    oneByOneMsPerPod: round3(pace),
    namespaceEnd: fit,
    expectedMs: Math.round((pace * pods) / 2 + fit.interceptMs + (fit.msPerPodLeft * pods) / 2),
  };
}

export function expectedTeardown(rounds: readonly BurstRound[]) {
  const withHook = expectedSide(rounds.filter((r) => r.webhook));
  const without = expectedSide(rounds.filter((r) => !r.webhook));
  return {
    with: withHook,
    without,
    ratio: withHook && without ? round3(withHook.expectedMs / without.expectedMs) : undefined,
  };
}

export interface TeardownPhases {
  /** The garbage collector's ms per pod deleted one by one, with / without, per pair. */
  oneByOne: PhaseRatios;
  /** The namespace's delete until gone, with / without, per pair. */
  namespaceEnd: PhaseRatios;
  /**
   * Total teardown times apart by when the garbage collector reached the namespace: early (fewer than half
   * the pods deleted one by one) or late.
   */
  modes: Record<"early" | "late", { withMs: number[]; withoutMs: number[] }>;
  /** Per side, the namespace's end against the pods left, and the teardown expected over the namespace's place. */
  expected: ReturnType<typeof expectedTeardown>;
}

export function teardownPhases(rounds: readonly BurstRound[]): TeardownPhases {
  const modes: TeardownPhases["modes"] = {
    early: { withMs: [], withoutMs: [] },
    late: { withMs: [], withoutMs: [] },
  };
  for (const r of rounds) {
    const mode = r.podsUndeletedAtNamespaceDelete * 2 > r.pods ? modes.early : modes.late;
    (r.webhook ? mode.withMs : mode.withoutMs).push(r.teardownMs);
  }
  return {
    oneByOne: phaseRatios(rounds, oneByOneMsPerPod),
    namespaceEnd: phaseRatios(rounds, namespaceEndMs),
    modes,
    expected: expectedTeardown(rounds),
  };
}

export interface TeardownSummary {
  /** Per pair, with/without. */
  pairRatios: number[];
  medianPairRatio: number;
  /**
   * The pairs' geometric mean: with the first of a pair alternating, a slowdown that falls on one position of
   * a pair (measured: the second round of each pair was slower) cancels out of it over an even number of pairs.
   */
  geometricMeanPairRatio: number;
  minPairRatio: number;
  maxPairRatio: number;
  /** Median teardown with the webhook over median without. */
  ratioOfMedians: number;
  medianWithMs: number;
  medianWithoutMs: number;
  webhookErrors: number;
  clonesSeen: number;
  /** Per round with the webhook: the API server's calls to reschedule-delete, and the DELETEs its match conditions kept from it. */
  deleteWebhookCalls: number[];
  matchConditionExclusions: number[];
  /** reschedule-delete's highest replica count in each round with the webhook. */
  peakReplicas: number[];
  phases: TeardownPhases;
}

export function teardownSummary(rounds: readonly BurstRound[]): TeardownSummary {
  const total = phaseRatios(rounds, (r) => r.teardownMs);
  const withRounds = rounds.filter((r) => r.webhook);
  const withMs = withRounds.map((r) => r.teardownMs);
  const withoutMs = rounds.filter((r) => !r.webhook).map((r) => r.teardownMs);
  return {
    ...total,
    ratioOfMedians: round3(median(withMs) / median(withoutMs)),
    medianWithMs: median(withMs),
    medianWithoutMs: median(withoutMs),
    webhookErrors: rounds.reduce((n, r) => n + r.webhookErrors, 0),
    clonesSeen: rounds.reduce((n, r) => n + r.clonesSeen, 0),
    deleteWebhookCalls: withRounds.map((r) => r.deleteWebhook.calls),
    matchConditionExclusions: withRounds.map((r) => r.deleteWebhook.matchConditionExclusions),
    peakReplicas: withRounds.map((r) => Math.max(0, ...r.replicas.map(([, n]) => n))),
    phases: teardownPhases(rounds),
  };
}
