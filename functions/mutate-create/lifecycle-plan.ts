// Which completion time a Running pod gets: the first trace owner with a Finished lifecycle wins.
// Pure: the trace, the candidates and the clock come in; a time or a reason comes out.

import {
  completionTime,
  gvkOfOwner,
  hasObject,
  type Instant,
  lookupPodLifecycle,
  type TraceTables,
} from "../../shared/trace/index.js";
import type { LifecycleCandidate } from "./plan.js";

export type LifecycleOutcome =
  | { found: true; completionTime: string; owner: string }
  | { found: false; reason: "not-in-trace" | "no-finished-lifecycle" | "no-original-namespace" };

export function findCompletionTime(
  trace: TraceTables,
  candidates: readonly LifecycleCandidate[],
  hash: string,
  sequence: number,
  speed: number,
  now: Instant,
): LifecycleOutcome {
  if (candidates.length === 0) return { found: false, reason: "no-original-namespace" };
  let anyInTrace = false;
  for (const candidate of candidates) {
    const gvk = gvkOfOwner(candidate.apiVersion, candidate.kind);
    if (!hasObject(trace, gvk, candidate.nsName)) continue;
    anyInTrace = true;
    const lifecycle = lookupPodLifecycle(trace, gvk, candidate.nsName, hash, sequence);
    const time = completionTime(lifecycle, speed, now);
    if (time !== undefined) return { found: true, completionTime: time, owner: `${gvk}:${candidate.nsName}` };
  }
  return { found: false, reason: anyInTrace ? "no-finished-lifecycle" : "not-in-trace" };
}
