// The default SequenceStore: counters shared by every replica of the function, kept in ConfigMaps in the
// cluster and updated with optimistic concurrency (PUT with the resourceVersion last read).
//
// Sharded so that no object grows with the trace: a simulation run has up to SEQUENCE_SHARD_COUNT
// ConfigMaps, and a spec hash always lives in shard fnv1a(hash) % SEQUENCE_SHARD_COUNT. Each shard is an
// independent counter (Counter in counter-state.ts: its own cached object and resourceVersion, its own queue
// and writes).
//
// Data: { "<spec hash>": "<next free number>" }. A number is handed out only after the PUT (or POST) that
// reserved it is known to have landed. Exact: the store skips no number for its own reasons.
//   - A write whose outcome is unknown (no answer, 5xx, our own timeout) is resolved by reading the object
//     back: each write records its id in the object, so the read tells whether it landed
//     (shard.ts). If it did, its callers get its numbers; if not, they take part in the next write.
//   - A caller whose deadline passes while its write is in flight is denied; if that write lands, its number
//     goes to the shard's free list and is handed out next (lowest first), by any replica.
// What can still leave a hole is outside the store: a CREATE admitted and then refused by the API server
// after the webhook answered (docs/traces.md, "Pod sequence numbers"), or a process that dies holding freed numbers
// it had not written yet.
//
// Cost per CREATE review (details in docs/traces.md, "Pod sequence numbers"):
//   - first use of a simulation in a process: GET (+ POST when nobody created the object yet), then the PUT;
//   - afterwards, uncontended: one PUT, the object is cached from the previous answer;
//   - after another replica wrote in between: PUT -> 409, GET, PUT.
// Concurrent next() calls for one shard in one process share a single read-modify-write (group commit):
// whoever waits while a write is in flight joins the next one and all of them get consecutive numbers.

