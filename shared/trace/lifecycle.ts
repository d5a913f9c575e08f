// Which recorded lifecycle a simulated pod gets, and when it should complete (pure).
// Semantics follow SimKube's Trace::lookup_pod_lifecycle and the driver's completion-time annotation.

import { normalizeGvk } from "./gvk.js";
import type { PodLifecycle, TraceTables } from "./model.js";
import { getPodLifecycles } from "./tables.js";

/**
 * Built-in kinds that launch one kind of pod, so their lifecycles are used whatever the pod spec hash
 * (SimKube's KNOWN_GVKS_METADATA). Any other owner kind needs the pod's hash to match.
 */
export const KNOWN_OWNER_GVKS: ReadonlySet<string> = new Set([
  "batch/v1.CronJob",
  "apps/v1.DaemonSet",
  "apps/v1.Deployment",
  "batch/v1.Job",
  "apps/v1.ReplicaSet",
  "apps/v1.StatefulSet",
  "v1.Pod",
]);

const EMPTY: PodLifecycle = { kind: "Empty" };

/** Whether lifecycles for pods of this owner kind are looked up by pod spec hash. */
export function usesStableHash(ownerGvk: string): boolean {
  return !KNOWN_OWNER_GVKS.has(normalizeGvk(ownerGvk));
}

/** The lifecycle list a pod's lookup uses, and the hash it is filed under. */
export interface LifecycleChoice {
  hash: string;
  lifecycles: PodLifecycle[];
}

/**
 * Which of the owner's lifecycle lists pods with this spec hash use, or undefined when none applies.
 *
 * Known kinds ignore the hash in SimKube, which takes whichever hash its HashMap yields first; that is
 * arbitrary when an owner has several hashes (e.g. a Deployment rolled to a new template during the
 * trace). We make the choice deterministic: the list for the pod's own hash when there is one (one of
 * SimKube's possible picks, and the closest match), otherwise the first hash in file order. With one
 * hash, the common case, this is exactly SimKube's result.
 */
export function chooseLifecycleList(
  trace: TraceTables,
  ownerGvk: string,
  ownerNsName: string,
  hash: string,
): LifecycleChoice | undefined {
  const byHash = getPodLifecycles(trace, ownerGvk, ownerNsName);
  if (!byHash) return undefined;
  const own = byHash.get(hash);
  if (own) return { hash, lifecycles: own };
  if (usesStableHash(ownerGvk)) return undefined;
  const first = byHash.entries().next().value;
  return first ? { hash: first[0], lifecycles: first[1] } : undefined;
}

/**
 * The lifecycle for the `seq`-th pod (0-based) with this spec hash under this owner: entry
 * `seq % length` of the list chooseLifecycleList picks, or Empty when the trace has nothing for it.
 */
export function lookupPodLifecycle(
  trace: TraceTables,
  ownerGvk: string,
  ownerNsName: string,
  hash: string,
  seq: number,
): PodLifecycle {
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new RangeError(`pod sequence number must be a non-negative integer, got ${seq}`);
  }
  const list = chooseLifecycleList(trace, ownerGvk, ownerNsName, hash)?.lifecycles;
  // An empty list cannot come from SimKube's tracer; SimKube would divide by zero, we say "nothing".
  if (!list || list.length === 0) return EMPTY;
  return list[seq % list.length] ?? EMPTY;
}

/** Seconds a recorded run lasts in the simulation: max(0, end - start) / speed, truncated like SimKube. */
export function simulatedDurationSeconds(start: number, end: number, speed: number): number {
  if (!(Number.isFinite(speed) && speed > 0)) {
    throw new RangeError(`simulation speed must be a finite number > 0, got ${speed}`);
  }
  return Math.trunc(Math.max(0, end - start) / speed);
}

/** A wall-clock instant: a Date (milliseconds) or nanoseconds since the Unix epoch. */
export type Instant = Date | bigint;

const NANOS_PER_MS = 1_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;

/**
 * The completion time to annotate a pod with: `now` plus the (speed-scaled) recorded run time, for a
 * Finished lifecycle; undefined for Running and Empty (the pod runs until deleted).
 */
export function completionTime(lifecycle: PodLifecycle, speed: number, now: Instant): string | undefined {
  if (!(Number.isFinite(speed) && speed > 0)) {
    throw new RangeError(`simulation speed must be a finite number > 0, got ${speed}`);
  }
  if (lifecycle.kind !== "Finished") return undefined;
  const seconds = simulatedDurationSeconds(lifecycle.start, lifecycle.end, speed);
  return formatRfc3339(nanosOf(now) + BigInt(seconds) * NANOS_PER_SECOND);
}

function nanosOf(at: Instant): bigint {
  if (typeof at === "bigint") return at;
  const ms = at.getTime();
  if (Number.isNaN(ms)) throw new RangeError("cannot format an invalid date");
  return BigInt(ms) * NANOS_PER_MS;
}

/**
 * RFC 3339 in UTC as chrono's DateTime<Utc>::to_rfc3339() prints it: "+00:00" rather than "Z", and the
 * fraction of a second only when non-zero, in 3, 6 or 9 digits, the fewest that hold it exactly
 * ("2024-01-01T00:00:00+00:00", "…:30.100+00:00", "…:30.123456+00:00", "…:30.123456789+00:00").
 */
export function formatRfc3339(at: Instant): string {
  const nanos = nanosOf(at);
  let seconds = nanos / NANOS_PER_SECOND;
  let fraction = nanos % NANOS_PER_SECOND;
  if (fraction < 0n) {
    fraction += NANOS_PER_SECOND;
    seconds -= 1n;
  }
  const date = new Date(Number(seconds) * 1000);
  if (Number.isNaN(date.getTime()))
    throw new RangeError(`completion time out of range: ${nanos} ns since the epoch`);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999) throw new RangeError(`year ${year} is outside RFC 3339's 0000-9999`);
  return `${date.toISOString().slice(0, 19)}${fractionDigits(fraction)}+00:00`;
}

/** chrono's SecondsFormat::AutoSi: nothing, or milli-, micro- or nanoseconds, whichever is exact. */
function fractionDigits(nanos: bigint): string {
  if (nanos === 0n) return "";
  const nine = nanos.toString().padStart(9, "0");
  if (nanos % NANOS_PER_MS === 0n) return `.${nine.slice(0, 3)}`;
  if (nanos % 1_000n === 0n) return `.${nine.slice(0, 6)}`;
  return `.${nine}`;
}
