// Where a hash's counter lives: which shard of a simulation run, and the name of that shard's ConfigMap.
// Pure, but for the cache of names a store keeps (NameCache).

import { createHash } from "node:crypto";
import type { SequenceScope } from "./store.js";

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

const DNS_SUBDOMAIN_MAX = 253;

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

/** ConfigMap names already made, by simulation name, then owner uid ("" without an owner), then shard. */
export type NameCache = Map<string, Map<string, string[]>>;

/** sequenceConfigMapName, made once per run and shard and looked up afterwards. */
export function cachedConfigMapName(names: NameCache, scope: SequenceScope, shard: number): string {
  let byOwner = names.get(scope.simName);
  if (byOwner === undefined) {
    byOwner = new Map();
    names.set(scope.simName, byOwner);
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
