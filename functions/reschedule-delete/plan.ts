// What reschedule-delete decides, as pure functions: is this DELETE review the interruption of a bare
// simulation pod, and what clone replaces it. SimKube's semantics (sk-driver/src/mutation.rs
// reschedule_interrupted_pod): a bare pod interrupted while Running is recreated as `<name>-clone-N`.
//
// Where we differ from SimKube, and why (k8s.io/apiserver pkg/registry/rest/delete.go; kubernetes/kubernetes
// pkg/registry/core/pod/storage/eviction.go, pkg/controller/podgc/gc_controller.go and
// pkg/controller/tainteviction/taint_eviction.go): SimKube clones a Running bare pod on
// every DELETE review. In a cluster one deletion sends several reviews (the actor's graceful delete, then
// the final delete from KWOK or the kubelet, each possibly twice); an eviction never shows its own delete,
// only the final one; podgc marks a pod Failed before deleting it; and the driver deleting a pod because
// production deleted it is no interruption at all. So the rule is:
// - first phase (oldObject has no deletionTimestamp) of a Running pod, deleted by anyone but the driver,
//   the garbage collector or the namespace controller: interrupted by that user;
// - any phase, the pod Running or Failed, carrying DisruptionTarget=True (eviction API, taint manager,
//   preemption, pod GC): interrupted for the condition's reason;
// - everything else is not an interruption; in particular a final-phase review without DisruptionTarget is
//   the tail of a delete already judged.

import type { AdmissionRequest } from "../../shared/admission/index.js";
import {
  CONTROLLER_MANAGER_USER,
  isRecord,
  ORIG_OWNER_ANNOTATION_KEY,
  SIMKUBE_API_VERSION,
  SIMULATION_ROOT_KIND,
  TEARDOWN_CONTROLLER_USERS,
} from "../../shared/base/index.js";
import type { Pod, PodCondition } from "../../shared/kube/index.js";
import {
  isBarePod,
  type OwnerReference,
  ownerReferencesOf,
  sanitizeObject,
  stripSimkubeMetadata,
} from "../../shared/kube/index.js";
import { pinToVirtualNodes } from "../../shared/simulation/index.js";
import { pinNodeAffinityTerms, withoutNamedAccountToken } from "./clone-fence.js";
import { buildCloneName } from "./clone-name.js";
import { CLONE_OF_ANNOTATION, cloneLineFor } from "./clone-record.js";
import type { TriageSkip } from "./outcomes.js";

// The webhook's match conditions already keep these actors' first-phase deletes away; checked again here
// for servers that ignore matchConditions (the API double) and for hand-written webhook configurations.
const TEARDOWN_CONTROLLERS: ReadonlySet<string> = new Set(TEARDOWN_CONTROLLER_USERS);

export type InterruptionCause = "disruption-target" | "deleted-by-user";

export type Judgement =
  | { interrupted: true; cause: InterruptionCause; detail: string }
  | { interrupted: false; reason: TriageSkip };

export function podPhase(pod: Pod): string | undefined {
  const phase = pod.status?.phase;
  return typeof phase === "string" ? phase : undefined;
}

/** The DisruptionTarget condition with status "True" (a "False" one records a disruption that was undone). */
export function disruptionTargetOf(pod: Pod): PodCondition | undefined {
  const conditions = pod.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c) => isRecord(c) && c.type === "DisruptionTarget" && c.status === "True");
}

/** The user's or controller's delete; the final deletes (KWOK, kubelet) see deletionTimestamp set. */
export function isFirstPhase(pod: Pod): boolean {
  return !pod.metadata?.deletionTimestamp;
}

export interface DeletionFacts {
  pod: Pod;
  username: string | undefined;
  driverUsers: readonly string[];
}

/** Whether the deletion this review belongs to interrupts the pod (see the rule at the top). */
export function judgeDeletion({ pod, username, driverUsers }: DeletionFacts): Judgement {
  const phase = podPhase(pod);
  if (phase === "Succeeded") return { interrupted: false, reason: "succeeded" };
  const firstPhase = isFirstPhase(pod);
  if (firstPhase && username !== undefined) {
    // Who deleted is known only in the first phase; these actors' intent outranks any condition.
    if (driverUsers.includes(username)) return { interrupted: false, reason: "driver-delete" };
    if (TEARDOWN_CONTROLLERS.has(username)) return { interrupted: false, reason: "teardown-controller" };
  }
  const disruption = disruptionTargetOf(pod);
  if (disruption && (phase === "Running" || phase === "Failed")) {
    return { interrupted: true, cause: "disruption-target", detail: disruption.reason || "DisruptionTarget" };
  }
  if (!firstPhase) return { interrupted: false, reason: "final-phase" };
  if (phase !== "Running") return { interrupted: false, reason: "not-running" };
  if (!username) return { interrupted: false, reason: "no-user" };
  if (username === CONTROLLER_MANAGER_USER) return { interrupted: false, reason: "controller-manager" };
  return { interrupted: true, cause: "deleted-by-user", detail: username };
}

/**
 * Does the pod as read from the API bear out the review's judgement? A review can be forged or stale; the
 * live pod cannot. A disruption must show on the live pod too; a user's delete needs a live Running pod.
 */
