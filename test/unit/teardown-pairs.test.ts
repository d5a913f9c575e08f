// The knative teardown bench's figures (test/bench/teardown-pairs.ts): rounds in pairs, the first of a pair
// alternating, and each pair's ratio with/without the DELETE webhook.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { alternatingOrder, teardownSummary } from "../bench/teardown-pairs.js";
import type { BurstRound } from "../support/cluster/teardown-burst.js";

const round = (webhook: boolean, teardownMs: number, replicas: [number, number][] = []): BurstRound => ({
  webhook,
  pods: 10,
  teardownMs,
  webhookErrors: 0,
  clonesSeen: 0,
  replicas,
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
  });
});
