// The figures of teardown rounds run in pairs (one with the DELETE webhook, one without, adjacent in time):
// the ratio with/without of each pair, their median and range, the ratio of the medians, and what the rounds
// with the webhook did (errors, clones, reschedule-delete's peak replicas). Pure.

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
  /** reschedule-delete's highest replica count in each round with the webhook. */
  peakReplicas: number[];
}

export function teardownSummary(rounds: readonly BurstRound[]): TeardownSummary {
  const pairRatios: number[] = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const pair = [rounds[i], rounds[i + 1]] as [BurstRound, BurstRound];
    const withHook = pair.find((r) => r.webhook);
    const without = pair.find((r) => !r.webhook);
    if (withHook && without) pairRatios.push(round3(withHook.teardownMs / without.teardownMs));
  }
  const withMs = rounds.filter((r) => r.webhook).map((r) => r.teardownMs);
  const withoutMs = rounds.filter((r) => !r.webhook).map((r) => r.teardownMs);
  return {
    pairRatios,
    medianPairRatio: round3(median(pairRatios)),
    geometricMeanPairRatio: round3(
      Math.exp(pairRatios.reduce((sum, r) => sum + Math.log(r), 0) / pairRatios.length),
    ),
    minPairRatio: Math.min(...pairRatios),
    maxPairRatio: Math.max(...pairRatios),
    ratioOfMedians: round3(median(withMs) / median(withoutMs)),
    medianWithMs: median(withMs),
    medianWithoutMs: median(withoutMs),
    webhookErrors: rounds.reduce((n, r) => n + r.webhookErrors, 0),
    clonesSeen: rounds.reduce((n, r) => n + r.clonesSeen, 0),
    peakReplicas: rounds.filter((r) => r.webhook).map((r) => Math.max(0, ...r.replicas.map(([, n]) => n))),
  };
}