export function confirmsInterruption(
  live: Pod,
  judgement: Extract<Judgement, { interrupted: true }>,
): boolean {
  const phase = podPhase(live);
  if (judgement.cause === "disruption-target") {
    return disruptionTargetOf(live) !== undefined && (phase === "Running" || phase === "Failed");
  }
  return phase === "Running";
}

/** The SimulationRoot among the pod's own owners (a bare simulation pod hangs directly off it). */
export function directSimulationRoot(pod: Pod): OwnerReference | undefined {
  return ownerReferencesOf(pod).find(
    (ref) => ref.apiVersion === SIMKUBE_API_VERSION && ref.kind === SIMULATION_ROOT_KIND,
  );
}

/**
 * A DELETE review worth looking into: which pod it names, and why the review says it was interrupted. Only
 * a claim: reschedule.ts reads the pod and everything it depends on from the API before cloning it.
 */
export interface Candidate {
  namespace: string;
  name: string;
  uid: string;
  judgement: Extract<Judgement, { interrupted: true }>;
  /**
   * The review's oldObject showed no deletionTimestamp: the deletion it claims is stored only after every
   * webhook answered, so a live pod already showing one at the review shows someone else's (live-checks.ts).
   */
  firstPhase: boolean;
  /** The SimulationRoot the review says owns the pod: only the key to look up teardowns already seen. */
  directRoot?: OwnerReference;
}

export type Triage = { candidate: Candidate } | { skip: TriageSkip };

/**
 * The checks that need no API call, cheapest first: operation, dry run, oldObject, bare, interruption.
 * They read what the review claims, so they may only skip: a skip creates nothing, whoever sent the review.
 * Names come from oldObject: reviews from namespace deletion carry an empty request.name
 * (the namespace controller deletes through DeleteCollection: kubernetes/kubernetes
 * pkg/controller/namespace/deletion/namespaced_resources_deleter.go).
 */
export function triageDelete(request: AdmissionRequest, driverUsers: readonly string[]): Triage {
  if (request.operation !== "DELETE") return { skip: "not-delete" };
  if (request.kind !== undefined && request.kind.kind !== "Pod") return { skip: "not-a-pod" };
  if (request.dryRun === true) return { skip: "dry-run" };
  const old = request.oldObject;
  if (!isRecord(old) || (old.metadata !== undefined && !isRecord(old.metadata)))
    return { skip: "no-old-object" };
  const pod = old as Pod;
  const uid = pod.metadata?.uid;
  const name = pod.metadata?.name;
  if (!uid || !name) return { skip: "no-uid" };
  // Nothing but a SimulationRoot can make a pod part of the simulation, so an ownerless pod is not.
  if (ownerReferencesOf(pod).length === 0) return { skip: "not-in-simulation" };
  if (!isBarePod(pod)) return { skip: "not-bare" };
  const judgement = judgeDeletion({ pod, username: request.userInfo?.username, driverUsers });
  if (!judgement.interrupted) return { skip: judgement.reason };
  const candidate: Candidate = {
    namespace: pod.metadata?.namespace || request.namespace || "",
    name,
    uid,
    judgement,
    firstPhase: isFirstPhase(pod),
  };
  const directRoot = directSimulationRoot(pod);
  if (directRoot) candidate.directRoot = directRoot;
  return { candidate };
}

/**
 * The pod that replaces an interrupted one (SimKube's rule): sanitized, without simkube.io labels and
 * annotations (mutate-create adds this run's again), without node and status, named `<name>-clone-N`, and
 * annotated with the original pod's name so a clone of a clone still finds its lifecycle in the trace.
 * Ours: annotated with the uids it replaces (clone-record.ts), so one pod gets one clone whoever makes it.
 * It keeps its static hash and sequence annotations and the pod's namespace. Its one owner is `root`, the
 * SimulationRoot the live pod was checked to be owned by, so the clone goes when the simulation does.
 * Our additions: pinned to virtual nodes (pinToVirtualNodes, and each required node affinity term too),
 * without a named account's token (clone-fence.ts: what the pod-create policy admits), and ephemeral
 * containers dropped, because the API server refuses them on create.
 */
export function buildClone(pod: Pod, root: OwnerReference): Pod {
  const originalName = pod.metadata?.name ?? "";
  const clone = stripSimkubeMetadata(sanitizeObject(pod));
  const annotations = { ...clone.metadata?.annotations };
  annotations[ORIG_OWNER_ANNOTATION_KEY] ??= originalName;
  // The cluster's record of which pod this clone replaces (clone-record.ts).
  annotations[CLONE_OF_ANNOTATION] = cloneLineFor(pod);
  clone.metadata = {
    ...clone.metadata,
    name: buildCloneName(originalName),
    annotations,
    ownerReferences: [{ ...root }],
  };
  const spec = withoutNamedAccountToken(pinNodeAffinityTerms(pinToVirtualNodes(clone.spec ?? {}, "only")));
  delete spec.nodeName;
  delete spec.ephemeralContainers;
  clone.spec = spec;
  delete clone.status;
  clone.apiVersion = "v1";
  clone.kind = "Pod";
  return clone;
}
