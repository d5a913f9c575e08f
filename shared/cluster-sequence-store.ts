// The default SequenceStore: counters shared by every replica of the function, kept in ConfigMaps in the
// cluster and updated with optimistic concurrency (PUT with the resourceVersion last read).
//
// Sharded so that no object grows with the trace: a simulation run has up to SEQUENCE_SHARD_COUNT
// ConfigMaps, and a spec hash always lives in shard fnv1a(hash) % SEQUENCE_SHARD_COUNT. Each shard is an
// independent counter below (its own cached object and resourceVersion, its own queue and writes).
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
// Concurrent next() calls for one shard in one process share a single read-modify-write: whoever
// waits while a write is in flight joins the next one and all of them get consecutive numbers.

import { createHash } from "node:crypto";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { withDeadline } from "./deadline.js";
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

/**
 * Shards per simulation run. A counter takes ~21 bytes of data (a u64 key of 19.4 digits on average and a
 * short count), so 100,000 hashes make ~390 entries and ~8.5 KB per shard, under 1% of the 1 MiB a
 * ConfigMap may hold; a shard fills at ~50,000 entries, i.e. ~12 million distinct hashes in one run. Every
 * write sends and stores its whole shard, so the shard size is what a write costs: with 64 shards, 100,000
 * hashes made writes ~20x slower than 1,000 against the API double. Changing the count moves hashes to
 * other objects: only between simulation runs.
 */
export const SEQUENCE_SHARD_COUNT = 256;

/** The API server refuses a ConfigMap whose data keys and values add up to more (kubernetes/kubernetes
 * pkg/apis/core/validation: ValidateConfigMap, MaxSecretSize). */
export const CONFIGMAP_DATA_LIMIT_BYTES = 1024 * 1024;

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

/** The state of one shard of a simulation run's counters (one ConfigMap) in this process. */
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

