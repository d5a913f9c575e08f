// What one sequence shard (a ConfigMap) holds besides its counters, and the pure steps of a write to it.
// Pure: plain objects in and out, the clock passed in.
//
// Two annotations make the store exact (docs/traces.md, "Pod sequence numbers"):
// - WRITES_ANNOTATION: for each process that wrote the shard, the id of its last write that landed. A write
//   whose answer was lost (timeout, reset, 5xx) is resolved by reading the object back: if the object moved
//   on from the version the write was based on, the write landed exactly when this record names it. Only
//   the writer changes its own entry, so later writes of other replicas do not hide it.
// - FREE_ANNOTATION: numbers a write reserved whose caller had given up by the time the write was known to
//   have landed (its deadline passed). They are handed out first, lowest first, so the numbers handed out
//   for a hash stay 0..n-1 without holes.

import { SequenceStoreError } from "./store.js";

export const WRITES_ANNOTATION = "sequence.simkube-fn/writes";
export const FREE_ANNOTATION = "sequence.simkube-fn/free";

/** A writer's entry is dropped by other writers after this long without a write (its process is long gone). */
export const WRITER_RECORD_TTL_MS = 60 * 60 * 1000;

/** writer id -> [id of its last write that landed, epoch ms of that write]. */
export type WriteRecords = Record<string, [number, number]>;
/** spec hash -> numbers reserved but never handed out, ascending. */
export type FreeNumbers = Record<string, number[]>;

export interface ShardMeta {
  annotations?: Record<string, string>;
  resourceVersion?: string;
}

function parseJsonObject(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    // A hand-edited, unreadable record: ignoring it can only cost a gap (a landed write taken for lost).
    return {};
  }
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

export function writeRecordsOf(meta: ShardMeta | undefined): WriteRecords {
  const out: WriteRecords = {};
  for (const [writer, entry] of Object.entries(parseJsonObject(meta?.annotations?.[WRITES_ANNOTATION]))) {
    if (Array.isArray(entry) && isCount(entry[0]) && isCount(entry[1])) out[writer] = [entry[0], entry[1]];
  }
  return out;
}

export function freeNumbersOf(meta: ShardMeta | undefined): FreeNumbers {
  const out: FreeNumbers = {};
  for (const [hash, list] of Object.entries(parseJsonObject(meta?.annotations?.[FREE_ANNOTATION]))) {
    if (Array.isArray(list)) {
      const numbers = list.filter(isCount).sort((a, b) => a - b);
      if (numbers.length > 0) out[hash] = numbers;
    }
  }
  return out;
}

/**
 * How many other writers landed a write on this shard within `windowMs` before `nowMs`: the replicas that
 * are contending for it now. Their clocks are the writers' own (epoch ms), so the window is generous.
 */
export function otherActiveWriters(
  meta: ShardMeta | undefined,
  writer: string,
  nowMs: number,
  windowMs: number,
): number {
  let active = 0;
  for (const [other, [, at]] of Object.entries(writeRecordsOf(meta))) {
    if (other !== writer && nowMs - at <= windowMs) active += 1;
  }
  return active;
}

/** Both lists together, each number once, ascending. */
export function mergeFree(a: FreeNumbers, b: ReadonlyMap<string, readonly number[]>): FreeNumbers {
  const out: FreeNumbers = {};
  for (const [hash, list] of Object.entries(a)) out[hash] = [...list];
  for (const [hash, list] of b)
    out[hash] = [...new Set([...(out[hash] ?? []), ...list])].sort((x, y) => x - y);
  return out;
}

/** The stored counter of a hash (0 when absent). Throws SequenceStoreError when it is not a count. */
export function storedCount(stored: Record<string, string>, hash: string): number {
  const raw = stored[hash];
  const seq = raw === undefined ? 0 : Number(raw);
  if (raw !== undefined && !(/^\d+$/.test(raw) && Number.isSafeInteger(seq))) {
    throw new SequenceStoreError(
      `pod sequence store: the stored counter for spec hash ${hash} is not a number: ${JSON.stringify(raw)}`,
    );
  }
  return seq;
}

/**
 * Give each pending call the next number of its hash, in queue order: first the hash's free numbers, lowest
 * first, then the stored counter. Throws SequenceStoreError when the stored value is not a count.
 */
export function reserve(
  stored: Record<string, string>,
  batch: ReadonlyArray<{ hash: string }>,
  free: FreeNumbers = {},
): { data: Record<string, string>; numbers: number[]; free: FreeNumbers } {
  const data = { ...stored };
  const left: FreeNumbers = {};
  for (const [hash, list] of Object.entries(free)) left[hash] = [...list];
  const numbers = batch.map(({ hash }) => {
    const recycled = left[hash]?.shift();
    if (recycled !== undefined) return recycled;
    const seq = storedCount(data, hash);
    data[hash] = String(seq + 1);
    return seq;
  });
  for (const hash of Object.keys(left)) if (left[hash]?.length === 0) delete left[hash];
  return { data, numbers, free: left };
}

/**
 * The annotations a write stores: this writer's record set to `writeId`, records of writers silent for
 * WRITER_RECORD_TTL_MS dropped, and the free numbers (the annotation removed when there are none).
 */
export function annotationsForWrite(
  base: ShardMeta | undefined,
  writer: string,
  writeId: number,
  nowMs: number,
  free: FreeNumbers,
): Record<string, string> {
  const annotations = { ...base?.annotations };
  const records = writeRecordsOf(base);
  for (const [other, [, at]] of Object.entries(records)) {
    if (other !== writer && nowMs - at > WRITER_RECORD_TTL_MS) delete records[other];
  }
  records[writer] = [writeId, nowMs];
  annotations[WRITES_ANNOTATION] = JSON.stringify(records);
  if (Object.keys(free).length > 0) annotations[FREE_ANNOTATION] = JSON.stringify(free);
  else delete annotations[FREE_ANNOTATION];
  return annotations;
}

/**
 * What reading the shard says about this writer's writes of unknown outcome, all based on version `baseRv`
 * ("" for a create): undefined while the object is still at that version (none decided: one may still
 * land), else the id of the one that landed, or null when none did. Only one write based on a version can
 * land, and only the writer changes its own record, so the record names the write that moved the object on,
 * if it was ours.
 */
export function landedWriteId(
  read: ShardMeta | undefined,
  writer: string,
  baseRv: string,
  writeIds: readonly number[],
): number | null | undefined {
  const rv = read?.resourceVersion ?? "";
  if (rv === baseRv) return undefined;
  const last = writeRecordsOf(read)[writer]?.[0];
  return last !== undefined && writeIds.includes(last) ? last : null;
}
