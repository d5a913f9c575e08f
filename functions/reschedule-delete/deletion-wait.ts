// Waiting for the deletion a review announces. A DELETE review is a claim: anyone who can reach the function
// can post one naming a live, Running pod, and at admission time the live pod cannot show the deletion yet
// (the API server stores deletionTimestamp, or removes the pod, only after every webhook answered:
// k8s.io/apiserver pkg/registry/generic/registry/store.go Delete). So a clone waits until the pod with the
// review's uid shows it: a deletionTimestamp, or gone (404, or its name taken by another uid).
//
// Polling, not a watch: the deletion lands milliseconds after the answer, so the first read or two find it;
// a read needs only the `get pods` the function already has (a watch needs `watch` and a connection per
// pod), and the API double serves it the same way. Reads back off (25 ms doubling to 1 s) inside a bound,
// so a forged review costs fourteen reads and then nothing.

import type { Pod } from "../../shared/kube/index.js";
import { isNotFound, isTransient } from "../../shared/kube/index.js";

/** What one read of the pod shows about the deletion. Pure. */
export type DeletionShown =
  | { shown: "deletion-timestamp"; live: Pod }
  | { shown: "gone" }
  | { shown: "not-yet"; live: Pod };

/** The pod read by the review's name (undefined: 404), judged against the review's uid. */
export function deletionShownBy(live: Pod | undefined, uid: string): DeletionShown {
  if (live === undefined || live.metadata?.uid !== uid) return { shown: "gone" };
  if (live.metadata?.deletionTimestamp) return { shown: "deletion-timestamp", live };
  return { shown: "not-yet", live };
}

export interface DeletionWaitOptions {
  /** Give up after this many milliseconds. Default 10,000. */
  waitMs?: number;
  /** The first pause before a read; doubles per read. Default 25. */
  firstDelayMs?: number;
  /** Ceiling of one pause. Default 1,000. */
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_DELETION_WAIT_MS = 10_000;

/** The pauses before each read, in order, as long as they fit in `waitMs`. Pure. */
export function pollDelays(waitMs: number, firstDelayMs: number, maxDelayMs: number): number[] {
  const delays: number[] = [];
  let total = 0;
  let next = Math.max(1, firstDelayMs);
  while (total + next <= waitMs) {
    delays.push(next);
    total += next;
    next = Math.min(maxDelayMs, next * 2);
  }
  return delays;
}

/** The deletion as the cluster showed it. */
export type DeletionSeen = Exclude<DeletionShown, { shown: "not-yet" }>;

export type DeletionWaitOutcome = DeletionSeen | { shown: "no-deletion-seen"; reads: number };

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads the pod until it shows the deletion or the wait is over. A 404 is "gone"; a transient error is
 * one read lost; any other error ends the wait by throwing (the caller logs it; nothing is created).
 * `stop()` true ends the wait early (another review already made the clone).
 */
export async function awaitDeletion(
  read: () => Promise<Pod>,
  uid: string,
  options: DeletionWaitOptions & { stop?: () => boolean } = {},
): Promise<DeletionWaitOutcome> {
  const sleep = options.sleep ?? realSleep;
  const delays = pollDelays(
    options.waitMs ?? DEFAULT_DELETION_WAIT_MS,
    options.firstDelayMs ?? 25,
    options.maxDelayMs ?? 1_000,
  );
  let reads = 0;
  for (const delay of delays) {
    await sleep(delay);
    if (options.stop?.()) break;
    let live: Pod | undefined;
    try {
      live = await read();
    } catch (err) {
      if (isTransient(err)) continue;
      if (!isNotFound(err)) throw err;
    }
    reads++;
    const shown = deletionShownBy(live, uid);
    if (shown.shown === "deletion-timestamp" || shown.shown === "gone") return shown;
  }
  return { shown: "no-deletion-seen", reads };
}