/** The options with their defaults applied. */
interface StoreSettings {
  namespace: string;
  deadlineMs: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  conflictBackoffMaxMs: number;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/** One store: the API, its settings and the shards this process has used. */
interface StoreState {
  kube: KubeApi;
  settings: StoreSettings;
  counters: Map<string, Counter>;
  /**
   * The ConfigMap names of each run's shards, by simulation name, then owner uid ("" without an owner):
   * a name hashes the owner uid with sha256 and cleans the simulation name, ~1 us per review otherwise.
   * It grows as `counters` does, by the runs this process served.
   */
  names: Map<string, Map<string, string[]>>;
}

function resolveSettings(options: ClusterSequenceStoreOptions): StoreSettings {
  const backoffMaxMs = options.backoffMaxMs ?? 200;
  return {
    namespace: options.namespace,
    deadlineMs: options.deadlineMs ?? 3_000,
    maxAttempts: options.maxAttempts ?? 25,
    backoffBaseMs: options.backoffBaseMs ?? 5,
    backoffMaxMs,
    conflictBackoffMaxMs: Math.min(options.conflictBackoffMaxMs ?? 20, backoffMaxMs),
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    now: options.now ?? (() => performance.now()),
  };
}

function counterName(state: StoreState, scope: SequenceScope, shard: number): string {
  let byOwner = state.names.get(scope.simName);
  if (byOwner === undefined) {
    byOwner = new Map();
    state.names.set(scope.simName, byOwner);
  }
  const ownerUid = scope.owner?.uid ?? "";
  let byShard = byOwner.get(ownerUid);
  if (byShard === undefined) {
    byShard = [];
    byOwner.set(ownerUid, byShard);
  }
  let name = byShard[shard];
  if (name === undefined) {
    name = sequenceConfigMapName(scope, shard);
    byShard[shard] = name;
  }
  return name;
}

function counterFor(state: StoreState, scope: SequenceScope, hash: string): Counter {
  const name = counterName(state, scope, sequenceShardOf(hash));
  let counter = state.counters.get(name);
  if (counter === undefined) {
    counter = {
      ref: { apiVersion: "v1", kind: "ConfigMap", namespace: state.settings.namespace, name },
      scope,
      cached: undefined,
      queue: [],
      draining: false,
    };
    state.counters.set(name, counter);
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

// One read-modify-write for the whole batch. Never throws.
async function attempt(state: StoreState, counter: Counter, batch: Pending[]): Promise<AttemptResult> {
  const { kube } = state;
  const bounded = <T>(call: Promise<T>): Promise<T> => boundedCall(state.settings.deadlineMs, call);
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
        checkShardSize(counter, data);
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
    checkShardSize(counter, data);
    counter.cached = await bounded(kube.replace<ConfigMap>({ ...base, data }));
    return { kind: "written", numbers };
  } catch (err) {
    counter.cached = undefined;
    return classifyFailure(counter, verb, err);
  }
}

/** What a failed read, create or update means for the batch: retry (and how to back off) or fail. */
function classifyFailure(counter: Counter, verb: string, err: unknown): AttemptResult {
  if (err instanceof SequenceStoreError) return { kind: "fail", error: err };
  if (isConflict(err)) return { kind: "retry", backoff: "conflict", error: err };
  // Deleted under us (by hand, or by the garbage collector at the end of the run): create it again.
  if (verb === "update" && isNotFound(err)) return { kind: "retry", backoff: "none", error: err };
  if (isTransient(err)) return { kind: "retry", backoff: "transient", error: err };
  return { kind: "fail", error: refusal(counter, verb, err) };
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

/** Full jitter, capped, and never past the oldest caller's deadline. */
function backoffAfter(
  settings: StoreSettings,
  counter: Counter,
  backoff: "conflict" | "transient",
  failures: number,
): number {
  const cap = backoff === "conflict" ? settings.conflictBackoffMaxMs : settings.backoffMaxMs;
  const step = backoffDelay(failures, settings.backoffBaseMs, cap, settings.random());
  const firstDeadline = counter.queue.reduce((t, p) => Math.min(t, p.deadline), Number.POSITIVE_INFINITY);
  return Math.min(step, firstDeadline - settings.now());
}

/** Hands the batch its numbers, or its failure. */
function settleBatch(
  counter: Counter,
  batch: Pending[],
  result: Exclude<AttemptResult, { kind: "retry" }>,
): void {
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

async function drain(state: StoreState, counter: Counter): Promise<void> {
  const { settings } = state;
  counter.draining = true;
  let failures = 0;
  let lastError: unknown;
  try {
    // Let callers of the same tick join the first batch.
    await Promise.resolve();
    for (;;) {
      prune(settings, counter, lastError);
      if (counter.queue.length === 0) return;
      const batch = counter.queue.slice();
      for (const p of batch) p.attempts += 1;
      const result = await attempt(state, counter, batch);
      if (result.kind === "retry") {
        lastError = result.error;
        if (result.backoff === "none") continue;
        prune(settings, counter, lastError); // no sleeping for callers that are out of attempts
        if (counter.queue.length === 0) return;
        failures += 1;
        const delay = backoffAfter(settings, counter, result.backoff, failures);
        if (delay > 0) await settings.sleep(delay);
        continue;
      }
      // Only appends happened during the attempt, so the batch is still the head of the queue.
      counter.queue.splice(0, batch.length);
      failures = 0;
      lastError = undefined;
      settleBatch(counter, batch, result);
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
    if (!counter.draining) void drain(state, counter);
  });
}

export function createClusterSequenceStore(
  kube: KubeApi,
  options: ClusterSequenceStoreOptions,
): SequenceStore {
  const state: StoreState = {
    kube,
    settings: resolveSettings(options),
    counters: new Map(),
    names: new Map(),
  };
  return {
    next(hash, scope) {
      return enqueue(state, hash, scope);
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

/** Which shard holds a hash's counter: FNV-1a (32-bit) of the hash string, modulo the shard count. */
export function sequenceShardOf(hash: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < hash.length; i++) {
    h ^= hash.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % SEQUENCE_SHARD_COUNT;
}

/**
 * Bytes the API server counts against a ConfigMap's limit: every data key and value. Keys are checked
 * hashes and values are counts, all ASCII, so string length is byte length (a hand-edited non-ASCII value
 * is undercounted and then refused by the API server with its own 422).
 */
export function configMapDataSize(data: Record<string, string>): number {
  let size = 0;
  for (const key in data) size += key.length + (data[key] as string).length;
  return size;
}

/**
 * `sk-fn-seq-<sim>-<hash of the owner uid>-<shard, 2 hex digits>`: per run of a simulation, so a rerun
 * under the same name starts from 0 instead of racing the garbage collector for the previous run's
 * objects. A sim name that is not a valid DNS name, or is too long, is cleaned up and tagged with its
 * own hash so that different names never share an object. Deterministic and at most 253 characters.
 */
export function sequenceConfigMapName(scope: SequenceScope, shard: number): string {
  const sim = scope.simName;
  const ownerPart = scope.owner ? `-${shortHash(scope.owner.uid)}` : "";
  const tail = `${ownerPart}-${shard.toString(16).padStart(2, "0")}`;
  const cleaned = sim
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  const room = DNS_SUBDOMAIN_MAX - SEQUENCE_CONFIGMAP_PREFIX.length - tail.length;
  if (cleaned === sim && cleaned.length > 0 && cleaned.length <= room) {
    return `${SEQUENCE_CONFIGMAP_PREFIX}${cleaned}${tail}`;
  }
  const simPart = `-${shortHash(sim)}`;
  const head = cleaned.slice(0, room - simPart.length).replace(/[^a-z0-9]+$/, "");
  return `${SEQUENCE_CONFIGMAP_PREFIX}${head || "sim"}${simPart}${tail}`;
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
