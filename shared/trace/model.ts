// The shape of a decoded trace: what the reader builds and every consumer reads. Types only (and the format
// version), so the reader, the event scanner and the lookups can share them without importing each other.

import type { KubeObject } from "../kube/index.js";

export const CURRENT_TRACE_FORMAT_VERSION = 2;

export interface TrackedObjectConfig {
  /** Absent when the tracer relied on SimKube's defaults for a known kind. */
  podSpecTemplatePaths?: string[];
  trackLifecycle: boolean;
  skipOwned: boolean;
}

export interface TracerConfig {
  /** Keyed by canonical GVK string ("apps/v1.Deployment", "v1.Pod"). */
  trackedObjects: Record<string, TrackedObjectConfig>;
}

export interface TraceEvent {
  /** Unix seconds. */
  ts: number;
  appliedObjs: KubeObject[];
  deletedObjs: KubeObject[];
}

export type PodLifecycle =
  | { kind: "Finished"; start: number; end: number }
  | { kind: "Running"; start: number }
  | { kind: "Empty" };

export interface Trace {
  version: number;
  config: TracerConfig;
  events: TraceEvent[];
  /** gvk -> "ns/name" -> object hash (decimal string). */
  index: Map<string, Map<string, string>>;
  /** lifecycleKey(owner gvk, owner "ns/name") -> pod spec hash (decimal string) -> lifecycles in launch order. */
  podLifecycles: Map<string, Map<string, PodLifecycle[]>>;
}

/** A trace read without its events' bodies: code that only has this cannot use events it never decoded. */
export interface TraceForLookups extends Omit<Trace, "events"> {
  eventSummary: EventsSummary;
}

/** What the lookups below read; a full trace and a lean one both have it. */
export type TraceTables = Pick<Trace, "index" | "podLifecycles">;

export interface EventsSummary {
  count: number;
  appliedObjects: number;
  deletedObjects: number;
  /** First and last event time (Unix seconds), null for a trace without events. */
  startTs: number | null;
  endTs: number | null;
}
