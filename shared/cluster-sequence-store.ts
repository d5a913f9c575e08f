// The default SequenceStore: counters shared by every replica of the function, kept in one ConfigMap per
// simulation run and updated with optimistic concurrency (PUT with the resourceVersion last read).
//
// Data: { "<spec hash>": "<next free number>" }. A number is handed out only after the PUT (or POST) that
// reserved it succeeded, so a failed write never hands out numbers. A write whose outcome is unknown
// (no answer, 5xx, our own timeout) is never trusted either way: the object is read again before the next
// try, so if the write did land its numbers are skipped (a gap) and never handed out twice.
//
// Cost per CREATE review (details in the README, "Pod sequence numbers"):
//   - first use of a simulation in a process: GET (+ POST when nobody created the object yet), then the PUT;
//   - afterwards, uncontended: one PUT, the object is cached from the previous answer;
//   - after another replica wrote in between: PUT -> 409, GET, PUT.
// Concurrent next() calls for one simulation in one process share a single read-modify-write: whoever
// waits while a write is in flight joins the next one and all of them get consecutive numbers.

import { createHash } from "node:crypto";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { errorMessage } from "./json.js";
import { SIMULATION_LABEL_KEY } from "./keys.js";
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  type KubeApi,
  KubeError,
  type KubeObject,
  kubeErrorOf,
  type ObjectRef,
} from "./kube-api.js";
import { backoffDelay } from "./retry.js";
import {
  checkSequenceHash,
  type SequenceOwner,
  type SequenceScope,
  type SequenceStore,
  SequenceStoreError,
} from "./sequence-store.js";

export const SEQUENCE_CONFIGMAP_PREFIX = "sk-fn-seq-";

export interface ClusterSequenceStoreOptions {
  /** Where the ConfigMaps live: the function's own namespace (its Role grants access there). */
  namespace: string;
  /** How long one next() may take before it fails; well under the 10 s webhook timeout. Default 3000. */
  deadlineMs?: number;
  /** Read-modify-write attempts one next() may take part in. Default 25. */
  maxAttempts?: number;
  /** First backoff step after a conflict or transient error, doubled per failure in a row. Default 5. */
  backoffBaseMs?: number;
  /** Largest backoff step after a transient error (the API server is struggling). Default 200. */
  backoffMaxMs?: number;
  /**
   * Largest backoff step after a 409. A conflict means another replica just made progress, not that the
   * API server is overloaded, so the cap is low: a long backoff only lets the replicas that won last
   * time win again. Default 20 (two to four round trips of a real API server).
   */
  conflictBackoffMaxMs?: number;
  /** [0, 1); jitter source. Default Math.random. */
  random?: () => number;
  /** Backoff sleep. Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds clock for deadlines. Default performance.now. */
  now?: () => number;
}

type ConfigMap = V1ConfigMap & KubeObject;

interface Pending {
  hash: string;
  deadline: number;
  attempts: number;
  settled: boolean;
  resolve(seq: number): void;
  reject(err: SequenceStoreError): void;
}

/** The state of one simulation run's ConfigMap in this process. */
interface Counter {
  ref: ObjectRef & { namespace: string };
  scope: SequenceScope;
  /** The object as last answered by the API server; undefined when it must be read first. */
  cached: ConfigMap | undefined;
  /** Calls waiting for a number, oldest first; only next() appends and only drain() removes. */
  queue: Pending[];
  draining: boolean;
}

type AttemptResult =
  | { kind: "written"; numbers: number[] }
  | { kind: "retry"; backoff: "none" | "conflict" | "transient"; error: unknown }
  | { kind: "fail"; error: SequenceStoreError };