import { randomBytes } from "node:crypto";
import { withDeadline } from "../base/index.js";
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  type KubeApi,
  KubeError,
  kubeErrorOf,
} from "../kube/index.js";
import { backoffAfter, turnAfterWrite } from "./backoff.js";
import { SEQUENCE_SHARD_COUNT } from "./cluster-naming.js";
import { type ClusterSequenceStoreOptions, resolveSettings, type StoreSettings } from "./cluster-settings.js";
import {
  type Counter,
  counterFor,
  describeError,
  fail,
  type Pending,
  type ShardWrite,
  type StoreState,
  where,
} from "./counter-state.js";
import {
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
import { isLow, lowPools, serveFromPools, takeFromPool } from "./lease-pools.js";
import { annotationsForWrite, freeNumbersOf, mergeFree, reserve, storedCount } from "./shard.js";
import { decideUnknown, hasBookkeeping, landed, see } from "./shard-answers.js";
import {
  buildSequenceConfigMap,
  CONFIGMAP_DATA_LIMIT_BYTES,
  type ConfigMap,
  configMapDataSize,
  metadataForWrite,
} from "./shard-configmap.js";
import { checkSequenceHash, type SequenceScope, type SequenceStore, SequenceStoreError } from "./store.js";

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
  if (Object.keys(freeNumbersOf(base?.metadata)).length > 0) return false;
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
function choosePlan(
  state: StoreState,
  counter: Counter,
  base: ConfigMap | undefined,
  batch: Pending[],
): ShardWrite | "wait" {
  // Another replica's lease that we saw moving within LEASE_MS: we may not write the counters.
  if (base !== undefined && foreignLeaseBinds(counter.foreign, state.settings.now())) {
    return isLeaseWanted(base.metadata) ? "wait" : planAsk(state, counter, base);
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
  const free = mergeFree(freeNumbersOf(base?.metadata), orphans);
  const pools = kind === "release" ? counter.lease?.pools : undefined;
  const stored = pools ? returnReserves(base?.data ?? {}, pools) : (base?.data ?? {});
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
  const data = { ...(base?.data ?? {}) };
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
  const free = freeNumbersOf(base?.metadata);
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
  const free = freeNumbersOf(base.metadata);
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
    object: shardObject(counter, base, base.data ?? {}, annotations),
  };
}

function shardObject(
  counter: Counter,
  base: ConfigMap | undefined,
  data: Record<string, string>,
  annotations: Record<string, string>,
): ConfigMap {
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

/** What one attempt came to: done, to be retried after some backoff, or failed for its batch. */
type AttemptResult =
  | { kind: "done" }
  | { kind: "retry"; backoff: "none" | "conflict" | "transient" | "lease"; error: unknown }
  | { kind: "fail"; error: SequenceStoreError; batch: Pending[] };

async function readShard(state: StoreState, counter: Counter): Promise<ConfigMap | undefined> {
  try {
    return await boundedCall(state.settings.deadlineMs, state.kube.read<ConfigMap>(counter.ref));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** A write answered (landed, or 409: a whole round trip either way) took `ms`. */
function timeWrite(counter: Counter, ms: number): void {
  counter.writeMs = counter.writeMs === 0 ? ms : 0.8 * counter.writeMs + 0.2 * ms;
}

/** Sends the write; a write whose answer is lost is kept to be decided by the next read. */
async function sendWrite(
  state: StoreState,
  counter: Counter,
  write: ShardWrite,
  create: boolean,
): Promise<void> {
  const { kube, settings } = state;
  const started = settings.now();
  try {
    const call = create ? kube.create(write.object) : kube.replace<ConfigMap>(write.object);
    see(state, counter, await boundedCall(settings.deadlineMs, call), false);
    timeWrite(counter, settings.now() - started);
  } catch (err) {
    if (isConflict(err)) timeWrite(counter, settings.now() - started);
    if (isTransient(err)) counter.unknown.push(write);
    throw err;
  }
  // Every earlier write of unknown outcome was based on the version this one replaced: none of them landed.
  counter.unknown = [];
  landed(state, counter, write);
}

// One read-modify-write for every caller waiting, plus the bookkeeping. Never throws.
async function attempt(state: StoreState, counter: Counter): Promise<AttemptResult> {
  let batch = counter.queue.filter((p) => !p.settled);
  for (const p of batch) p.attempts += 1;
  let verb = "read";
  try {
    if (counter.cached === undefined) {
      const read = await readShard(state, counter);
      decideUnknown(state, counter, read);
      see(state, counter, read, true);
    }
    serveFromPools(state, counter);
    batch = batch.filter((p) => !p.settled);
    if (batch.length === 0 && !hasBookkeeping(counter)) return { kind: "done" };
    const base = counter.cached;
    const plan = choosePlan(state, counter, base, batch);
    if (plan === "wait") {
      // Waiting for another replica to let go is not a failed attempt: it may take up to LEASE_MS.
      for (const p of batch) p.attempts -= 1;
      counter.cached = undefined;
      const holder = leaseOf(base?.metadata)?.holder ?? "?";
      return {
        kind: "retry",
        backoff: "lease",
        error: new Error(`the shard is leased by replica ${holder}`),
      };
    }
    // A request races the holder's writes by design, and callers wait for a number, not for the lease:
    // a conflict of these writes costs no attempt. The deadline still bounds the wait.
    if (plan.kind === "lease" || plan.kind === "ask") for (const p of batch) p.attempts -= 1;
    verb = base ? "update" : "create";
    await sendWrite(state, counter, plan, base === undefined);
    return { kind: "done" };
  } catch (err) {
    counter.cached = undefined;
    return classifyFailure(counter, verb, err, batch);
  }
}

/** What a failed read, create or update means for the batch: retry (and how to back off) or fail. */
function classifyFailure(counter: Counter, verb: string, err: unknown, batch: Pending[]): AttemptResult {
  if (err instanceof SequenceStoreError) return { kind: "fail", error: err, batch };
  // Another replica created the object first: read it and update it.
  if (isAlreadyExists(err)) return { kind: "retry", backoff: "none", error: err };
  if (isConflict(err)) return { kind: "retry", backoff: "conflict", error: err };
  // Deleted under us (by hand, or by the garbage collector at the end of the run): create it again.
  if (verb === "update" && isNotFound(err)) return { kind: "retry", backoff: "none", error: err };
  if (isTransient(err)) return { kind: "retry", backoff: "transient", error: err };
  return { kind: "fail", error: refusal(counter, verb, err), batch };
}

function refusal(counter: Counter, verb: string, err: unknown): SequenceStoreError {
  const e = kubeErrorOf(err);
  let message = `could not ${verb} ${where(counter)}: ${describeError(err)}`;
  if (e?.status === 403 || e?.status === 401) {
    // OwnerReferencesPermissionEnforcement (OpenShift, some hardened clusters) also wants delete to set an owner.
    const verbs = /ownerRef/i.test(e.message) ? "get, create, update and delete" : "get, create and update";
    message += `; the function's service account needs ${verbs} on configmaps in namespace ${counter.ref.namespace}`;
  }
  return new SequenceStoreError(message, { cause: err });
}

// A hung API call must not stall every later next() of this simulation: give up on it after the
// deadline and treat its outcome as unknown (the object is read again before the next try).
function boundedCall<T>(deadlineMs: number, call: Promise<T>): Promise<T> {
  return withDeadline(call, deadlineMs, () => {
    throw new KubeError(0, "Timeout", `no answer from the API server within ${deadlineMs} ms`);
  });
}

function prune(settings: StoreSettings, counter: Counter, lastError: unknown): void {
  const { deadlineMs, maxAttempts } = settings;
  const t = settings.now();
  const last = lastError === undefined ? "" : `; last error: ${describeError(lastError)}`;
  counter.queue = counter.queue.filter((p) => {
    if (p.settled) return false;
    if (t >= p.deadline) {
      fail(
        counter,
        p,
        `${where(counter)} could not be updated within ${deadlineMs} ms (${p.attempts} attempts${last})`,
        lastError,
      );
      return false;
    }
    if (p.attempts >= maxAttempts) {
      fail(counter, p, `${where(counter)} could not be updated in ${maxAttempts} attempts${last}`, lastError);
      return false;
    }
    return true;
  });
}

/**
 * Whether drain() goes on: callers wait, or bookkeeping is left (a write to decide, numbers to free) and it
 * has had less than one deadline and maxAttempts since the queue emptied. Bookkeeping left over is taken up
 * again by the shard's next call.
 */
function worthAnotherAttempt(
  settings: StoreSettings,
  counter: Counter,
  idle: { since?: number; attempts: number },
): boolean {
  if (counter.queue.length > 0) {
    idle.since = undefined;
    idle.attempts = 0;
    return true;
  }
  if (!hasBookkeeping(counter)) return false;
  idle.since ??= settings.now();
  idle.attempts += 1;
  return settings.now() - idle.since < settings.deadlineMs && idle.attempts <= settings.maxAttempts;
}

async function drain(state: StoreState, counter: Counter): Promise<void> {
  const { settings } = state;
  counter.draining = true;
  let failures = 0;
  let lastError: unknown;
  const idle: { since?: number; attempts: number } = { attempts: 0 };
  try {
    // Let callers of the same tick join the first batch.
    await Promise.resolve();
    for (;;) {
      prune(settings, counter, lastError);
      if (!worthAnotherAttempt(settings, counter, idle)) return;
      const result = await attempt(state, counter);
      if (result.kind === "retry") {
        lastError = result.error;
        if (result.backoff === "none") continue;
        prune(settings, counter, lastError); // no sleeping for callers that are out of attempts
        if (counter.queue.length === 0 && !hasBookkeeping(counter)) return;
        failures += 1;
        const delay = backoffAfter(settings, counter, result.backoff, failures);
        if (delay > 0) await settings.sleep(delay);
        continue;
      }
      if (result.kind === "fail") {
        for (const p of result.batch) fail(counter, p, result.error.message, result.error.cause);
      }
      failures = 0;
      lastError = undefined;
      const turn = result.kind === "done" ? turnAfterWrite(state, counter) : 0;
      if (turn > 0) await settings.sleep(turn);
    }
  } catch (err) {
    // Not expected (attempt() does not throw); fail what waits rather than leave it hanging.
    for (const p of counter.queue) fail(counter, p, `internal error: ${describeError(err)}`, err);
    counter.queue = [];
  } finally {
    counter.draining = false;
  }
}

/** Queues one call for a number; it is answered by the deadline even while a write is in flight. */
function enqueue(state: StoreState, hash: string, scope: SequenceScope): Promise<number> {
  const { deadlineMs, now } = state.settings;
  return new Promise<number>((resolve, reject) => {
    checkSequenceHash(hash);
    const counter = counterFor(state, scope, hash);
    if (counter.lease !== undefined) {
      const t = now();
      counter.lease.lastUse = t;
      // Nobody waits ahead of this call: a number from our lease's pool needs no write.
      const seq = counter.queue.length === 0 ? takeFromPool(counter, hash, t) : undefined;
      if (seq !== undefined) {
        const pool = counter.lease.pools.get(hash);
        if (pool && isLow(pool)) startDrain(state, counter);
        resolve(seq);
        return;
      }
    }
    // Answer by the deadline even while a write is in flight; drain() drops the settled entry later, and a
    // write that lands after it frees its number (landed()).
    const timer = setTimeout(
      () => fail(counter, pending, `${where(counter)} could not be updated within ${deadlineMs} ms`),
      deadlineMs,
    );
    const pending: Pending = {
      hash,
      deadline: now() + deadlineMs,
      attempts: 0,
      settled: false,
      resolve(seq) {
        clearTimeout(timer);
        resolve(seq);
      },
      reject(err) {
        clearTimeout(timer);
        reject(err);
      },
    };
    counter.queue.push(pending);
    startDrain(state, counter);
  });
}

function startDrain(state: StoreState, counter: Counter): void {
  if (!counter.draining) counter.drained = drain(state, counter);
}

/** Lets go of every lease, giving its reserve back, and takes no new one. */
async function closeStore(state: StoreState): Promise<void> {
  state.closing = true;
  const held = [...state.counters.values()].filter((c) => c.lease !== undefined);
  for (const counter of held) {
    counter.chore = "release";
    startDrain(state, counter);
  }
  await Promise.all(held.map((c) => c.drained));
}

export function createClusterSequenceStore(
  kube: KubeApi,
  options: ClusterSequenceStoreOptions,
): SequenceStore {
  const state: StoreState = {
    kube,
    settings: resolveSettings(options),
    writer: options.writerId ?? randomBytes(6).toString("hex"),
    counters: new Map(),
    names: new Map(),
    closing: false,
    startDrain: (counter) => startDrain(state, counter),
  };
  return {
    next(hash, scope) {
      return enqueue(state, hash, scope);
    },
    close() {
      return closeStore(state);
    },
  };
}
