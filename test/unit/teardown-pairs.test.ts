// The knative teardown bench's figures (test/bench/teardown-pairs.ts): rounds in pairs, the first of a pair
// alternating, and each pair's ratio with/without the DELETE webhook.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  alternatingOrder,
  expectedTeardown,
  namespaceEndFit,
  oneByOneMsPerPod,
  teardownPhases,
  teardownSummary,
} from "../bench/teardown-pairs.js";
import type { BurstRound } from "../support/cluster/teardown-burst.js";

const round = (webhook: boolean, teardownMs: number, replicas: [number, number][] = []): BurstRound => ({
  webhook,
  pods: 10,
  teardownMs,
  namespaceDeletingMs: 0,
  deleteWebhook: { calls: webhook ? teardownMs % 7 : 0, matchConditionExclusions: webhook ? teardownMs : 0 },
  podsGoneMs: teardownMs,
  podsUndeletedAtNamespaceDelete: 10,
  webhookErrors: 0,
  clonesSeen: 0,
  replicas,
  podsLeft: [],
});

describe("teardown pairs", () => {
  it("alternates which side of a pair goes first", () => {
    assert.deepEqual(alternatingOrder(3), [true, false, false, true, true, false]);
  });

  it("ratios per pair, whichever side went first; the median and range; peak replicas of the rounds with the webhook", () => {
    const summary = teardownSummary([
      round(true, 110, [
        [0, 0],
        [1, 2],
        [2, 1],
      ]),
      round(false, 100),
      round(false, 200),
      round(true, 210, [[0, 3]]),
      round(true, 90),
      round(false, 100),
    ]);
    assert.deepEqual(summary.pairRatios, [1.1, 1.05, 0.9]);
    assert.equal(summary.medianPairRatio, 1.05);
    assert.equal(summary.geometricMeanPairRatio, 1.013);
    assert.equal(summary.minPairRatio, 0.9);
    assert.equal(summary.maxPairRatio, 1.1);
    assert.equal(summary.medianWithMs, 110);
    assert.equal(summary.medianWithoutMs, 100);
    assert.equal(summary.ratioOfMedians, 1.1);
    assert.deepEqual(summary.peakReplicas, [2, 3, 0]);
    // The API server's counters, per round with the webhook, in round order.
    assert.deepEqual(summary.deleteWebhookCalls, [110 % 7, 210 % 7, 90 % 7]);
    assert.deepEqual(summary.matchConditionExclusions, [110, 210, 90]);
  });

  it("times the garbage collector's one-by-one deletes and the namespace's end apart, and splits the totals by when the namespace was reached", () => {
    const phased = (
      webhook: boolean,
      teardownMs: number,
      namespaceDeletingMs: number,
      undeleted: number,
    ) => ({
      ...round(webhook, teardownMs),
      pods: 2000,
      namespaceDeletingMs,
      podsUndeletedAtNamespaceDelete: undeleted,
    });
    const rounds = [
      phased(true, 150_000, 140_000, 0), // 2,000 one by one: 70 ms a pod
      phased(false, 120_000, 100_000, 500), // 1,500: 66.7 ms
      phased(false, 35_000, 2_000, 1950), // 50 one by one: too few to time
      phased(true, 40_000, 5_000, 1930),
    ];
    assert.equal(oneByOneMsPerPod(rounds[0] as BurstRound), 70);
    assert.equal(oneByOneMsPerPod(rounds[2] as BurstRound), undefined);
    const phases = teardownPhases(rounds);
    assert.deepEqual(phases.oneByOne.pairRatios, [1.05]);
    assert.deepEqual(phases.namespaceEnd.pairRatios, [0.5, 1.061]);
    assert.deepEqual(phases.modes, {
      early: { withMs: [40_000], withoutMs: [35_000] },
      late: { withMs: [150_000], withoutMs: [120_000] },
    });
  });

  it("fits the namespace's end against the pods left, per side, and expects half the pods one by one and half at the end", () => {
    // 75 ms a pod one by one; the namespace's end 10 s plus 20 ms (with) or 5 ms (without) a pod left.
    const at = (webhook: boolean, left: number) => {
      const deleting = 75 * (2000 - left);
      const end = 10_000 + (webhook ? 20 : 5) * left;
      return {
        ...round(webhook, deleting + end),
        pods: 2000,
        namespaceDeletingMs: deleting,
        podsUndeletedAtNamespaceDelete: left,
      };
    };
    const rounds = [at(true, 800), at(false, 1200), at(false, 300), at(true, 1500)];
    assert.deepEqual(namespaceEndFit(rounds.filter((r) => r.webhook)), {
      interceptMs: 10_000,
      msPerPodLeft: 20,
    });
    const expected = expectedTeardown(rounds);
    assert.equal(expected.with?.expectedMs, 75_000 + 10_000 + 20_000);
    assert.equal(expected.without?.expectedMs, 75_000 + 10_000 + 5_000);
    assert.equal(expected.ratio, 1.167);
    assert.equal(namespaceEndFit([at(true, 800)]), undefined, "one round: no line");
  });
});
