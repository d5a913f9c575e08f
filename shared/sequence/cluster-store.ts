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
//
// The parts: cluster-settings.ts (options), cluster-naming.ts (which shard, which ConfigMap),
// shard-configmap.ts (the object), counter-state.ts (what this process keeps), write-plan.ts (the next
// write), shard-io.ts (the API calls), shard-answers.ts (what the answers change), lease-pools.ts (numbers
// reserved ahead), backoff.ts (waits). This file queues the calls and runs each shard's drain loop.

import { randomBytes } from "node:crypto";
import type { KubeApi } from "../kube/index.js";
import { backoffAfter, turnAfterWrite } from "./backoff.js";
import { type ClusterSequenceStoreOptions, resolveSettings, type StoreSettings } from "./cluster-settings.js";
import {
  type Counter,
  counterFor,
  describeError,
  fail,
  type Pending,
  type StoreState,
  where,
} from "./counter-state.js";
import { isLow, takeFromPool } from "./lease-pools.js";
import { hasBookkeeping } from "./shard-answers.js";
import { attempt } from "./shard-io.js";
import { checkSequenceHash, type SequenceScope, type SequenceStore } from "./store.js";

// Drop what is answered, expired or out of attempts; what is left takes part in the next attempt.
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
