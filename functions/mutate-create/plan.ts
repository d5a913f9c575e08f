// What mutate-create does to a simulation pod, as pure functions: the pod in, the mutated pod out.
// SimKube's semantics and step names (sk-driver/src/mutation.rs mutate_pod): CREATE pins the pod to virtual
// nodes (add_node_selector_tolerations), records its hash and sequence (add_pod_hash_annotations) and KWOK
// delays; CREATE or UPDATE of a Running pod gets the completion time its counterpart had in production
// (add_lifecycle_fields). Which pods, and how far, is triage.ts's business.

import type { Operation } from "fast-json-patch";
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
} from "../../shared/base/index.js";
import type { OwnerReference, Pod } from "../../shared/kube/index.js";
import {
  delayAnnotationValue,
  type LifecycleParams,
  toleratesVirtualNodes,
  VIRTUAL_NODE_SELECTOR,
  virtualNodeToleration,
} from "../../shared/simulation/index.js";

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
  /** Absent on a dry run (no number is reserved for a pod that will not be stored) and for a pinned-only pod. */
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

type StringMap = Record<string, string>;

/** SimKube adds `{}` first, so the steps below can add keys. Returns the pod's labels and annotations. */
export function addEmptyLabelsAnnotations(pod: Pod): { labels: StringMap; annotations: StringMap } {
  pod.metadata ??= {};
  pod.metadata.labels ??= {};
  pod.metadata.annotations ??= {};
  return { labels: pod.metadata.labels, annotations: pod.metadata.annotations };
}

/** The pod's spec to change in place; a CREATE without one is denied, as SimKube does. */
export function specOf(pod: Pod): Record<string, unknown> {
  const spec = pod.spec;
  if (spec === undefined || spec === null || typeof spec !== "object") throw new Error("pod has no spec");
  return spec;
}

/** Only virtual nodes fit: `type: virtual`, and a toleration of their `kwok-provider` NoSchedule taint. */
export function addNodeSelectorTolerations(spec: Record<string, unknown>): void {
  spec.tolerations ??= [];
  spec.nodeSelector ??= {};
  const tolerations = spec.tolerations as Array<Record<string, unknown>>;
  const nodeSelector = spec.nodeSelector as StringMap;
  if (!Array.isArray(tolerations)) throw new Error("pod spec.tolerations is not a list");
  // Overwrites a different `type` selector, as SimKube does: the pod must only fit virtual nodes.
  Object.assign(nodeSelector, VIRTUAL_NODE_SELECTOR);
  if (!toleratesVirtualNodes(tolerations)) tolerations.push(virtualNodeToleration());
}

/** The stable spec hash, and the sequence number when one was reserved. */
export function addPodHashAnnotations(annotations: StringMap, hash: string, sequence?: number): void {
  annotations[POD_SPEC_STABLE_HASH_KEY] = hash;
  if (sequence !== undefined) annotations[POD_SEQUENCE_NUMBER_KEY] = String(sequence);
}

/** The Simulation's lifecycleParams as the `<n>ms` delays KWOK's pod-create and pod-ready stages read. */
export function addDelayAnnotations(annotations: StringMap, params: LifecycleParams): void {
  annotations[KWOK_STAGE_CREATE_DELAY_KEY] = delayAnnotationValue(params.imagePullDelay);
  annotations[KWOK_STAGE_CREATE_DELAY_JITTER_KEY] = delayAnnotationValue(params.imagePullJitter);
  annotations[KWOK_STAGE_READY_DELAY_KEY] = delayAnnotationValue(params.podStartupDelay);
  annotations[KWOK_STAGE_READY_DELAY_JITTER_KEY] = delayAnnotationValue(params.podStartupJitter);
}

/** What KWOK's pod-complete stage selects on: the label, and the time to complete at. */
export function addLifecycleFields(labels: StringMap, annotations: StringMap, completionTime: string): void {
  labels[KWOK_STAGE_COMPLETE_KEY] = "true";
  annotations[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY] = completionTime;
}

/**
 * The mutated pod, built step by step as SimKube's mutate_pod does (the input is not changed). It is the
 * statement of the semantics that mutationPatch is held to (test/unit/mutate-patch.test.ts); the serve path
 * does not call it, because cloning the pod and diffing it back was the largest cost of a review.
 * Throws when a CREATE has no spec (SimKube denies those).
 */
