// The wall clock in nanoseconds since the Unix epoch, for the completion-time annotation. SimKube reads
// its time from a clock with nanoseconds and prints all the digits it has; a Date has milliseconds. So
// the time is the Date's millisecond plus the monotonic clock's progress since then, re-anchored
// whenever the two disagree by more than a millisecond (a clock step, NTP slewing).

export interface WallClockSources {
  /** Milliseconds since the epoch (Date.now). */
  wallMs: () => number;
  /** A monotonic clock in nanoseconds (process.hrtime.bigint). */
  monotonicNs: () => bigint;
}

const NANOS_PER_MS = 1_000_000n;

export function createWallClockNanos(
  sources: WallClockSources = { wallMs: () => Date.now(), monotonicNs: () => process.hrtime.bigint() },
): () => bigint {
  let anchor: { wall: bigint; mono: bigint } | undefined;
  return () => {
    const wallMs = sources.wallMs();
    const mono = sources.monotonicNs();
    if (anchor !== undefined) {
      const now = anchor.wall + (mono - anchor.mono);
      const drift = now / NANOS_PER_MS - BigInt(wallMs);
      if (drift >= -1n && drift <= 1n) return now;
    }
    anchor = { wall: BigInt(wallMs) * NANOS_PER_MS, mono };
    return anchor.wall;
  };
}
