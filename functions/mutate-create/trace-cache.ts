// Traces by location, for a deployment that serves every Simulation: each Simulation names its own trace
// (spec.driver.tracePath), and Simulations sharing a location share one loaded copy. A load in progress is
// shared by everyone who asks; a failed load is forgotten, so the next admission tries again. A location the
// deployment does not allow (shared/trace/allowlist.ts) is refused before anything is read.
//
// Memory is bounded: at most `maxTraces` locations (query strings make every presigned URL its own) and
// `maxBytes` of trace files, least recently used dropped first; and one load at a time, since a load peaks
// at several times the file (the memory limit counts one, knative/manifests.ts). A trace is used for
// `recheckMs`; the next admission after that asks its source whether it changed (a file's stat, an http
// conditional GET; shared/trace/source.ts) and reloads it only if it did, or if the source cannot tell.

import { LRUCache } from "lru-cache";
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
  now?: () => number;
}

export const DEFAULT_TRACE_CACHE_MAX_TRACES = 16;
export const DEFAULT_TRACE_RECHECK_MS = 30_000;

// Loaded without the events' bodies: lookups never read them (see parseTraceForLookups).
export function createTraceCache(options: TraceCacheOptions): TraceCache {
  const { isAllowed, load = loadTraceForLookupsIfChanged } = options;
  const maxTraceBytes = options.maxTraceBytes ?? DEFAULT_MAX_TRACE_BYTES;
  const loadOptions = { allowRedirect: isAllowed, maxBytes: maxTraceBytes };
  const oneLoadAtATime = serialize();
  const traces = new LRUCache<string, LoadedTrace>({
    max: options.maxTraces ?? DEFAULT_TRACE_CACHE_MAX_TRACES,
    // A trace over the byte bound would never be kept (and be loaded again by every admission).
    maxSize: Math.max(options.maxBytes ?? maxTraceBytes, maxTraceBytes),
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
    ttl: options.recheckMs ?? DEFAULT_TRACE_RECHECK_MS,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    // A load dropped from the cache while in progress still answers those who wait for it.
    ignoreFetchAbort: true,
    fetchMethod: (location, stale) =>
      oneLoadAtATime(async () => (await load(location, loadOptions, stale?.version)) ?? stale),
  });
  return {
    async get(location) {
      if (!isAllowed(location)) {
        throw new TraceLocationRefused("the trace location is not one this deployment allows");
      }
      const entry = await traces.fetch(location);
      if (!entry) throw new TraceError("the trace loader answered nothing");
      return entry.trace;
    },
    size: () => traces.size,
    bytes: () => traces.calculatedSize,
  };
}

/** Runs the given work one at a time, in the order asked; a failure does not stop the next. */
function serialize(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = tail.then(work, work);
    tail = run.catch(() => {});
    return run;
  };
}
