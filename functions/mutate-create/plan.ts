// What mutate-create does to a simulation pod, as a pure function: the pod in, the mutated pod out.
// SimKube's semantics (sk-driver/src/mutation.rs mutate_pod): CREATE pins the pod to virtual nodes and
// records its hash, sequence and KWOK delays; CREATE or UPDATE of a Running pod gives it the completion
// time its counterpart had in production.

import type { Operation } from "fast-json-patch";
import fastJsonPatch from "fast-json-patch";
import {
  KWOK_STAGE_COMPLETE_KEY,
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  KWOK_STAGE_CREATE_DELAY_JITTER_KEY,
  KWOK_STAGE_CREATE_DELAY_KEY,
  KWOK_STAGE_READY_DELAY_JITTER_KEY,
  KWOK_STAGE_READY_DELAY_KEY,
  ORIG_NAMESPACE_ANNOTATION_KEY,
  ORIG_OWNER_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMULATION_LABEL_KEY,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "../../shared/keys.js";
import type { OwnerReference } from "../../shared/owners.js";
import type { Pod } from "../../shared/pod.js";
import { delayAnnotationValue, type LifecycleParams } from "../../shared/simulation.js";

const U64_MAX = 18446744073709551615n;

export function podName(pod: Pod): string {
  return pod.metadata?.name ?? pod.metadata?.generateName ?? "";
}

export function isRunning(pod: Pod): boolean {
  return pod.status?.phase === "Running";
}

export function hasLabel(pod: Pod, key: string): boolean {
  return Object.hasOwn(pod.metadata?.labels ?? {}, key);
}

/** The stable hash recorded on the pod, if any; a value that is not a u64 is an error, not "absent". */
export function recordedHash(pod: Pod): string | undefined {
  const raw = pod.metadata?.annotations?.[POD_SPEC_STABLE_HASH_KEY];
  if (raw === undefined) return undefined;
  if (!/^\d{1,20}$/.test(raw) || BigInt(raw) > U64_MAX) {
    throw new Error(`annotation ${POD_SPEC_STABLE_HASH_KEY} is not a 64-bit unsigned integer: "${raw}"`);
  }
  return BigInt(raw).toString();
}

/** The sequence number recorded on the pod, if any. */
export function recordedSequence(pod: Pod): number | undefined {
  const raw = pod.metadata?.annotations?.[POD_SEQUENCE_NUMBER_KEY];
  if (raw === undefined) return undefined;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new Error(`annotation ${POD_SEQUENCE_NUMBER_KEY} is not a non-negative integer: "${raw}"`);
  }
  return Number(raw);
}

/** An owner to look the pod's lifecycle up under in the trace: a workload owner, or the pod itself. */
export interface LifecycleCandidate {
  apiVersion: string;
  kind: string;
  /** "<original namespace>/<name>", the trace index key. */
  nsName: string;
}

/**
 * SimKube's order: the chain's workload owners, then the pod itself under its original owner's name
 * (clones carry it) or its own. Empty when the pod has no original namespace (it did not come from the trace).
 */
export function lifecycleCandidates(
  pod: Pod,
  workloadOwners: readonly OwnerReference[],
): LifecycleCandidate[] {
  const annotations = pod.metadata?.annotations ?? {};
  const originalNs = annotations[ORIG_NAMESPACE_ANNOTATION_KEY];
  if (originalNs === undefined) return [];
  const selfName = annotations[ORIG_OWNER_ANNOTATION_KEY] ?? podName(pod);
  return [...workloadOwners, { apiVersion: "v1", kind: "Pod", name: selfName }].map((owner) => ({
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    nsName: `${originalNs}/${owner.name}`,
  }));
}

export interface MutationInput {
  operation: "CREATE" | "UPDATE";
  pod: Pod;
  simName: string;
  hash: string;
  /** Absent on a dry run: no number is reserved for a pod that will not be stored. */
  sequence?: number;
  lifecycleParams: LifecycleParams;
  /** RFC 3339 completion time found in the trace, when the pod is Running and not yet complete. */
  completionTime?: string;
  /** Labels cannot be changed this way (a node's pods/status update under NodeRestriction): annotate only. */
  labelsForbidden?: boolean;
}

export function needsLifecycle(pod: Pod): boolean {
  return isRunning(pod) && !hasLabel(pod, KWOK_STAGE_COMPLETE_KEY);
}

/** The mutated pod. Throws when a CREATE has no spec (SimKube denies those). */
export function planMutation(input: MutationInput): Pod {
  const next = structuredClone(input.pod);
  next.metadata ??= {};
  const metadata = next.metadata;
  metadata.labels ??= {};
  metadata.annotations ??= {};
  const labels = metadata.labels;
  const annotations = metadata.annotations;

  if (input.operation === "CREATE") {
    const spec = next.spec;
    if (spec === undefined || spec === null || typeof spec !== "object") throw new Error("pod has no spec");
    labels[SIMULATION_LABEL_KEY] = input.simName;

    spec.tolerations ??= [];
    spec.nodeSelector ??= {};
    const tolerations = spec.tolerations as Array<{ key?: string }>;
    const nodeSelector = spec.nodeSelector as Record<string, string>;
    if (!Array.isArray(tolerations)) throw new Error("pod spec.tolerations is not a list");
    // Overwrites a different `type` selector, as SimKube does: the pod must only fit virtual nodes.
    nodeSelector[VIRTUAL_NODE_SELECTOR_KEY] = VIRTUAL_NODE_SELECTOR_VALUE;
    if (!tolerations.some((t) => t?.key === VIRTUAL_NODE_TOLERATION_KEY)) {
      tolerations.push({ key: VIRTUAL_NODE_TOLERATION_KEY, operator: "Exists", effect: "NoSchedule" } as {
        key: string;
      });
    }

    annotations[POD_SPEC_STABLE_HASH_KEY] = input.hash;
    if (input.sequence !== undefined) annotations[POD_SEQUENCE_NUMBER_KEY] = String(input.sequence);
    const params = input.lifecycleParams;
    annotations[KWOK_STAGE_CREATE_DELAY_KEY] = delayAnnotationValue(params.imagePullDelay);
    annotations[KWOK_STAGE_CREATE_DELAY_JITTER_KEY] = delayAnnotationValue(params.imagePullJitter);
    annotations[KWOK_STAGE_READY_DELAY_KEY] = delayAnnotationValue(params.podStartupDelay);
    annotations[KWOK_STAGE_READY_DELAY_JITTER_KEY] = delayAnnotationValue(params.podStartupJitter);
  }

  if (input.completionTime !== undefined && needsLifecycle(input.pod) && !input.labelsForbidden) {
    labels[KWOK_STAGE_COMPLETE_KEY] = "true";
    annotations[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY] = input.completionTime;
  }
  return next;
}

/** The JSONPatch that turns the pod into its mutation. */
export function mutationPatch(input: MutationInput): Operation[] {
  return fastJsonPatch.compare(input.pod, planMutation(input));
}
