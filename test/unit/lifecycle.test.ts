import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  completionTime,
  formatRfc3339,
  KNOWN_OWNER_GVKS,
  lookupPodLifecycle,
  simulatedDurationSeconds,
  usesStableHash,
} from "../../shared/trace/lifecycle.js";
import type { PodLifecycle } from "../../shared/trace/model.js";
import { parseTrace } from "../../shared/trace/reader.js";
import { buildTrace, findSharedTrace, finished, ownersTraceSpec, running } from "../support/trace-builder.js";

const EMPTY: PodLifecycle = { kind: "Empty" };

describe("lookupPodLifecycle", () => {
  const trace = buildTrace({
    podLifecycles: [
      {
        gvk: "apps/v1.Deployment",
        nsName: "virtual-ns/web",
        hash: "111",
        lifecycles: [finished(0, 10), finished(0, 20), running(5)],
      },
      { gvk: "apps/v1.ReplicaSet", nsName: "ns/rs", hash: "1", lifecycles: [finished(0, 1)] },
      { gvk: "apps/v1.ReplicaSet", nsName: "ns/rs", hash: "2", lifecycles: [finished(0, 2)] },
      {
        gvk: "example.com/v1.Widget",
        nsName: "ns/w",
        hash: "18446744073709551615",
        lifecycles: [running(9)],
      },
      { gvk: "example.com/v1.Widget", nsName: "ns/w", hash: "7", lifecycles: [finished(3, 4)] },
      { gvk: "v1.Pod", nsName: "ns/bare", hash: "5", lifecycles: [finished(1, 2)] },
      { gvk: "batch/v1.Job", nsName: "ns/no-data", hash: "5", lifecycles: [] },
    ],
  });

  it("ignores the hash for known kinds", () => {
    for (const hash of ["111", "999", "0"]) {
      assert.deepEqual(
        lookupPodLifecycle(trace, "apps/v1.Deployment", "virtual-ns/web", hash, 0),
        finished(0, 10),
      );
    }
  });

  it("wraps the sequence number around the list", () => {
    const got = [0, 1, 2, 3, 4, 5, 300].map((seq) =>
      lookupPodLifecycle(trace, "apps/v1.Deployment", "virtual-ns/web", "111", seq),
    );
    assert.deepEqual(got, [
      finished(0, 10),
      finished(0, 20),
      running(5),
      finished(0, 10),
      finished(0, 20),
      running(5),
      finished(0, 10),
    ]);
  });

  it("for a known kind with several hashes, prefers the pod's own hash, else the first in file order", () => {
    assert.deepEqual(lookupPodLifecycle(trace, "apps/v1.ReplicaSet", "ns/rs", "2", 0), finished(0, 2));
    assert.deepEqual(lookupPodLifecycle(trace, "apps/v1.ReplicaSet", "ns/rs", "1", 0), finished(0, 1));
    assert.deepEqual(lookupPodLifecycle(trace, "apps/v1.ReplicaSet", "ns/rs", "3", 0), finished(0, 1));
  });

  it("needs the exact hash for other kinds", () => {
    assert.deepEqual(lookupPodLifecycle(trace, "example.com/v1.Widget", "ns/w", "7", 0), finished(3, 4));
    assert.deepEqual(
      lookupPodLifecycle(trace, "example.com/v1.Widget", "ns/w", "18446744073709551615", 4),
      running(9),
    );
    assert.deepEqual(
      lookupPodLifecycle(trace, "example.com/v1.Widget", "ns/w", "18446744073709551614", 0),
      EMPTY,
    );
    assert.deepEqual(lookupPodLifecycle(trace, "example.com/v1.Widget", "ns/w", "8", 0), EMPTY);
  });

  it("is Empty when the trace has nothing", () => {
    assert.deepEqual(lookupPodLifecycle(trace, "apps/v1.Deployment", "other-ns/web", "111", 0), EMPTY);
    assert.deepEqual(lookupPodLifecycle(trace, "apps/v1.StatefulSet", "virtual-ns/web", "111", 0), EMPTY);
    assert.deepEqual(lookupPodLifecycle(trace, "batch/v1.Job", "ns/no-data", "5", 3), EMPTY);
    assert.deepEqual(lookupPodLifecycle(buildTrace(), "v1.Pod", "ns/bare", "5", 0), EMPTY);
  });

  it("accepts the old core spelling /v1.Pod", () => {
    assert.deepEqual(lookupPodLifecycle(trace, "/v1.Pod", "ns/bare", "anything", 0), finished(1, 2));
    assert.equal(usesStableHash("/v1.Pod"), false);
  });

  it("rejects a bad sequence number", () => {
    for (const seq of [-1, 1.5, Number.NaN]) {
      assert.throws(() => lookupPodLifecycle(trace, "v1.Pod", "ns/bare", "5", seq), RangeError);
    }
  });

  it("knows SimKube's seven built-in owner kinds", () => {
    assert.deepEqual([...KNOWN_OWNER_GVKS].sort(), [
      "apps/v1.DaemonSet",
      "apps/v1.Deployment",
      "apps/v1.ReplicaSet",
      "apps/v1.StatefulSet",
      "batch/v1.CronJob",
      "batch/v1.Job",
      "v1.Pod",
    ]);
    assert.equal(usesStableHash("apps/v1beta1.Deployment"), true);
  });

  it("works with ownersTraceSpec", () => {
    const t = buildTrace(
      ownersTraceSpec([
        { gvk: "apps/v1.Deployment", nsName: "virtual-ns/web", lifecycles: [finished(0, 30)] },
      ]),
    );
    assert.deepEqual(
      lookupPodLifecycle(t, "apps/v1.Deployment", "virtual-ns/web", "123", 0),
      finished(0, 30),
    );
  });

  it("reads SimKube's cronjob trace", (t) => {
    const path = findSharedTrace("cronjob.sktrace");
    if (!path) return t.skip("shared trace cronjob.sktrace not found");
    const cron = parseTrace(readFileSync(path));
    const got = [0, 1, 2, 3].map((seq) =>
      lookupPodLifecycle(cron, "batch/v1.CronJob", "default/hello-simkube", "0", seq),
    );
    assert.deepEqual(got, [
      finished(1743286861, 1743286891),
      finished(1743286921, 1743286951),
      finished(1743286981, 1743287011),
      finished(1743286861, 1743286891),
    ]);
  });

  it("reads SimKube's bare-pods trace", (t) => {
    const path = findSharedTrace("bare-pods.sktrace");
    if (!path) return t.skip("shared trace bare-pods.sktrace not found");
    const bare = parseTrace(readFileSync(path));
    const hash = "2151974655102796215";
    assert.deepEqual(
      lookupPodLifecycle(bare, "v1.Pod", "testing/bare-pod-1781282509", hash, 0),
      finished(1781282511, 1781282541),
    );
    assert.deepEqual(
      lookupPodLifecycle(bare, "v1.Pod", "testing/bare-pod-1781282630", hash, 0),
      running(1781282631),
    );
    // In the index but without lifecycle data.
    assert.deepEqual(lookupPodLifecycle(bare, "v1.Pod", "testing/bare-pod-1780371934", hash, 0), EMPTY);
  });
});

