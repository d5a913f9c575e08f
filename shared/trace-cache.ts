// Traces by location, for a deployment that serves every Simulation: each Simulation names its own trace
// (spec.driver.tracePath), and Simulations sharing a location share one loaded copy. A load in progress is
// shared by everyone who asks; a failed load is forgotten, so the next admission tries again. A location the
// deployment does not allow (shared/trace-allowlist.ts) is refused before anything is read.

import { type LoadTraceOptions, loadTraceForLookups, type TraceTables } from "./trace.js";
import { TraceError } from "./trace-error.js";

export interface TraceCache {
  get(location: string): Promise<TraceTables>;
  /** Locations loaded or loading now. */
  size(): number;
}

/** A location outside the deployment's allowlist: nothing was read. */
export class TraceLocationRefused extends TraceError {}

export interface TraceCacheOptions {
  /** Whether the deployment lets a Simulation name this location (and a download be redirected to it). */
  isAllowed: (location: string) => boolean;
  load?: (location: string, options: LoadTraceOptions) => Promise<TraceTables>;
}

// Loaded without the events' bodies: lookups never read them (see parseTraceForLookups).
export function createTraceCache(options: TraceCacheOptions): TraceCache {
  const { isAllowed, load = loadTraceForLookups } = options;
  const traces = new Map<string, Promise<TraceTables>>();
  return {
    get(location) {
      const known = traces.get(location);
      if (known) return known;
      if (!isAllowed(location)) {
        return Promise.reject(
          new TraceLocationRefused("the trace location is not one this deployment allows"),
        );
      }
      const loading = load(location, { allowRedirect: isAllowed });
      traces.set(location, loading);
      loading.catch(() => {
        if (traces.get(location) === loading) traces.delete(location);
      });
      return loading;
    },
    size: () => traces.size,
  };
}
