// What the next write to a shard is, planned from the last copy of it: numbers for a batch, a lease taken
// or renewed with its pools grown, a release, or a request to another replica's lease. No I/O: a plan is
// the object to send (shard-io.ts sends it). Planning takes the write's id and marks a lease releasing.

import { SEQUENCE_SHARD_COUNT } from "./cluster-naming.js";
import { type Counter, type Pending, type ShardWrite, type StoreState, where } from "./counter-state.js";
import {
  blockedTooLong,
  foreignLeaseBinds,
  isLeaseWanted,
  leaseOf,
  nextReserve,
  RESERVE_MIN,
  returnReserves,
  withLease,
  withLeaseWanted,
  withoutLease,
} from "./lease.js";
import { lowPools } from "./lease-pools.js";
import { annotationsForWrite, freeNumbersOf, mergeFree, reserve, storedCount } from "./shard.js";
import { checkShard, TOTAL_ANNOTATION, totalOf, usableFree } from "./shard-check.js";
import {
  buildSequenceConfigMap,
  CONFIGMAP_DATA_LIMIT_BYTES,
  type ConfigMap,
  configMapDataSize,
  metadataForWrite,
} from "./shard-configmap.js";
import { SequenceStoreError } from "./store.js";

/** A hash numbered in a write that landed less than this long ago is hot: a replica takes a lease for it. */
const HOT_MS = 50;

/**
 * Whether this write may take the lease: leasing on, a hot shard no other replica writes, no free numbers
 * to hand out first.
 */
function mayTakeLease(
  state: StoreState,
  counter: Counter,
  base: ConfigMap | undefined,
  batch: Pending[],
): boolean {
  if (!state.settings.lease || state.closing) return false;
  // Replicas that share a shard write it number by number: a lease would change hands at every request.
  if (batch.length === 0 || counter.contenders > 0) return false;
  if (counter.orphans.size > 0 || counter.unknown.length > 0) return false;
  if (Object.keys(usableFree(freeNumbersOf(base?.metadata), base?.data ?? {})).length > 0) return false;
  return hashesRepeat(state, counter, batch);
}

/**
 * Whether numbers reserved ahead would be used: a hash of the batch is asked for twice in it, or was in our
 * last write to the shard, which landed less than HOT_MS ago. Calls that each bring a new hash (a run with
 * many distinct hashes) would only pay the lease's renewals and its letting go, on top of their own writes.
 */
function hashesRepeat(state: StoreState, counter: Counter, batch: Pending[]): boolean {
  const recent =
    state.settings.now() - counter.lastLandedAt < HOT_MS ? counter.lastHashes : new Set<string>();
  const seen = new Set<string>();
  for (const { hash } of batch) {
    if (seen.has(hash) || recent.has(hash)) return true;
    seen.add(hash);
  }
  return false;
}

/** What the next write is, or "wait" while another replica's lease binds and it has been asked to let go. */
export function choosePlan(
  state: StoreState,
  counter: Counter,
  base: ConfigMap | undefined,
  batch: Pending[],
): ShardWrite | "wait" {
  // Another replica's lease that we saw moving within LEASE_MS: we may not write the counters, unless it
  // has kept us out for LEASE_TAKEOVER_MS (a record rewritten but never let go): then it is taken over.
  const now = state.settings.now();
  if (base !== undefined && foreignLeaseBinds(counter.foreign, now)) {
    counter.blockedSince ??= now;
    if (!blockedTooLong(counter.blockedSince, now)) {
      return isLeaseWanted(base.metadata) ? "wait" : planAsk(state, counter, base);
    }
  }
  const lease = counter.lease;
  if (lease !== undefined) {
    if (counter.chore === "release" || lease.releasing || state.closing || lease.wanted) {
      lease.releasing = true;
      return planWrite(state, counter, base, batch, "release");
    }
    return planLeaseWrite(state, counter, base, batch);
  }
  if (mayTakeLease(state, counter, base, batch)) return planLeaseWrite(state, counter, base, batch);
  return planWrite(state, counter, base, batch, "numbers");
}

/**
 * A write of the batch's numbers (free ones first), this write's id and the free numbers left. A release
 * first gives our pools' rest back. Either way no lease is left on the shard: one that is not ours was over.
 */