describe("completionTime", () => {
  const now = new Date("2024-01-01T00:00:00Z");

  it("adds the recorded run time at speed 1, in chrono's RFC 3339 form", () => {
    assert.equal(completionTime(finished(100, 130), 1, now), "2024-01-01T00:00:30+00:00");
  });

  it("scales by speed and truncates to whole seconds", () => {
    const cases: Array<[number, string]> = [
      [2, "2024-01-01T00:00:15+00:00"],
      [0.5, "2024-01-01T00:01:00+00:00"],
      [7, "2024-01-01T00:00:04+00:00"], // 30 / 7 = 4.28
      [100, "2024-01-01T00:00:00+00:00"], // 0.3 s -> 0
    ];
    for (const [speed, expected] of cases) {
      assert.equal(completionTime(finished(100, 130), speed, now), expected, `speed ${speed}`);
    }
  });

  it("clamps a negative duration to zero", () => {
    assert.equal(completionTime(finished(130, 100), 1, now), "2024-01-01T00:00:00+00:00");
  });

  it("keeps now's milliseconds, printed only when non-zero", () => {
    assert.equal(
      completionTime(finished(0, 30), 1, new Date("2026-12-02T12:00:00.123Z")),
      "2026-12-02T12:00:30.123+00:00",
    );
    assert.equal(
      completionTime(finished(0, 30), 1, new Date("2026-12-02T12:00:00.100Z")),
      "2026-12-02T12:00:30.100+00:00",
    );
  });

  it("keeps now's nanoseconds when the clock has them", () => {
    const nowNanos = BigInt(Date.parse("2026-12-02T12:00:00Z")) * 1_000_000n + 123_456_789n;
    assert.equal(completionTime(finished(0, 30), 2, nowNanos), "2026-12-02T12:00:15.123456789+00:00");
  });

  it("crosses day and year boundaries", () => {
    const lateNow = new Date("2024-12-31T23:59:50Z");
    assert.equal(completionTime(finished(0, 86_400 + 10), 1, lateNow), "2025-01-02T00:00:00+00:00");
  });

  it("is undefined for Running and Empty", () => {
    assert.equal(completionTime(running(5), 1, now), undefined);
    assert.equal(completionTime(EMPTY, 1, now), undefined);
  });

  it("rejects a speed that is not positive and finite", () => {
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => completionTime(finished(0, 1), speed, now), RangeError, `speed ${speed}`);
      assert.throws(() => completionTime(running(0), speed, now), RangeError, `speed ${speed}`);
    }
  });

  it("rejects a completion time beyond what a date can hold", () => {
    assert.throws(() => completionTime(finished(0, Number.MAX_SAFE_INTEGER), 1, now), RangeError);
  });

  it("computes durations like SimKube's compute_step_size", () => {
    assert.equal(simulatedDurationSeconds(10, 40, 1), 30);
    assert.equal(simulatedDurationSeconds(10, 41, 2), 15);
    assert.equal(simulatedDurationSeconds(40, 10, 1), 0);
  });
});

