import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelay, type RetryEvent, withRetry } from "../../shared/base/retry.js";
import { isTransient, KubeError } from "../../shared/kube/api.js";

/** A fake clock whose sleep advances time instantly. */
function fakeClock() {
  let t = 1000;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      t += ms;
    },
    advance: (ms: number) => {
      t += ms;
    },
    sleeps,
  };
}

const unavailable = () => new KubeError(503, "ServiceUnavailable", "try later");

describe("backoffDelay", () => {
  it("doubles the cap per attempt up to the maximum (full jitter scales it)", () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, 50, 1000, 0.999999)),
      [49, 99, 199, 399, 799, 999],
    );
    assert.equal(backoffDelay(3, 50, 1000, 0), 0);
    assert.equal(backoffDelay(3, 50, 1000, 0.5), 100);
    assert.equal(backoffDelay(200, 50, 1000, 0.5), 500, "no overflow on huge attempt numbers");
  });
});

describe("withRetry", () => {
  it("returns the first success without sleeping", async () => {
    const clock = fakeClock();
    const result = await withRetry(async () => "ok", {
      deadlineMs: 4000,
      isRetryable: isTransient,
      ...clock,
      random: () => 0.5,
    });
    assert.equal(result, "ok");
    assert.deepEqual(clock.sleeps, []);
  });

  it("retries transient errors with growing jittered backoff, then succeeds", async () => {
    const clock = fakeClock();
    const events: RetryEvent[] = [];
    let calls = 0;
    const result = await withRetry(
      async (attempt) => {
        calls++;
        assert.equal(attempt, calls);
        if (calls < 4) throw unavailable();
        return calls;
      },
      {
        deadlineMs: 4000,
        baseDelayMs: 100,
        maxDelayMs: 1000,
        isRetryable: isTransient,
        ...clock,
        random: () => 0.5,
        onRetry: (event) => events.push(event),
      },
    );
    assert.equal(result, 4);
    assert.deepEqual(clock.sleeps, [50, 100, 200]);
    assert.deepEqual(
      events.map((e) => [e.attempt, e.delayMs]),
      [
        [1, 50],
        [2, 100],
        [3, 200],
      ],
    );
  });

  it("throws a non-retryable error at once", async () => {
    const clock = fakeClock();
    let calls = 0;
    const forbidden = new KubeError(403, "Forbidden", "namespace is terminating");
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw forbidden;
        },
        { deadlineMs: 4000, isRetryable: isTransient, ...clock },
      ),
      (err) => err === forbidden,
    );
    assert.equal(calls, 1);
    assert.deepEqual(clock.sleeps, []);
  });

  it("gives up with the last error when the deadline leaves no room for another attempt", async () => {
    const clock = fakeClock();
    let calls = 0;
    let last: unknown;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          clock.advance(300); // each attempt itself takes time
          last = new KubeError(500, "InternalError", `attempt ${calls}`);
          throw last;
        },
        {
          deadlineMs: 4000,
          baseDelayMs: 50,
          maxDelayMs: 1000,
          isRetryable: isTransient,
          ...clock,
          random: () => 0.999,
        },
      ),
      (err) => err === last,
    );
    const elapsed = clock.now() - 1000;
    assert.ok(elapsed <= 4000, `stayed inside the deadline (elapsed ${elapsed} ms)`);
    assert.ok(calls >= 3 && calls <= 8, `made a few attempts (${calls})`);
  });

  it("retries connection errors (status 0) and 429", async () => {
    const clock = fakeClock();
    const errors = [
      new KubeError(0, "ECONNRESET", "socket hang up"),
      new KubeError(429, "TooManyRequests", ""),
    ];
    const result = await withRetry(
      async () => {
        const err = errors.shift();
        if (err) throw err;
        return "done";
      },
      { deadlineMs: 4000, isRetryable: isTransient, ...clock, random: () => 0 },
    );
    assert.equal(result, "done");
    assert.equal(clock.sleeps.length, 2);
  });
});
