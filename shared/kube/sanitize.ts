// Sanitization: turn an object read from the API server into one that can be submitted again, after SimKube's
// sanitize_obj (sk-core/src/k8s/util.rs). Generic over any kind. Pure: every function returns a copy and
// leaves its input alone.

import { DEPL_REVISION_LABEL_KEY, LAST_APPLIED_CONFIG_LABEL_KEY, SIMKUBE_IO_PREFIX } from "../base/index.js";
import type { KubeObject } from "./api.js";

// Written by the API server (or by whoever last applied the object); a create must not carry them, and a
// uid or resourceVersion from another object would be rejected outright.
const SERVER_MANAGED_METADATA = [
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "generation",
  "managedFields",
  "resourceVersion",
  "uid",
] as const;

// Annotations that describe the old object's history, not the object.
const HISTORY_ANNOTATIONS = [LAST_APPLIED_CONFIG_LABEL_KEY, DEPL_REVISION_LABEL_KEY] as const;

/**
 * A copy without server-managed metadata and history annotations. ownerReferences are kept: they are what
 * ties an object to its SimulationRoot (and SimKube needs them to compute owner chains).
 */
export function sanitizeObject<T extends KubeObject>(obj: T): T {
  const copy = structuredClone(obj);
  const metadata = copy.metadata;
  if (!metadata) return copy;
  for (const field of SERVER_MANAGED_METADATA) delete metadata[field];
  if (metadata.annotations) {
    for (const key of HISTORY_ANNOTATIONS) delete metadata.annotations[key];
  }
  return copy;
}

/** Keys SimKube sets for one run (e.g. `simkube.io/kwok-stage-complete`); `static.simkube.io/...` survives. */
export function isSimkubeKey(key: string): boolean {
  return key.startsWith(SIMKUBE_IO_PREFIX);
}

function withoutSimkubeKeys(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !isSimkubeKey(key)));
}

/** A copy without the labels and annotations whose key starts with `simkube.io`. */
export function stripSimkubeMetadata<T extends KubeObject>(obj: T): T {
  const copy = structuredClone(obj);
  const metadata = copy.metadata;
  if (!metadata) return copy;
  if (metadata.labels) metadata.labels = withoutSimkubeKeys(metadata.labels);
  if (metadata.annotations) metadata.annotations = withoutSimkubeKeys(metadata.annotations);
  return copy;
}
