// Short-lived reads of the few objects every review of a burst asks about (the SimulationRoot, the pod's
// namespace): one API call per object per TTL however many reviews ask, concurrent asks sharing one call
// (lru-cache's fetch() coalesces them). "Not found" is an answer too, and is cached like one.
// Metadata only: what is judged from these objects is their uid, labels, ownerReferences and deletion.

import { LRUCache } from "lru-cache";
import { isNotFound, type KubeApi, type KubeObject, type ObjectRef } from "../../shared/kube/index.js";

export interface CachedReads {
  /** The object's metadata (a PartialObjectMetadata), or undefined when it does not exist; other failures are thrown. */
  read(ref: ObjectRef): Promise<KubeObject | undefined>;
}

export interface CachedReadsOptions {
  /** How long an answer is trusted. Default 2 s: a teardown that starts is noticed within that time. */
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

// lru-cache cannot hold undefined, so "not found" travels in a box.
type Answer = { object: KubeObject | undefined };

export function createCachedReads(kube: KubeApi, options: CachedReadsOptions = {}): CachedReads {
  const now = options.now ?? (() => performance.now());
  const cache = new LRUCache<string, Answer, ObjectRef>({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? 2_000,
    perf: { now },
    // Read the clock on every get (the default caches it for 1 ms through a timer an injected clock would not move).
    ttlResolution: 0,
    fetchMethod: async (_key, _stale, { context }) => {
      try {
        return { object: await kube.read(context, { metadataOnly: true }) };
      } catch (err) {
        if (isNotFound(err)) return { object: undefined };
        throw err;
      }
    },
  });
  return {
    async read(ref) {
      const key = `${ref.apiVersion}|${ref.kind}|${ref.namespace ?? ""}|${ref.name}`;
      return (await cache.fetch(key, { context: ref }))?.object;
    },
  };
}
