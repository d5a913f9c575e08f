// LatencyHistogram replaces prom-client's Histogram for the review latency on the hot path; /metrics must
// not notice. The same observations go into both, and its text must be what a Registry holding only
// prom-client's Histogram writes, including values above the last bound, outcomes first seen in any order,
// escaped label values and help, and after a reset.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Histogram, Registry } from "prom-client";
import { LatencyHistogram } from "../../functions/runtime/latency-histogram.js";
import { LATENCY_BUCKETS } from "../../functions/runtime/metrics.js";

const NAME = "simkube_fn_admission_duration_seconds";
const HELP = "Time from a review's arrival to its answer, by function and outcome.";

function pair(fn: string, help = HELP) {
  const theirs = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help,
    labelNames: ["function", "outcome"],
    buckets: [...LATENCY_BUCKETS],
    registers: [theirs],
  });
  const latency = new LatencyHistogram(NAME, help, LATENCY_BUCKETS, fn);
  const ours = { metrics: async () => latency.exposition() };
  const observe = (outcome: string, seconds: number) => {
    histogram.observe({ function: fn, outcome }, seconds);
    latency.observe(outcome, seconds);
  };
  const reset = () => {
    histogram.reset();
    latency.reset();
  };
  return { theirs, ours, observe, reset };
}

describe("LatencyHistogram", () => {
  it("writes the same exposition text as prom-client's Histogram", async () => {
    const { theirs, ours, observe } = pair("mutate-create");
    const samples: [string, number][] = [
      ["patched", 0.0004],
      ["allowed", 0.001],
      ["patched", 0.0031],
      ["denied", 0.2],
      ["patched", 0.0031],
      ["error", 45],
      ["allowed", 30],
      ["patched", 1e-7],
    ];
    for (const [outcome, seconds] of samples) observe(outcome, seconds);
    const text = await ours.metrics();
    assert.equal(text, await theirs.metrics());
    // And it says something: 4 patched reviews, one of them in the 0.0025-0.005 bucket twice.
    assert.match(
      text,
      /simkube_fn_admission_duration_seconds_count\{function="mutate-create",outcome="patched"\} 4/,
    );
    assert.match(
      text,
      /simkube_fn_admission_duration_seconds_bucket\{le="0.005",function="mutate-create",outcome="patched"\} 4/,
    );
    assert.match(
      text,
      /simkube_fn_admission_duration_seconds_bucket\{le="30",function="mutate-create",outcome="error"\} 0/,
    );
  });

  it("escapes label values and help as prom-client does", async () => {
    const { theirs, ours, observe } = pair('odd"fn\\with\nbreaks', "Help with a \\ and a\nnewline.");
    observe('out"come', 0.004);
    const text = await ours.metrics();
    assert.equal(text, await theirs.metrics());
    assert.ok(text.includes('function="odd\\"fn\\\\with\\nbreaks"'), text);
  });

  it("is empty after a reset, then counts again, as prom-client's is", async () => {
    const { theirs, ours, observe, reset } = pair("reschedule-delete");
    observe("allowed", 0.002);
    reset();
    assert.equal(await ours.metrics(), await theirs.metrics());
    observe("allowed", 0.02);
    assert.equal(await ours.metrics(), await theirs.metrics());
    assert.match(await ours.metrics(), /_count\{function="reschedule-delete",outcome="allowed"\} 1\n/);
  });
});
