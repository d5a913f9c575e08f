// A replica's lease on one sequence shard, and the pure steps around it. Pure: plain objects in and out,
// clocks passed in.
//
// Why: with one write per batch of numbers, the store's speed is the API server's writes per second, and on a
// small machine that is far below what mutate-create serves from memory (docs/performance.md). A replica
// alone on a hot shard therefore takes a lease on it and reserves numbers ahead, per hash, in the same write
// (data[hash] is then the reservation's end). While the lease lasts it hands them out in order from memory,
// and it gives back what it did not use when it lets go: after a short idle time, on shutdown, or as soon as
// another replica asks for the shard (LEASE_WANTED_ANNOTATION). Nobody else writes a counter while a lease
// is held, so the numbers stay dense and in order. (Taking turns holding a shared shard was tried and
// measured slower than writing it number by number: docs/performance.md.)
//
// Safety does not depend on synchronised clocks. The holder hands out numbers only until HOLDER_VALID_MS
// after it *sent* the write that took or renewed the lease; another replica treats the lease as expired only
// after it has seen the same holder's write record unchanged for LEASE_MS by its *own* clock, which starts
// after that write landed. Every change to the data is still a compare-and-swap on the resourceVersion.
// A holder that dies without letting go (SIGKILL, OOM, node loss) leaves its unused reserve as a gap
// (docs/traces.md, "Pod sequence numbers").

import { type ShardMeta, writeRecordsOf } from "./shard.js";

export const LEASE_ANNOTATION = "sequence.simkube-fn/lease";
export const LEASE_WANTED_ANNOTATION = "sequence.simkube-fn/lease-wanted";

/** How long others wait on a holder whose write record stopped moving before they take the shard over. */
export const LEASE_MS = 5_000;
/**
 * How long a replica that wants to write lets foreign leases keep it out, however alive they look: a holder
 * asked to let go does so at its next renewal (LEASE_RENEW_MS), so a lease that is rewritten but not let go
 * within this is not a working replica's (a hand-made record, rewritten to look alive). Taking it over is
 * safe for the numbers: the write is a compare-and-swap that starts at the stored counters, above every
 * pool the holder may still hand out from, and the holder drops its pools at the next copy it reads.
 */
export const LEASE_TAKEOVER_MS = LEASE_MS;
/** How long after sending its last lease write the holder still hands numbers out: half the lease. */
export const HOLDER_VALID_MS = LEASE_MS / 2;
/** The holder renews (or lets go, when idle) this often, and so sees a request for the shard within it. */
export const LEASE_RENEW_MS = 500;
/** A holder with no call for this long gives its reserve back and lets go. */
export const LEASE_IDLE_MS = 1_000;
/** Reserve per hash: the first, and the bounds of its adaptation. */
export const RESERVE_MIN = 8;
export const RESERVE_MAX = 1_024;
/** A refill wanted sooner than this after the last doubles the reserve; one wanted much later halves it. */
export const RESERVE_FAST_MS = 250;

export interface ShardLease {
  holder: string;
}

