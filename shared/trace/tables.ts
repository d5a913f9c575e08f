// Lookups in a decoded trace's index and pod lifecycles (callers never build keys themselves). Pure.

import { normalizeGvk } from "./gvk.js";
import type { EventsSummary, PodLifecycle, TraceEvent, TraceTables } from "./model.js";

/** A full trace's event counts and time span, as parseTraceForLookups finds them. */
export function summarizeEvents(events: readonly TraceEvent[]): EventsSummary {
  let appliedObjects = 0;
  let deletedObjects = 0;
  for (const e of events) {
    appliedObjects += e.appliedObjs.length;
    deletedObjects += e.deletedObjs.length;
  }
  const startTs = events[0]?.ts ?? null;
  const endTs = events.at(-1)?.ts ?? null;
  return { count: events.length, appliedObjects, deletedObjects, startTs, endTs };
}

/** The podLifecycles key for an owner. JSON keeps it unambiguous whatever the strings contain. */
export function lifecycleKey(ownerGvk: string, ownerNsName: string): string {
  return JSON.stringify([ownerGvk, ownerNsName]);
}

/** Whether the trace's index holds this object, like SimKube's has_obj. */
export function hasObject(trace: TraceTables, gvk: string, nsName: string): boolean {
  return trace.index.get(normalizeGvk(gvk))?.has(nsName) ?? false;
}

/** The owner's lifecycles by pod spec hash, or undefined when the trace has none for it. */
export function getPodLifecycles(
  trace: TraceTables,
  ownerGvk: string,
  ownerNsName: string,
): Map<string, PodLifecycle[]> | undefined {
  return trace.podLifecycles.get(lifecycleKey(normalizeGvk(ownerGvk), ownerNsName));
}

/** Every owner that has lifecycle data, in file order. */
export function lifecycleOwners(trace: TraceTables): Array<{ gvk: string; nsName: string }> {
  return [...trace.podLifecycles.keys()].map((key) => {
    const [gvk, nsName] = JSON.parse(key) as [string, string];
    return { gvk, nsName };
  });
}

/** Number of objects in the index, over all GVKs. */
export function indexSize(trace: TraceTables): number {
  let n = 0;
  for (const names of trace.index.values()) n += names.size;
  return n;
}
