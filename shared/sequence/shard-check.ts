// What a shard read from the API may be trusted with. Whoever may update ConfigMaps in the functions'
// namespace can write anything into a shard (docs/safety.md, "The sequence ConfigMaps"); every write is
// planned from checkShard's copy, never from the object as read. Pure.
//
// - A counter must be a non-negative safe integer in decimal. One that is not is repaired, never refused
//   for good: every write stores TOTAL_ANNOTATION, the sum of the shard's counters, so a single broken
//   counter is exactly the total less the others; several broken ones each get that bound (a gap, never a
//   number twice). Without a readable total that leaves room, it restarts above its own free numbers (the
//   same as a counter lowered by hand, which no check can tell from a real one).
// - Free numbers are used once each, and only below their hash's counter: a free number at or above it is
//   dropped, because the counter itself hands it out.

import { type FreeNumbers, freeNumbersOf, type ShardMeta } from "./shard.js";

export const TOTAL_ANNOTATION = "sequence.simkube-fn/total";

const COUNT = /^\d{1,16}$/;

/** The counter as a count, or undefined when it is not a non-negative safe integer in decimal. */
export function countOf(raw: string | undefined): number | undefined {
  if (raw === undefined || !COUNT.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The sum of the well-formed counters, as TOTAL_ANNOTATION stores it (a decimal string). Summed as a number
 * while that is exact, in BigInt past it, so it is never rounded.
 */
export function totalOf(data: Record<string, string>): string {
  let sum = 0;
  let big: bigint | undefined;
  for (const key in data) {
    const n = countOf(data[key]);
    if (n === undefined) continue;
    if (big !== undefined) big += BigInt(n);
    else if (sum + n <= Number.MAX_SAFE_INTEGER) sum += n;
    else big = BigInt(sum) + BigInt(n);
  }
  return big === undefined ? String(sum) : big.toString();
}

/** The free numbers each hash may hand out: each once, ascending, below its counter. */
export function usableFree(free: FreeNumbers, data: Record<string, string>): FreeNumbers {
  const out: FreeNumbers = {};
  for (const [hash, list] of Object.entries(free)) {
    const limit = countOf(data[hash]) ?? 0;
    const numbers = [...new Set(list)].filter((n) => Number.isSafeInteger(n) && n >= 0 && n < limit);
    if (numbers.length > 0) out[hash] = numbers.sort((a, b) => a - b);
  }
  return out;
}

export interface CheckedShard {
  /** The counters to plan from: the object's own data when nothing was repaired (not to be changed). */
  data: Record<string, string>;
  free: FreeNumbers;
  /** The hashes whose counter was repaired. */
  repaired: string[];
}

/** What a broken counter is set to: the bound the total leaves, else above its free numbers. */
function repairedCount(boundFromTotal: bigint | undefined, free: readonly number[] | undefined): number {
  const aboveFree = Math.max(-1, ...(free ?? []).filter((n) => Number.isSafeInteger(n) && n >= 0)) + 1;
  if (boundFromTotal === undefined || boundFromTotal > BigInt(Number.MAX_SAFE_INTEGER)) return aboveFree;
  return Math.max(Number(boundFromTotal), aboveFree);
}

/** The shard as it may be used: counters repaired, free numbers narrowed to what may be handed out. */
export function checkShard(
  shard: { metadata?: ShardMeta; data?: Record<string, string> } | undefined,
): CheckedShard {
  const stored = shard?.data ?? {};
  const rawFree = freeNumbersOf(shard?.metadata);
  const broken: string[] = [];
  for (const hash in stored) if (countOf(stored[hash]) === undefined) broken.push(hash);
  if (broken.length === 0) return { data: stored, free: usableFree(rawFree, stored), repaired: [] };
  const data = { ...stored };
  const total = shard?.metadata?.annotations?.[TOTAL_ANNOTATION];
  const left = total !== undefined && /^\d{1,30}$/.test(total) ? BigInt(total) - BigInt(totalOf(data)) : -1n;
  const bound = left >= 0n ? left : undefined;
  for (const hash of broken) data[hash] = String(repairedCount(bound, rawFree[hash]));
  return { data, free: usableFree(rawFree, data), repaired: broken };
}
