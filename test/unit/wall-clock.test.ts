import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createWallClockNanos } from "../../functions/mutate-create/wall-clock.js";

describe("createWallClockNanos", () => {
  it("starts at the wall clock's millisecond and adds the monotonic clock's nanoseconds", () => {
    let wall = 1_000;
    let mono = 5_000_000_000n;
    const now = createWallClockNanos({ wallMs: () => wall, monotonicNs: () => mono });
    assert.equal(now(), 1_000_000_000n);
    mono += 123_456_789n;
    wall += 123;
    assert.equal(now(), 1_123_456_789n);
  });

  it("re-anchors when the wall clock steps away by more than a millisecond", () => {
    let wall = 1_000;
    let mono = 0n;
    const now = createWallClockNanos({ wallMs: () => wall, monotonicNs: () => mono });
    now();
    mono += 10n;
    wall = 60_000;
    assert.equal(now(), 60_000_000_000n);
    mono += 7n;
    assert.equal(now(), 60_000_000_007n);
  });

  it("reads nanoseconds from the real clocks, within a millisecond of Date.now", () => {
    const now = createWallClockNanos();
    const before = BigInt(Date.now());
    const ms = now() / 1_000_000n;
    const after = BigInt(Date.now());
    assert.ok(ms >= before - 1n && ms <= after + 1n, `${ms} not in [${before}, ${after}]`);
  });
});
