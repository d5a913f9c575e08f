// After a replay, the sequence store read back against the pods that were seen: every number the store
// handed out for a hash should be carried by a pod, and no number should sit unused in the store. Pure:
// the run's sequence ConfigMaps and observed pods in, counts out (docs/traces.md, "Pod sequence numbers").

import { freeNumbersOf, type ShardMeta } from "../../../shared/sequence/index.js";
import type { ObservedPod } from "./lifecycle-match.js";

export interface SequenceShard {
  metadata?: ShardMeta;
  data?: Record<string, string>;
}

export interface SequenceAudit {
  hashes: number;
  /** Numbers the store handed out: below each hash's counter and not free. */
  handedOut: number;
  /** Numbers the store skipped: reserved, never handed out (its free list at the end). */
  storeGaps: number;
  /** Numbers handed out that no pod carries (a CREATE admitted, then refused by the API server). */
  withoutPod: number;
  /** One number on two pods that are not clones (clones keep their original's number, as in SimKube). */
  duplicates: number;
  details: string[];
}

export function auditSequences(
  shards: readonly SequenceShard[],
  pods: readonly ObservedPod[],
): SequenceAudit {
  const audit: SequenceAudit = {
    hashes: 0,
    handedOut: 0,
    storeGaps: 0,
    withoutPod: 0,
    duplicates: 0,
    details: [],
  };
  const seen = new Map<string, number[]>();
  for (const pod of pods) {
    if (pod.clone || pod.hash === undefined || pod.sequence === undefined) continue;
    seen.set(pod.hash, [...(seen.get(pod.hash) ?? []), pod.sequence]);
  }
  for (const shard of shards) {
    const free = freeNumbersOf(shard.metadata);
    for (const [hash, raw] of Object.entries(shard.data ?? {})) {
      const count = Number(raw);
      const freed = new Set(free[hash] ?? []);
      const carried = seen.get(hash) ?? [];
      audit.hashes += 1;
      audit.handedOut += count - freed.size;
      audit.storeGaps += freed.size;
      if (freed.size > 0) audit.details.push(`hash ${hash}: never handed out ${[...freed].join(", ")}`);
      for (let n = 0; n < count; n++) {
        if (freed.has(n) || carried.includes(n)) continue;
        audit.withoutPod += 1;
        audit.details.push(`hash ${hash}: #${n} handed out, no pod carries it`);
      }
      const dup = carried.length - new Set(carried).size;
      audit.duplicates += dup;
      if (dup > 0) audit.details.push(`hash ${hash}: ${dup} number(s) on two pods`);
    }
  }
  return audit;
}
