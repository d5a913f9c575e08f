// What a cluster store keeps in this process: per shard (Counter) its cached copy, its queue of callers,
// its writes of unknown outcome and its lease; per store the API, the settings and the shards used. Also
// how a waiting caller is refused, which every step of a shard needs.

import { errorMessage } from "../base/index.js";
import { type KubeApi, kubeErrorOf, type ObjectRef } from "../kube/index.js";
import { cachedConfigMapName, type NameCache, sequenceShardOf } from "./cluster-naming.js";
import type { StoreSettings } from "./cluster-settings.js";
import type { ForeignLease, Pool } from "./lease.js";
import type { ConfigMap } from "./shard-configmap.js";
import { type SequenceScope, SequenceStoreError } from "./store.js";

/** A next() call waiting for a number. */
export interface Pending {
  hash: string;
  deadline: number;
  attempts: number;
  settled: boolean;
  resolve(seq: number): void;
  reject(err: SequenceStoreError): void;
}

/**
 * What a write does: "numbers" gives its batch numbers from the counters; "lease" takes or renews the lease
 * and grows the pools of `grow`; "release" gives the pools' rest back, lets go, then numbers its batch like
 * "numbers"; "ask" asks another replica's lease to be let go (lease.ts).
 */
export type WriteKind = "numbers" | "lease" | "release" | "ask";

/** One write of a batch's numbers (and of the bookkeeping annotations) to a shard. */
export interface ShardWrite {
  kind: WriteKind;
  /** This process's id of the write, recorded in the object (WRITES_ANNOTATION) by the write itself. */
  id: number;
  /** When it was planned (this process's clock): a lease write's lease runs from here. */
  plannedAt: number;
  /** Lease writes: each hash's pool after the write ([from, limit) and the reserve it was grown by). */
  grow: Map<string, { from: number; limit: number; reserve: number }>;
  /** The resourceVersion the write was based on; "" for a create. */
  baseRv: string;
  batch: Pending[];
  numbers: number[];
  /** The orphans (below) this write stores in the free list or hands out again. */
  orphans: Map<string, number[]>;
  object: ConfigMap;
}

/** The state of one shard of a simulation run's counters (one ConfigMap) in this process. */
export interface Counter {
  ref: ObjectRef & { namespace: string };
  scope: SequenceScope;
  /** The object as last answered by the API server; undefined when it must be read first. */
  cached: ConfigMap | undefined;
  /** Calls waiting for a number, oldest first; only next() appends and only drain() removes. */
  queue: Pending[];
  draining: boolean;
  /** The id of this process's last write to the shard. */
  lastWriteId: number;
  /**
   * Writes whose outcome is unknown (no answer, 5xx, our own timeout), all based on the same version: the
   * next read of another version tells which one landed, if any (shard.ts, landedWriteId).
   */
  unknown: ShardWrite[];
  /** Numbers our landed writes reserved for callers that had given up; the next write frees them. */
  orphans: Map<string, number[]>;
  /** Round trip of this shard's writes that were answered, ms (moving average; 0 before the first). */
  writeMs: number;
  /** Other replicas that wrote the shard lately, as of the last copy of it we saw (otherActiveWriters). */
  contenders: number;
  /** Our lease on the shard; undefined when we do not hold one. */
  lease: HeldLease | undefined;
  /** Another replica's lease, as we last saw it; undefined when the shard had none. */
  foreign: ForeignLease | undefined;
  /**
   * Since when (this process's clock) foreign leases have kept this replica from writing, with no write of
   * ours landing since: past LEASE_TAKEOVER_MS the lease is taken over however alive it looks (lease.ts).
   */
  blockedSince: number | undefined;
  /** A lease write due when no caller waits: renew it, or let go. */
  chore: "renew" | "release" | undefined;
  /** When our last write to the shard landed (this process's clock), and the hashes it numbered or grew. */
  lastLandedAt: number;
  lastHashes: Set<string>;
  /** The drain() running now, for close() to wait on. */
  drained: Promise<void>;
}

/** This replica's lease on a shard (lease.ts). */
export interface HeldLease {
  /** Numbers reserved per hash, handed out in order without a write. */
  pools: Map<string, Pool>;
  /** Numbers are handed out from the pools until then: HOLDER_VALID_MS after the last lease write was planned. */
  validUntil: number;
  /** Another replica asked for the shard (LEASE_WANTED_ANNOTATION): we let go at our next write. */
  wanted: boolean;
  /** When the last lease write was planned. */
  renewedAt: number;
  /** When a caller last asked for a number of this shard. */
  lastUse: number;
  /** A release was planned: nothing more is handed out from the pools. */
  releasing: boolean;
  timer: NodeJS.Timeout;
}

/** One store: the API, its settings and the shards this process has used. */
export interface StoreState {
  kube: KubeApi;
  settings: StoreSettings;
  /** This process's name in the shards' write records. */
  writer: string;
  counters: Map<string, Counter>;
  /**
   * The ConfigMap names of each run's shards, by simulation name, then owner uid ("" without an owner):
   * a name hashes the owner uid with sha256 and cleans the simulation name, ~1 us per review otherwise.
   * It grows as `counters` does, by the runs this process served.
   */
  names: NameCache;
  /** After close(): no lease is taken any more. */
  closing: boolean;
  /**
   * Starts the shard's drain() unless it runs (cluster-store.ts). Passed in, so that the lease timer
   * (lease-pools.ts) can start it without an import circle.
   */
  startDrain(counter: Counter): void;
}

export function counterFor(state: StoreState, scope: SequenceScope, hash: string): Counter {
  const name = cachedConfigMapName(state.names, scope, sequenceShardOf(hash));
  let counter = state.counters.get(name);
  if (counter === undefined) {
    counter = {
      ref: { apiVersion: "v1", kind: "ConfigMap", namespace: state.settings.namespace, name },
      scope,
      cached: undefined,
      queue: [],
      draining: false,
      lastWriteId: 0,
      unknown: [],
      orphans: new Map(),
      writeMs: 0,
      contenders: 0,
      lease: undefined,
      foreign: undefined,
      blockedSince: undefined,
      chore: undefined,
      lastLandedAt: Number.NEGATIVE_INFINITY,
      lastHashes: new Set(),
      drained: Promise.resolve(),
    };
    state.counters.set(name, counter);
  }
  return counter;
}

export function where(counter: Counter): string {
  return `ConfigMap ${counter.ref.namespace}/${counter.ref.name}`;
}

export function fail(counter: Counter, pending: Pending, reason: string, cause?: unknown): void {
  if (pending.settled) return;
  pending.settled = true;
  const what = `pod sequence store: no sequence number for spec hash ${pending.hash} of simulation ${counter.scope.simName}`;
  pending.reject(new SequenceStoreError(`${what}: ${reason}`, { cause }));
}

export function describeError(err: unknown): string {
  const e = kubeErrorOf(err);
  if (e) return `${e.status} ${e.reason}: ${e.message}`;
  return errorMessage(err);
}
