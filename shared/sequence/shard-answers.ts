// What this process learns from the API server's answers about a shard, and what it does with it: a copy
// seen (who else writes it, whose lease is on it), a write known to have landed (its callers answered,
// the numbers of callers that gave up kept to be freed), writes of unknown outcome decided by a read.
// No I/O: shard-io.ts makes the calls.

import { CONTENTION_WINDOW_MS } from "./backoff.js";
import type { Counter, ShardWrite, StoreState } from "./counter-state.js";
import { isLeaseWanted, leaseMarker, leaseOf, observeForeignLease, poolsStillHeld } from "./lease.js";
import { dropLease, installPools, lowPools } from "./lease-pools.js";
import { landedWriteId, otherActiveWriters } from "./shard.js";
import type { ConfigMap } from "./shard-configmap.js";

function addOrphan(orphans: Map<string, number[]>, hash: string, seq: number): void {
  const list = orphans.get(hash) ?? [];
  if (!list.includes(seq)) list.push(seq);
  orphans.set(hash, list);
}

function removeOrphans(orphans: Map<string, number[]>, gone: ReadonlyMap<string, readonly number[]>): void {
  for (const [hash, numbers] of gone) {
    const left = (orphans.get(hash) ?? []).filter((n) => !numbers.includes(n));
    if (left.length > 0) orphans.set(hash, left);
    else orphans.delete(hash);
  }
}

/**
 * A write is known to have landed: its callers get their numbers; a caller that gave up meanwhile (deadline)
 * leaves its number to be freed, so it is handed out again instead of becoming a gap.
 */
export function landed(state: StoreState, counter: Counter, write: ShardWrite): void {
  counter.lastLandedAt = state.settings.now();
  counter.lastHashes = new Set([...write.batch.map((p) => p.hash), ...write.grow.keys()]);
  if (write.kind === "ask") return;
  if (write.kind === "lease") {
    installPools(state, counter, write);
    return;
  }
  if (write.kind === "release") {
    dropLease(counter);
    counter.chore = undefined;
  }
  removeOrphans(counter.orphans, write.orphans);
  write.batch.forEach((p, i) => {
    const seq = write.numbers[i] as number;
    if (p.settled) {
      addOrphan(counter.orphans, p.hash, seq);
    } else {
      p.settled = true;
      p.resolve(seq);
    }
  });
}

/** A read of the shard (undefined: it does not exist) decides the writes of unknown outcome, if it can. */
export function decideUnknown(state: StoreState, counter: Counter, read: ConfigMap | undefined): void {
  const first = counter.unknown[0];
  if (first === undefined) return;
  const ids = counter.unknown.map((w) => w.id);
  const id = landedWriteId(read?.metadata, state.writer, first.baseRv, ids);
  if (id === undefined) return;
  const won = counter.unknown.find((w) => w.id === id);
  counter.unknown = [];
  if (won) landed(state, counter, won);
}

/** Work left besides the queue: a write to decide, numbers to free, a lease to renew, refill or let go. */
export function hasBookkeeping(counter: Counter): boolean {
  return (
    counter.unknown.length > 0 ||
    counter.orphans.size > 0 ||
    counter.chore !== undefined ||
    lowPools(counter).length > 0
  );
}

/**
 * Keeps the copy the API server answered, who else has been writing it, and whose lease is on it. A copy
 * that was read (not our own write's answer) also checks our lease: when it no longer backs our pools, the
 * lease was taken over and its pools are not ours any more.
 */
export function see(state: StoreState, counter: Counter, object: ConfigMap | undefined, read: boolean): void {
  counter.cached = object;
  const now = state.settings.wallClock();
  counter.contenders = otherActiveWriters(object?.metadata, state.writer, now, CONTENTION_WINDOW_MS);
  const holder = leaseOf(object?.metadata)?.holder;
  const marker = leaseMarker(object?.metadata);
  counter.foreign =
    holder !== undefined && holder !== state.writer && marker !== undefined
      ? observeForeignLease(counter.foreign, marker, state.settings.now())
      : undefined;
  // Kept out until a copy read from the API shows no foreign lease: our own takeover write shows none, and
  // a record put back after it must not buy another LEASE_TAKEOVER_MS.
  if (read && counter.foreign === undefined) counter.blockedSince = undefined;
  const lease = counter.lease;
  if (read && lease && !poolsStillHeld(object?.metadata, object?.data, state.writer, lease.pools)) {
    dropLease(counter);
  } else if (lease && isLeaseWanted(object?.metadata)) {
    lease.wanted = true;
  }
}