function planWrite(
  state: StoreState,
  counter: Counter,
  base: ConfigMap | undefined,
  batch: Pending[],
  kind: "numbers" | "release",
): ShardWrite {
  const id = ++counter.lastWriteId;
  const orphans = new Map([...counter.orphans].map(([hash, list]) => [hash, [...list]]));
  const checked = checkShard(base);
  const pools = kind === "release" ? counter.lease?.pools : undefined;
  const stored = pools ? returnReserves(checked.data, pools) : checked.data;
  // Our own orphans too are handed out only below their counter (someone may have lowered it).
  const free = usableFree(mergeFree(checked.free, orphans), stored);
  const { data, numbers, free: left } = reserve(stored, batch, free);
  checkShardSize(counter, data);
  const written = annotationsForWrite(base?.metadata, state.writer, id, state.settings.wallClock(), left);
  const annotations =
    leaseOf(base?.metadata) || isLeaseWanted(base?.metadata) ? withoutLease(written) : written;
  return {
    kind,
    id,
    plannedAt: state.settings.now(),
    grow: new Map(),
    baseRv: base?.metadata?.resourceVersion ?? "",
    batch,
    numbers,
    orphans,
    object: shardObject(counter, base, data, annotations),
  };
}

/**
 * A lease write: takes or renews our lease and grows the pools of the hashes callers wait for and of those
 * running low, each by its reserve (after the numbers its waiting callers need beyond what it has left).
 */
function planLeaseWrite(
  state: StoreState,
  counter: Counter,
  base: ConfigMap | undefined,
  batch: Pending[],
): ShardWrite {
  const id = ++counter.lastWriteId;
  const now = state.settings.now();
  const checked = checkShard(base);
  const data = { ...checked.data };
  const waiting = new Map<string, number>();
  for (const p of batch) waiting.set(p.hash, (waiting.get(p.hash) ?? 0) + 1);
  const pools = counter.lease?.pools;
  const grow: ShardWrite["grow"] = new Map();
  for (const hash of new Set([...waiting.keys(), ...lowPools(counter)])) {
    // While the lease is ours the stored counter is the pool's limit (checked on every read).
    const stored = storedCount(data, hash);
    const pool = pools?.get(hash);
    const left = pool ? stored - pool.next : 0;
    const reserveSize = pool ? nextReserve(pool.reserve, now - pool.refilledAt) : RESERVE_MIN;
    const limit = stored + Math.max(0, (waiting.get(hash) ?? 0) - left) + reserveSize;
    data[hash] = String(limit);
    grow.set(hash, { from: pool ? pool.next : stored, limit, reserve: reserveSize });
  }
  checkShardSize(counter, data);
  const free = checked.free;
  // No request for the shard survives a lease write: a holder that was asked lets go instead (choosePlan).
  const annotations = withLease(
    annotationsForWrite(base?.metadata, state.writer, id, state.settings.wallClock(), free),
    state.writer,
  );
  return {
    kind: "lease",
    id,
    plannedAt: now,
    grow,
    baseRv: base?.metadata?.resourceVersion ?? "",
    batch: [],
    numbers: [],
    orphans: new Map(),
    object: shardObject(counter, base, data, annotations),
  };
}

/** A write that changes no counter and asks the replica holding the shard's lease to let go. */
function planAsk(state: StoreState, counter: Counter, base: ConfigMap): ShardWrite {
  const id = ++counter.lastWriteId;
  const checked = checkShard(base);
  const free = checked.free;
  const annotations = withLeaseWanted(
    annotationsForWrite(base.metadata, state.writer, id, state.settings.wallClock(), free),
    state.writer,
  );
  return {
    kind: "ask",
    id,
    plannedAt: state.settings.now(),
    grow: new Map(),
    baseRv: base.metadata?.resourceVersion ?? "",
    batch: [],
    numbers: [],
    orphans: new Map(),
    object: shardObject(counter, base, checked.data, annotations),
  };
}

/** The object a write sends, with the total its counters add up to (shard-check.ts repairs from it). */
function shardObject(
  counter: Counter,
  base: ConfigMap | undefined,
  data: Record<string, string>,
  written: Record<string, string>,
): ConfigMap {
  const annotations = { ...written, [TOTAL_ANNOTATION]: totalOf(data) };
  return base
    ? { ...base, data, metadata: { ...metadataForWrite(base.metadata), annotations } }
    : buildSequenceConfigMap(counter.ref, counter.scope, data, annotations);
}

// Fail with our own words before the API server would answer 422 (the batch then hands out nothing).
function checkShardSize(counter: Counter, data: Record<string, string>): void {
  const size = configMapDataSize(data);
  if (size <= CONFIGMAP_DATA_LIMIT_BYTES) return;
  throw new SequenceStoreError(
    `${where(counter)} is full: its ${Object.keys(data).length} counters would take ${size} bytes, ` +
      `over the ${CONFIGMAP_DATA_LIMIT_BYTES} bytes a ConfigMap may hold (this run has too many distinct ` +
      `spec hashes for ${SEQUENCE_SHARD_COUNT} shards)`,
  );
}