export function createClusterSequenceStore(
  kube: KubeApi,
  options: ClusterSequenceStoreOptions,
): SequenceStore {
  const namespace = options.namespace;
  const deadlineMs = options.deadlineMs ?? 3_000;
  const maxAttempts = options.maxAttempts ?? 25;
  const backoffBaseMs = options.backoffBaseMs ?? 5;
  const backoffMaxMs = options.backoffMaxMs ?? 200;
  const conflictBackoffMaxMs = Math.min(options.conflictBackoffMaxMs ?? 20, backoffMaxMs);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? (() => performance.now());
  const counters = new Map<string, Counter>();

  function counterFor(scope: SequenceScope): Counter {
    const name = sequenceConfigMapName(scope);
    let counter = counters.get(name);
    if (counter === undefined) {
      counter = {
        ref: { apiVersion: "v1", kind: "ConfigMap", namespace, name },
        scope,
        cached: undefined,
        queue: [],
        draining: false,
      };
      counters.set(name, counter);
    }
    return counter;
  }

  function where(counter: Counter): string {
    return `ConfigMap ${counter.ref.namespace}/${counter.ref.name}`;
  }

  function fail(counter: Counter, pending: Pending, reason: string, cause?: unknown): void {
    if (pending.settled) return;
    pending.settled = true;
    const what = `pod sequence store: no sequence number for spec hash ${pending.hash} of simulation ${counter.scope.simName}`;
    pending.reject(new SequenceStoreError(`${what}: ${reason}`, { cause }));
  }

  // Drop what is answered, expired or out of attempts; what is left takes part in the next attempt.
  function prune(counter: Counter, lastError: unknown): void {
    const t = now();
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
        fail(
          counter,
          p,
          `${where(counter)} could not be updated in ${maxAttempts} attempts${last}`,
          lastError,
        );
        return false;
      }
      return true;
    });
  }

  // One read-modify-write for the whole batch. Never throws.
  async function attempt(counter: Counter, batch: Pending[]): Promise<AttemptResult> {
    let verb = "read";
    try {
      if (counter.cached === undefined) {
        try {
          counter.cached = await bounded(kube.read<ConfigMap>(counter.ref));
        } catch (err) {
          if (!isNotFound(err)) throw err;
          // Nobody has counted in this run yet: create the object already holding this batch's numbers.
          verb = "create";
          const { data, numbers } = reserve({}, batch);
          try {
            counter.cached = await bounded(
              kube.create(buildSequenceConfigMap(counter.ref, counter.scope, data)),
            );
            return { kind: "written", numbers };
          } catch (createErr) {
            if (isAlreadyExists(createErr)) return { kind: "retry", backoff: "none", error: createErr };
            throw createErr;
          }
        }
      }
      verb = "update";
      const base = counter.cached;
      const { data, numbers } = reserve(base.data ?? {}, batch);
      counter.cached = await bounded(kube.replace<ConfigMap>({ ...base, data }));
      return { kind: "written", numbers };
    } catch (err) {
      counter.cached = undefined;
      if (err instanceof SequenceStoreError) return { kind: "fail", error: err };
      if (isConflict(err)) return { kind: "retry", backoff: "conflict", error: err };
      // Deleted under us (by hand, or by the garbage collector at the end of the run): create it again.
      if (verb === "update" && isNotFound(err)) return { kind: "retry", backoff: "none", error: err };
      if (isTransient(err)) return { kind: "retry", backoff: "transient", error: err };
      return { kind: "fail", error: refusal(counter, verb, err) };
    }
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
  function bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new KubeError(0, "Timeout", `no answer from the API server within ${deadlineMs} ms`)),
        deadlineMs,
      );
    });
    call.catch(() => {}); // a late failure of an abandoned call is not an unhandled rejection
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }

  async function drain(counter: Counter): Promise<void> {
    counter.draining = true;
    let failures = 0;
    let lastError: unknown;
    try {
      // Let callers of the same tick join the first batch.
      await Promise.resolve();
      for (;;) {
        prune(counter, lastError);
        if (counter.queue.length === 0) return;
        const batch = counter.queue.slice();
        for (const p of batch) p.attempts += 1;
        const result = await attempt(counter, batch);
        if (result.kind === "retry") {
          lastError = result.error;
          if (result.backoff === "none") continue;
          prune(counter, lastError); // no sleeping for callers that are out of attempts
          if (counter.queue.length === 0) return;
          failures += 1;
          // Full jitter, capped, and never past the oldest caller's deadline.
          const cap = result.backoff === "conflict" ? conflictBackoffMaxMs : backoffMaxMs;
          const step = backoffDelay(failures, backoffBaseMs, cap, random());
          const firstDeadline = counter.queue.reduce(
            (t, p) => Math.min(t, p.deadline),
            Number.POSITIVE_INFINITY,
          );
          const delay = Math.min(step, firstDeadline - now());
          if (delay > 0) await sleep(delay);
          continue;
        }
        // Only appends happened during the attempt, so the batch is still the head of the queue.
        counter.queue.splice(0, batch.length);
        failures = 0;
        lastError = undefined;
        batch.forEach((p, i) => {
          if (result.kind === "fail") {
            fail(counter, p, result.error.message, result.error.cause);
          } else if (!p.settled) {
            // A call that timed out while its write was in flight leaves a gap here, never a duplicate.
            p.settled = true;
            p.resolve(result.numbers[i] as number);
          }
        });
      }
    } catch (err) {
      // Not expected (attempt() does not throw); fail what waits rather than leave it hanging.
      for (const p of counter.queue) fail(counter, p, `internal error: ${describeError(err)}`, err);
      counter.queue = [];
    } finally {
      counter.draining = false;
    }
  }

  return {
    next(hash, scope) {
      return new Promise<number>((resolve, reject) => {
        checkSequenceHash(hash);
        const counter = counterFor(scope);
        // Answer by the deadline even while a write is in flight; drain() drops the settled entry later.
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
        if (!counter.draining) void drain(counter);
      });
    },
  };
}

