// Give back the memory a burst of reviews grew, once the function is idle.
//
// Under load V8 grows the young generation with the allocation rate (to 32 MiB on Node 20, 128 MiB on Node
// 24, as measured here) and the old space with what survives, and keeps both after the burst: the bench saw
// ~90-130 MiB of RSS with ~10 MiB of live heap. A replica that outlives its bursts (OpenFaaS keeps one; Knative
// until it scales to zero) can give that back, so once no review has arrived for `idleMs` it collects, and
// once more `settleMs` later if still nothing came, each time only if the heap had grown by `minGrowthBytes`
// since the last collection. Why twice: V8 shrinks the young generation only when the allocation rate it
// measured over its last 5 s is low, and it samples that rate at collections; Node 24's V8 does it at once for
// gc's "last-resort" flavor, Node 20's V8 does not know that option and needs the second collection, more than
// 5 s after the first, to see the quiet. Both run off the review path.
//
// Why 30 s of quiet and not less: a burst that follows a collection starts slowly while V8 grows its heap back.
// Measured with the teardown bench (rounds 5-11 s apart; collections 1 s after the last review, against the
// same build without them, in the same rounds): p99 of 42-220 ms in most rounds that followed a collection,
// against 9.5-14 ms without them and 8.5-13 ms for the bare server. A simulation's pods come in bursts seconds
// apart, so collecting in those gaps would tax the next burst; a replica quiet for 30 s is between
// simulations, or about to be scaled away.
//
// `gc` needs --expose-gc, set here the first time it is needed (the same way jest's leak detector does):
// any Node flag given at start makes V8 reject the code cache of Node's own modules, +11-18 ms on every cold
// start (measured for issue 11).

import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export const DEFAULT_IDLE_MS = 30_000;
/** Past V8's 5 s allocation-rate window (its GCTracer's kThroughputTimeFrameMs). */
export const DEFAULT_SETTLE_MS = 5_500;
export const DEFAULT_MIN_GROWTH_BYTES = 8 * 1024 * 1024;

export interface IdleMemoryOptions {
  /** Quiet time after the last review before the first collection. */
  idleMs?: number;
  /** Further quiet time before the second. */
  settleMs?: number;
  /** Heap growth (committed bytes since the last collection) below which a quiet moment is left alone. */
  minGrowthBytes?: number;
  /** The collection to run; default: V8's full, synchronous, memory-reducing GC. */
  collect?: () => void;
  /** Committed heap bytes; default: V8's total_heap_size. */
  heapBytes?: () => number;
  /** Milliseconds clock; default performance.now. */
  now?: () => number;
}

type GcFunction = (options?: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

/** V8's full collection that also shrinks the heap where this V8 can, callable without a start-up flag. */
export function memoryReducingCollection(): () => void {
  let gc: GcFunction | undefined;
  return () => {
    if (!gc) {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as GcFunction;
    }
    // Without options: a full collection on every V8 (Node 20's runs only a young-generation one when given
    // any). Then the last-resort flavor, which newer V8 (Node 24) turns into collections that shrink the heap.
    gc();
    gc({ type: "major", execution: "sync", flavor: "last-resort" });
  };
}

/**
 * Returns `activity`, to call once per review. Per review it costs reading the clock; while idle no timer runs.
 * `idleMs` after the last review it collects (if the heap grew enough), and again `settleMs` later if no review
 * came in between; a review in between starts the wait over.
 */
export function collectWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const minGrowth = options.minGrowthBytes ?? DEFAULT_MIN_GROWTH_BYTES;
  const collect = options.collect ?? memoryReducingCollection();
  const heapBytes = options.heapBytes ?? (() => getHeapStatistics().total_heap_size);
  const now = options.now ?? (() => performance.now());
  let baseline = heapBytes();
  let lastReview = 0;
  let collected = false;
  let timer: NodeJS.Timeout | undefined;
  const lookIn = (ms: number) => {
    timer = setTimeout(look, ms).unref();
  };
  const look = () => {
    timer = undefined;
    const quietMs = now() - lastReview;
    if (quietMs < idleMs) {
      collected = false;
      lookIn(idleMs - quietMs);
    } else if (collected) {
      collected = false;
      collect();
      baseline = heapBytes();
    } else if (heapBytes() - baseline >= minGrowth) {
      // The baseline waits for the second collection: after the first, Node 20's young generation is still big.
      collected = true;
      collect();
      lookIn(settleMs);
    }
  };
  return () => {
    lastReview = now();
    if (timer === undefined) {
      collected = false;
      lookIn(idleMs);
    }
  };
}