describe("formatRfc3339", () => {
  it("prints +00:00 and optional milliseconds", () => {
    assert.equal(formatRfc3339(new Date(0)), "1970-01-01T00:00:00+00:00");
    assert.equal(formatRfc3339(new Date(1)), "1970-01-01T00:00:00.001+00:00");
    assert.throws(() => formatRfc3339(new Date(Number.NaN)), RangeError);
  });

  it("prints 3, 6 or 9 digits of nanoseconds, the fewest that are exact, as chrono's AutoSi does", () => {
    const cases: Array<[bigint, string]> = [
      [0n, "1970-01-01T00:00:00+00:00"],
      [21_000_000_000n, "1970-01-01T00:00:21+00:00"],
      [100_000_000n, "1970-01-01T00:00:00.100+00:00"],
      [123_456_000n, "1970-01-01T00:00:00.123456+00:00"],
      [120_000_000n + 1_000n, "1970-01-01T00:00:00.120001+00:00"],
      [123_456_789n, "1970-01-01T00:00:00.123456789+00:00"],
      [1n, "1970-01-01T00:00:00.000000001+00:00"],
      [1_764_676_800_000_000_010n, "2025-12-02T12:00:00.000000010+00:00"],
      [-1n, "1969-12-31T23:59:59.999999999+00:00"],
    ];
    for (const [nanos, expected] of cases) assert.equal(formatRfc3339(nanos), expected, `${nanos} ns`);
  });

  it("refuses an instant past year 9999", () => {
    assert.throws(() => formatRfc3339(253_402_300_800n * 1_000_000_000n), RangeError);
  });
});