/**
 * Give each pending call the next number of its hash, in queue order, starting from the stored counters.
 * Pure; throws SequenceStoreError when the stored value is not a count.
 */
export function reserve(
  stored: Record<string, string>,
  batch: ReadonlyArray<{ hash: string }>,
): { data: Record<string, string>; numbers: number[] } {
  const data = { ...stored };
  const numbers = batch.map(({ hash }) => {
    const raw = data[hash];
    const seq = raw === undefined ? 0 : Number(raw);
    if (raw !== undefined && !(/^\d+$/.test(raw) && Number.isSafeInteger(seq))) {
      throw new SequenceStoreError(
        `pod sequence store: the stored counter for spec hash ${hash} is not a number: ${JSON.stringify(raw)}`,
      );
    }
    data[hash] = String(seq + 1);
    return seq;
  });
  return { data, numbers };
}

const DNS_SUBDOMAIN_MAX = 253;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 10);
}

/**
 * `sk-fn-seq-<sim>-<hash of the owner uid>`: one object per run of a simulation, so a rerun under the
 * same name starts from 0 instead of racing the garbage collector for the previous run's object.
 * A sim name that is not a valid DNS name, or is too long, is cleaned up and tagged with its own hash
 * so that different names never share an object. Deterministic and at most 253 characters.
 */
export function sequenceConfigMapName(scope: SequenceScope): string {
  const sim = scope.simName;
  const ownerPart = scope.owner ? `-${shortHash(scope.owner.uid)}` : "";
  const cleaned = sim
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  const room = DNS_SUBDOMAIN_MAX - SEQUENCE_CONFIGMAP_PREFIX.length - ownerPart.length;
  if (cleaned === sim && cleaned.length > 0 && cleaned.length <= room) {
    return `${SEQUENCE_CONFIGMAP_PREFIX}${cleaned}${ownerPart}`;
  }
  const simPart = `-${shortHash(sim)}`;
  const head = cleaned.slice(0, room - simPart.length).replace(/[^a-z0-9]+$/, "");
  return `${SEQUENCE_CONFIGMAP_PREFIX}${head || "sim"}${simPart}${ownerPart}`;
}

/** The ConfigMap as first created: labelled with the simulation, owned by its root so it goes with it. */
export function buildSequenceConfigMap(
  ref: { namespace: string; name: string },
  scope: SequenceScope,
  data: Record<string, string>,
): ConfigMap {
  const labels: Record<string, string> = { "app.kubernetes.io/managed-by": "simkube-fn" };
  if (scope.simName.length <= 63 && LABEL_VALUE.test(scope.simName))
    labels[SIMULATION_LABEL_KEY] = scope.simName;
  const metadata: ConfigMap["metadata"] = { name: ref.name, namespace: ref.namespace, labels };
  if (scope.owner) metadata.ownerReferences = [ownerReference(scope.owner)];
  return { apiVersion: "v1", kind: "ConfigMap", metadata, data };
}

// No blockOwnerDeletion: setting it needs update on the owner's finalizers, which the function does not have.
function ownerReference(owner: SequenceOwner) {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid };
}

function describeError(err: unknown): string {
  const e = kubeErrorOf(err);
  if (e) return `${e.status} ${e.reason}: ${e.message}`;
  return errorMessage(err);
}