export function planMutation(input: MutationInput): Pod {
  const next = structuredClone(input.pod);
  const { labels, annotations } = addEmptyLabelsAnnotations(next);
  if (input.operation === "CREATE") {
    const spec = specOf(next);
    labels[SIMULATION_LABEL_KEY] = input.simName;
    addNodeSelectorTolerations(spec);
    addPodHashAnnotations(annotations, input.hash, input.sequence);
    addDelayAnnotations(annotations, input.lifecycleParams);
  }
  if (input.completionTime !== undefined && needsLifecycle(input.pod) && !input.labelsForbidden) {
    addLifecycleFields(labels, annotations, input.completionTime);
  }
  return next;
}

// Only the project's own label and annotation keys reach pointerToken (mapOps), a handful of constants, so
// their tokens are remembered: two replaceAll calls took ~1.5 us of each served CREATE review in the profile.
const POINTER_TOKEN_CACHE_MAX = 64;
const pointerTokens = new Map<string, string>();

/** One JSON Pointer reference token (RFC 6901): `~` is written `~0`, then `/` is written `~1`. */
export function pointerToken(key: string): string {
  let token = pointerTokens.get(key);
  if (token === undefined) {
    token = key.replaceAll("~", "~0").replaceAll("/", "~1");
    if (pointerTokens.size < POINTER_TOKEN_CACHE_MAX) pointerTokens.set(key, token);
  }
  return token;
}

function isMissing(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** `add` creates the map when it is missing (SimKube's `{}` first), else sets each key that differs. */
function mapOps(path: string, current: unknown, wanted: StringMap): Operation[] {
  if (isMissing(current)) return [{ op: "add", path, value: wanted }];
  if (typeof current !== "object" || Array.isArray(current)) throw new Error(`pod ${path} is not a map`);
  const ops: Operation[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    if ((current as StringMap)[key] !== value)
      ops.push({ op: "add", path: `${path}/${pointerToken(key)}`, value });
  }
  return ops;
}

/** addNodeSelectorTolerations as patch operations against the pod's spec. */
function nodeSelectorTolerationOps(spec: Record<string, unknown>): Operation[] {
  const ops = mapOps("/spec/nodeSelector", spec.nodeSelector, VIRTUAL_NODE_SELECTOR);
  const toleration = virtualNodeToleration();
  const tolerations = spec.tolerations;
  if (isMissing(tolerations)) ops.push({ op: "add", path: "/spec/tolerations", value: [toleration] });
  else if (!Array.isArray(tolerations)) throw new Error("pod spec.tolerations is not a list");
  else if (!toleratesVirtualNodes(tolerations)) {
    ops.push({ op: "add", path: "/spec/tolerations/-", value: toleration });
  }
  return ops;
}

/**
 * The JSONPatch that turns the pod into planMutation's pod, written directly: the same steps fill only the
 * labels and annotations to add, and each becomes an `add` against the pod as it is. No clone, no diff.
 */
export function mutationPatch(input: MutationInput): Operation[] {
  const { pod } = input;
  const labels: StringMap = {};
  const annotations: StringMap = {};
  const spec = input.operation === "CREATE" ? specOf(pod) : undefined;
  if (input.operation === "CREATE") {
    labels[SIMULATION_LABEL_KEY] = input.simName;
    addPodHashAnnotations(annotations, input.hash, input.sequence);
    addDelayAnnotations(annotations, input.lifecycleParams);
  }
  if (input.completionTime !== undefined && needsLifecycle(pod) && !input.labelsForbidden) {
    addLifecycleFields(labels, annotations, input.completionTime);
  }
  const metadata = pod.metadata;
  const ops: Operation[] = isMissing(metadata)
    ? [{ op: "add", path: "/metadata", value: { labels, annotations } }]
    : [
        ...mapOps("/metadata/labels", metadata.labels, labels),
        ...mapOps("/metadata/annotations", metadata.annotations, annotations),
      ];
  if (spec !== undefined) ops.push(...nodeSelectorTolerationOps(spec));
  return ops;
}
