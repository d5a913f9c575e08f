// The cluster's record of which pod a clone replaces, so that one pod gets one clone across replicas and
// restarts without any process remembering it. Each clone carries CLONE_OF_ANNOTATION: the uids it descends
// from, nearest first (the pod it replaces, then that pod's own line), at most CLONE_LINE_MAX of them.
// Before creating `<name>-clone-N` for a pod, reschedule.ts reads that name and the next one:
// - the clone exists and names this pod's uid first: it was made (by another replica, or before a restart);
// - it names another uid: it replaces an earlier pod of the same name, so it is not this pod's clone;
// - it is gone, but the next name (its own clone) names this uid in its line: the clone was made, then itself
//   interrupted and replaced; making it again would give the pod a second clone.
// A clone without the annotation (made before it existed) counts as this pod's, as AlreadyExists did.
// Pure.

import { isRecord } from "../../shared/base/index.js";
import type { Pod } from "../../shared/kube/index.js";

export const CLONE_OF_ANNOTATION = "reschedule.simkube-fn/clone-of";
/** How many generations a clone's line keeps: enough to follow a clone interrupted and replaced in turn. */
export const CLONE_LINE_MAX = 8;

/** The uids a pod descends from, nearest first ([] for a pod that is no clone, or an unreadable record). */
export function cloneLineOf(pod: Pod | undefined): string[] {
  const text = pod?.metadata?.annotations?.[CLONE_OF_ANNOTATION];
  if (text === undefined) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((uid): uid is string => typeof uid === "string") : [];
  } catch {
    return [];
  }
}

/** The annotation value for a clone of `pod`: its uid, then its own line. */
export function cloneLineFor(pod: Pod): string {
  const uid = pod.metadata?.uid ?? "";
  return JSON.stringify([uid, ...cloneLineOf(pod)].slice(0, CLONE_LINE_MAX));
}

/** What the clone's name, read before creating, says about this pod's clone. */
export type CloneFound = "none" | "this-pods" | "another-pods";

export function judgeFoundClone(found: Pod | undefined, uid: string): CloneFound {
  if (found === undefined) return "none";
  if (
    !isRecord(found.metadata?.annotations) ||
    found.metadata?.annotations?.[CLONE_OF_ANNOTATION] === undefined
  )
    return "this-pods";
  return cloneLineOf(found)[0] === uid ? "this-pods" : "another-pods";
}

/** The next generation's clone, read alongside: does its line go through this pod? */
export function continuesLineOf(next: Pod | undefined, uid: string): boolean {
  return next !== undefined && cloneLineOf(next).slice(1).includes(uid);
}
