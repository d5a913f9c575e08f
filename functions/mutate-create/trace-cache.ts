// Traces by location, for a deployment that serves every Simulation: each Simulation names its own trace
// (spec.driver.tracePath), and Simulations sharing a location share one loaded copy. A load in progress is
// shared by everyone who asks. A location the deployment does not allow (shared/trace/allowlist.ts) is
// refused before anything is read.
//
// One Simulation's trace must not hold another's pods (issue 35: one load at a time, each as long as the
// webhook's timeout, let a hung trace server hold every Simulation's first pod for 30 s). So loads of
// different locations run at once, up to `maxConcurrentLoads`; each review waits for its trace at most
// `loadTimeoutMs` (10 s by default, a third of mutate-create's 30 s webhook timeout), which is also the
// load's own deadline; and a failed or late load is remembered for `failureCacheMs`, during which reviews
// needing that trace are denied at once instead of waiting again.
//
// Memory is bounded: at most `maxTraces` locations (query strings make every presigned URL its own) and
// `maxBytes` of trace files, least recently used dropped first; and at most `maxConcurrentLoads` loads at a
// time, since a load peaks at several times the file (the memory limit counts one, knative/manifests.ts;
// parsing is synchronous, so only one load parses at a time, and each other one holds at most its file's
// bytes). A trace is used for `recheckMs`; the next admission after that asks its source whether it changed
// (a file's stat, an http conditional GET; shared/trace/source.ts) and reloads it only if it did, or if the
// source cannot tell.

import { LRUCache } from "lru-cache";
import { errorMessage, withDeadline } from "../../shared/base/index.js";
import {
  DEFAULT_MAX_TRACE_BYTES,
  type LoadedTrace,
  type LoadTraceOptions,
  loadTraceForLookupsIfChanged,
  TraceError,
  type TraceTables,
} from "../../shared/trace/index.js";

export interface TraceCache {
  get(location: string): Promise<TraceTables>;
  /** Locations loaded or loading now. */
  size(): number;
  /** The cached traces' file bytes. */
  bytes(): number;
}

/** A location outside the deployment's allowlist: nothing was read. */
export class TraceLocationRefused extends TraceError {}

export type LoadIfChanged = (
  location: string,
  options: LoadTraceOptions,
  known?: string,
) => Promise<LoadedTrace | undefined>;

export interface TraceCacheOptions {
  /** Whether the deployment lets a Simulation name this location (and a download be redirected to it). */
  isAllowed: (location: string) => boolean;
  /** Loads a trace, or undefined when it is still at version `known`. */
  load?: LoadIfChanged;
  /** Largest trace file read (TRACE_MAX_MIB). Default 64 MiB. */
  maxTraceBytes?: number;
  /** Traces kept at most (TRACE_CACHE_MAX_TRACES). Default 16. */
  maxTraces?: number;
  /** Their files' bytes at most (TRACE_CACHE_MAX_MIB); at least maxTraceBytes. Default maxTraceBytes. */
  maxBytes?: number;
  /** How long a trace is used before its source is asked again (TRACE_RECHECK_SECONDS). Default 30 s. */
  recheckMs?: number;
  /** How long a review waits for its trace, and the load's own deadline (TRACE_LOAD_TIMEOUT_SECONDS). Default 10 s. */
  loadTimeoutMs?: number;
  /** How long a failed or late load is remembered (TRACE_FAILURE_CACHE_SECONDS). Default 5 s. */
  failureCacheMs?: number;
  /** Loads of different locations at once (TRACE_CONCURRENT_LOADS). Default 2. */
  maxConcurrentLoads?: number;
  now?: () => number;
}

export const DEFAULT_TRACE_CACHE_MAX_TRACES = 16;
export const DEFAULT_TRACE_RECHECK_MS = 30_000;
/** A third of mutate-create's webhook timeout (30 s): the denial reaches the API server in time. */
export const DEFAULT_TRACE_LOAD_TIMEOUT_MS = 10_000;
export const DEFAULT_TRACE_FAILURE_CACHE_MS = 5_000;
export const DEFAULT_TRACE_CONCURRENT_LOADS = 2;

/** A location whose last load failed or was late, a moment ago: denied at once, not loaded again yet. */
interface Failure {
  until: number;
  message: string;
}

// Loaded without the events' bodies: lookups never read them (see parseTraceForLookups).
export function createTraceCache(options: TraceCacheOptions): TraceCache {
  const { isAllowed, load = loadTraceForLookupsIfChanged } = options;
  const maxTraceBytes = options.maxTraceBytes ?? DEFAULT_MAX_TRACE_BYTES;
  const loadTimeoutMs = options.loadTimeoutMs ?? DEFAULT_TRACE_LOAD_TIMEOUT_MS;
  const loadOptions = { allowRedirect: isAllowed, maxBytes: maxTraceBytes, timeoutMs: loadTimeoutMs };
  const now = options.now ?? (() => performance.now());
  const failures = createFailures(options.failureCacheMs ?? DEFAULT_TRACE_FAILURE_CACHE_MS, now);
  const late = (): never => {
    throw new TraceError(`loading the trace took longer than ${loadTimeoutMs} ms`);
  };
  const inSlot = limit(options.maxConcurrentLoads ?? DEFAULT_TRACE_CONCURRENT_LOADS);
  const traces = new LRUCache<string, LoadedTrace>({
    max: options.maxTraces ?? DEFAULT_TRACE_CACHE_MAX_TRACES,
    // A trace over the byte bound would never be kept (and be loaded again by every admission).
    maxSize: Math.max(options.maxBytes ?? maxTraceBytes, maxTraceBytes),
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
    ttl: options.recheckMs ?? DEFAULT_TRACE_RECHECK_MS,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    // A load dropped from the cache while in progress still answers those who wait for it.
    ignoreFetchAbort: true,
    // The slot is freed at the deadline even if a store's SDK ignores the load's own (its timeoutMs).
    fetchMethod: (location, stale) =>
      inSlot(async () => {
        try {
          const loaded = await withDeadline(load(location, loadOptions, stale?.version), loadTimeoutMs, late);
          return loaded ?? stale;
        } catch (err) {
          // The load's own failure, not a review's wait for a slot: a location queued behind hung ones is not
          // held against it.
          failures.remember(location, err);
          throw err;
        }
      }),
  });
  return {
    async get(location) {
      if (!isAllowed(location)) {
        throw new TraceLocationRefused("the trace location is not one this deployment allows");
      }
      failures.check(location);
      const entry = await withDeadline(traces.fetch(location), loadTimeoutMs, late);
      if (!entry) throw new TraceError("the trace loader answered nothing");
      return entry.trace;
    },
    size: () => traces.size,
    bytes: () => traces.calculatedSize,
  };
}

/** Locations whose last load failed, each for `ttlMs`; at most as many as could matter at once. */
function createFailures(ttlMs: number, now: () => number) {
  const failed = new LRUCache<string, Failure>({ max: 1024 });
  return {
    check(location: string): void {
      const failure = failed.get(location);
      if (failure === undefined) return;
      if (failure.until > now()) {
        throw new TraceError(
          `the last load of this trace failed less than ${Math.ceil(ttlMs / 1000)} s ago: ${failure.message}`,
        );
      }
      failed.delete(location);
    },
    remember(location: string, err: unknown): void {
      if (ttlMs > 0) failed.set(location, { until: now() + ttlMs, message: errorMessage(err) });
    },
  };
}

/** Runs the given work at most `slots` at a time, in the order asked; a failure does not stop the next. */
function limit(slots: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (work) => {
    // A freed slot is handed to the next waiter directly, so a newcomer cannot take it in between.
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