/** The lease recorded on the shard, if any (a hand-edited, unreadable one counts as none). */
export function leaseOf(meta: ShardMeta | undefined): ShardLease | undefined {
  const text = meta?.annotations?.[LEASE_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    const holder = (value as { holder?: unknown } | null)?.holder;
    return typeof holder === "string" && holder !== "" ? { holder } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What tells an observer that the holder is alive: its lease and the id of its last landed write. Every
 * write of the holder (a refill or a renewal) changes it.
 */
export function leaseMarker(meta: ShardMeta | undefined): string | undefined {
  const lease = leaseOf(meta);
  if (lease === undefined) return undefined;
  return `${lease.holder}#${writeRecordsOf(meta)[lease.holder]?.[0] ?? "none"}`;
}

export function isLeaseWanted(meta: ShardMeta | undefined): boolean {
  return (meta?.annotations?.[LEASE_WANTED_ANNOTATION] ?? "") !== "";
}

/** Annotations with the lease set to `holder` (and any request for it cleared: the holder has just answered). */
export function withLease(annotations: Record<string, string>, holder: string): Record<string, string> {
  const out: Record<string, string> = { ...annotations, [LEASE_ANNOTATION]: JSON.stringify({ holder }) };
  delete out[LEASE_WANTED_ANNOTATION];
  return out;
}

/** Annotations without a lease or a request for one. */
export function withoutLease(annotations: Record<string, string>): Record<string, string> {
  const out = { ...annotations };
  delete out[LEASE_ANNOTATION];
  delete out[LEASE_WANTED_ANNOTATION];
  return out;
}

/** Annotations asking the holder to let go: `writer` wants to write the shard. */
export function withLeaseWanted(annotations: Record<string, string>, writer: string): Record<string, string> {
  return { ...annotations, [LEASE_WANTED_ANNOTATION]: writer };
}

/** Another replica's lease as this one saw it: its marker, and since when (this process's clock). */
export interface ForeignLease {
  marker: string;
  since: number;
}

/** What this replica has seen of a foreign lease, with `marker` seen now: since when it stands still. */
export function observeForeignLease(
  seen: ForeignLease | undefined,
  marker: string,
  now: number,
): ForeignLease {
  return seen?.marker === marker ? seen : { marker, since: now };
}

/**
 * Whether a foreign lease still binds this replica. A lease whose marker has not changed for LEASE_MS of our
 * clock is over: its holder stopped writing, so it stopped handing out numbers LEASE_MS - HOLDER_VALID_MS
 * before.
 */
export function foreignLeaseBinds(seen: ForeignLease | undefined, now: number): boolean {
  return seen !== undefined && now - seen.since < LEASE_MS;
}

/**
 * Whether a replica kept out by foreign leases since `blockedSince` (its own clock, no write of its own
 * landed since) may take the shard over now, however alive the lease looks (LEASE_TAKEOVER_MS).
 */
export function blockedTooLong(blockedSince: number | undefined, now: number): boolean {
  return blockedSince !== undefined && now - blockedSince >= LEASE_TAKEOVER_MS;
}

/** The next reserve for a hash: doubled when the last one ran out fast, halved when it lasted long. */
export function nextReserve(previous: number, sinceLastRefillMs: number): number {
  if (sinceLastRefillMs < RESERVE_FAST_MS) return Math.min(previous * 2, RESERVE_MAX);
  if (sinceLastRefillMs > 8 * RESERVE_FAST_MS) return Math.max(Math.floor(previous / 2), RESERVE_MIN);
  return previous;
}

/** Numbers reserved for one hash under the lease: [next, limit). data[hash] is `limit` while it is held. */
export interface Pool {
  next: number;
  limit: number;
  /** How many numbers a refill reserves. */
  reserve: number;
  /** When the last refill was planned (this process's clock). */
  refilledAt: number;
}

/**
 * The counters with each pool's unused rest given back: data[hash] goes from the pool's limit down to its
 * next number. A counter that is not at the pool's limit was not ours to lower and is left as it is.
 */
export function returnReserves(
  data: Record<string, string>,
  pools: ReadonlyMap<string, Pool>,
): Record<string, string> {
  const out = { ...data };
  for (const [hash, pool] of pools) {
    if (out[hash] === String(pool.limit)) out[hash] = String(pool.next);
  }
  return out;
}

/** Whether the shard still says what our pools assume: our lease, and every counter at its pool's limit. */
export function poolsStillHeld(
  meta: ShardMeta | undefined,
  data: Record<string, string> | undefined,
  writer: string,
  pools: ReadonlyMap<string, Pool>,
): boolean {
  if (leaseOf(meta)?.holder !== writer) return false;
  for (const [hash, pool] of pools) if (data?.[hash] !== String(pool.limit)) return false;
  return true;
}
