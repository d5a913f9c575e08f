// Traces by location, for a deployment that serves every Simulation: each Simulation names its own trace
// (spec.driver.tracePath), and Simulations sharing a location share one loaded copy. A load in progress is
// shared by everyone who asks; a failed load is forgotten, so the next admission tries again.

import { loadTraceForLookups, type TraceTables } from "./trace.js";

export interface TraceCache {
  get(location: string): Promise<TraceTables>;
  /** Locations loaded or loading now. */
  size(): number;
}

// Loaded without the events' bodies: lookups never read them (see parseTraceForLookups).
export function createTraceCache(
  load: (location: string) => Promise<TraceTables> = loadTraceForLookups,
): TraceCache {
  const traces = new Map<string, Promise<TraceTables>>();
  return {
    get(location) {
      const known = traces.get(location);
      if (known) return known;
      const loading = load(location);
      traces.set(location, loading);
      loading.catch(() => {
        if (traces.get(location) === loading) traces.delete(location);
      });
      return loading;
    },
    size: () => traces.size,
  };
}
