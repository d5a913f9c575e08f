// The API calls of one shard: read it, send a planned write, and what a failed call means for the batch
// waiting on it. One attempt is one read-modify-write for every caller waiting, plus the bookkeeping.

import { withDeadline } from "../base/index.js";
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  KubeError,
  kubeErrorOf,
} from "../kube/index.js";
import {
  type Counter,
  describeError,
  type Pending,
  type ShardWrite,
  type StoreState,
  where,
} from "./counter-state.js";
import { leaseOf } from "./lease.js";
import { serveFromPools } from "./lease-pools.js";
import { decideUnknown, hasBookkeeping, landed, see } from "./shard-answers.js";
import type { ConfigMap } from "./shard-configmap.js";
import { SequenceStoreError } from "./store.js";
import { choosePlan } from "./write-plan.js";

/** What one attempt came to: done, to be retried after some backoff, or failed for its batch. */
export type AttemptResult =
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
export async function attempt(state: StoreState, counter: Counter): Promise<AttemptResult> {
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
