// How long a shard's drain() waits: after a failed attempt (backoff), and after a landed write while other
// replicas write the same shard (their turn). Pure, but for the clock and the randomness in the settings.

import { backoffDelay } from "../base/index.js";
import type { StoreSettings } from "./cluster-settings.js";
import type { Counter, StoreState } from "./counter-state.js";

/**
 * Full jitter, capped, and never past the oldest caller's deadline. After a conflict with replicas known to
 * be writing the shard, the window is theirs and one write's round trip (contendedTurn) instead.
 */
export function backoffAfter(
  settings: StoreSettings,
  counter: Counter,
  backoff: "conflict" | "transient" | "lease",
  failures: number,
): number {
  if (backoff === "lease") return Math.min(LEASE_POLL_MS, untilFirstDeadline(settings, counter));
  const turn = backoff === "conflict" ? contendedTurn(settings, counter) : undefined;
  const cap = backoff === "conflict" ? settings.conflictBackoffMaxMs : settings.backoffMaxMs;
  const step = turn ?? backoffDelay(failures, settings.backoffBaseMs, cap, settings.random());
  return Math.min(step, untilFirstDeadline(settings, counter));
}

/** How often a replica waiting for another's lease to be let go reads the shard again. */
const LEASE_POLL_MS = 50;

/** Other replicas count as contending for a shard while their last write there is at most this old. */
export const CONTENTION_WINDOW_MS = 2_000;

/**
 * How long to wait after a landed write before the next one, when callers are waiting and other replicas
 * wrote the shard within CONTENTION_WINDOW_MS: a random share of (their number x one write's round trip),
 * capped at backoffMaxMs and at the oldest caller's deadline. Without it the replica that wrote last sends
 * its next write first and wins the race again and again, while each of the others pays a 409, a re-read
 * and a backoff per try, and their callers run out of attempts (measured: 4 replicas on one shard denied
 * pods). Meanwhile the callers arriving here join one larger batch. Alone on a shard: no wait.
 */
export function turnAfterWrite(state: StoreState, counter: Counter): number {
  const { settings } = state;
  // Answered calls leave the queue at the next prune(): only those still waiting count.
  if (!counter.queue.some((p) => !p.settled)) return 0;
  const turn = contendedTurn(settings, counter);
  return turn === undefined ? 0 : Math.min(turn, untilFirstDeadline(settings, counter));
}

/**
 * A random point in a window of (replicas writing the shard) x (one write's round trip), capped at
 * backoffMaxMs; undefined when this replica is alone on the shard or has not timed a write yet. Every
 * replica picks its next write from that window, the last winner too, so that about one write per round
 * trip reaches the shard and each replica gets turns.
 */
function contendedTurn(settings: StoreSettings, counter: Counter): number | undefined {
  if (counter.contenders === 0 || counter.writeMs === 0) return undefined;
  const window = (counter.contenders + 1) * counter.writeMs;
  return Math.min(Math.floor(settings.random() * window), settings.backoffMaxMs);
}

function untilFirstDeadline(settings: StoreSettings, counter: Counter): number {
  const first = counter.queue.reduce((t, p) => Math.min(t, p.deadline), Number.POSITIVE_INFINITY);
  return first - settings.now();
}
