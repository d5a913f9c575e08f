// Small pure helpers on stored objects: copies, metadata, timestamps, JSON merge patch.

import { isRecord, type JsonObject } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** The object's metadata, created empty when missing or not an object. */
export function metaOf(obj: KubeObject): JsonObject {
  if (!isRecord(obj.metadata)) obj.metadata = {};
  return obj.metadata as unknown as JsonObject;
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Copies `keys` of metadata from `from` to `to`, deleting those `from` does not have. */
export function keepMeta(to: JsonObject, from: JsonObject, keys: readonly string[]): void {
  for (const key of keys) {
    if (from[key] === undefined) delete to[key];
    else to[key] = from[key];
  }
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return clone(patch);
  const out: JsonObject = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** The value at a dotted path ("spec.nodeName"), undefined when any step is not an object. */
export function fieldAt(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const part of path.split(".")) {
    if (!isRecord(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}
