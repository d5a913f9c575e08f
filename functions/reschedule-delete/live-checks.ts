// What the cluster must show before reschedule-delete creates anything, as pure functions over objects read
// from the API. A review is a claim anyone who can reach the function's URL can make; triageDelete uses it
// only to skip cheaply. Every fact a clone depends on is judged here, from the live objects:
// - without SIM_NAME, the Simulation is the one owning the root that owns the pod's virtual namespace;
// - the SimulationRoot is the driver's root of this Simulation (`sk-<sim>-driver-root`, owned by it);
// - the pod's namespace is one of that root's virtual namespaces (owned by the root, labelled
//   `simkube.io/virtual: "true"`, as SimKube's driver creates them);
// - the pod exists with the review's uid, in that namespace, and shows the interruption;
// - the deletion the pod shows is the one the review describes (checkDeletionClaim): not shown before a
//   first-phase review could have made it, and of the claimed kind;
// - the pod's only owner is that root: a bare pod of this simulation (the driver appends an ownerReference
//   to the root on every object it applies, so a pod with no owners was not made by the simulation).

import {
  SIMKUBE_API_VERSION,
  SIMULATION_KIND,
  SIMULATION_ROOT_KIND,
  VIRTUAL_LABEL_KEY,
} from "../../shared/base/index.js";
import type { KubeObject, Pod } from "../../shared/kube/index.js";
import {
  isBarePod,
  isOwnedBy,
  type OwnerReference,
  ownerReferencesOf,
  refersTo,
} from "../../shared/kube/index.js";
import type { Simulation } from "../../shared/simulation/index.js";
import { type Candidate, confirmsInterruption, disruptionTargetOf } from "./plan.js";

/** The SimulationRoot as read from the API, reduced to what an ownerReference to it must match. */
export type RootRef = Required<Pick<OwnerReference, "apiVersion" | "kind" | "name" | "uid">>;

/** The root read by its name is this Simulation's: owned by the Simulation, with its uid (a rerun gets a new one). */
export function checkSimulationRoot(
  root: KubeObject | undefined,
  sim: Simulation,
): { root: RootRef } | { skip: "root-gone" | "not-in-simulation" } {
  const name = root?.metadata?.name;
  const uid = root?.metadata?.uid;
  if (!root || !name || !uid) return { skip: "root-gone" };
  const simulation = {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_KIND,
    name: sim.metadata?.name ?? "",
    uid: sim.metadata?.uid ?? "",
  };
  if (!isOwnedBy(root, simulation)) return { skip: "not-in-simulation" };
  return { root: { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, name, uid } };
}

/** A virtual namespace of this simulation: owned by its root and labelled `simkube.io/virtual: "true"`. */
export function checkVirtualNamespace(
  namespace: KubeObject | undefined,
  root: RootRef,
): "namespace-not-virtual" | undefined {
  if (namespace?.metadata?.labels?.[VIRTUAL_LABEL_KEY] !== "true") return "namespace-not-virtual";
  return isOwnedBy(namespace, root) ? undefined : "namespace-not-virtual";
}

/** The pod the review named, as it is now: the same object (uid, namespace, name), still interrupted. */
export function confirmLivePod(
  live: Pod | undefined,
  candidate: Candidate,
): "pod-gone" | "uid-mismatch" | "live-pod-not-interrupted" | undefined {
  if (!live) return "pod-gone";
  const meta = live.metadata;
  if (meta?.uid !== candidate.uid || meta.namespace !== candidate.namespace || meta.name !== candidate.name) {
    return "uid-mismatch";
  }
  return confirmsInterruption(live, candidate.judgement) ? undefined : "live-pod-not-interrupted";
}

/** deletionTimestamp and lastTransitionTime are RFC 3339 with whole seconds: a second of slack each way. */
const TIMESTAMP_SLACK_MS = 1_000;

function epochMs(value: unknown): number | undefined {
  const ms = typeof value === "string" || value instanceof Date ? new Date(value).getTime() : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** When the deletion the pod shows was made: its deletionTimestamp less its grace period (API server clock). */
export function deletionMadeAt(live: Pod): number | undefined {
  const at = epochMs(live.metadata?.deletionTimestamp);
  const grace = live.metadata?.deletionGracePeriodSeconds;
  if (at === undefined || typeof grace !== "number" || !(grace >= 0)) return undefined;
  return at - grace * 1_000;
}

/**
 * Whether the deletion the live pod shows is the one the review describes. `atReview`: the pod was read
 * while the review was being answered. A pod that shows no deletion passes (the wait is for that).
 * - A first-phase review's own deletion is stored only after every webhook answered, so a pod that already
 *   shows one at the review was deleted by someone else (the driver's own delete, held by a finalizer).
 * - A user's delete does not set DisruptionTarget: a pod that shows one was evicted, preempted or tainted
 *   out, and that deletion's own final review is judged on its own.
 * - A disruption is recorded before its delete (eviction, taint manager, preemption, pod GC): a condition
 *   that turned True after the deletion was made belongs to no deletion the pod shows.
 */
export function checkDeletionClaim(
  live: Pod,
  candidate: Candidate,
  atReview: boolean,
): "deletion-not-this-reviews" | undefined {
  if (!live.metadata?.deletionTimestamp) return undefined;
  if (atReview && candidate.firstPhase) return "deletion-not-this-reviews";
  const disruption = disruptionTargetOf(live);
  if (candidate.judgement.cause === "deleted-by-user") {
    return disruption ? "deletion-not-this-reviews" : undefined;
  }
  const madeAt = deletionMadeAt(live);
  const disruptedAt = epochMs(disruption?.lastTransitionTime);
  if (madeAt === undefined || disruptedAt === undefined) return undefined;
  return disruptedAt > madeAt + TIMESTAMP_SLACK_MS ? "deletion-not-this-reviews" : undefined;
}

/** Owned by the root directly and by nothing else; the reference returned is the one the clone keeps. */
export function checkOwnedByRoot(
  live: Pod,
  root: RootRef,
): { owner: OwnerReference } | { skip: "not-bare" | "not-owned-by-root" } {
  const refs = ownerReferencesOf(live);
  if (refs.some((ref) => typeof ref !== "object" || ref === null)) return { skip: "not-owned-by-root" };
  if (!isBarePod(live)) return { skip: "not-bare" };
  const [only] = refs;
  if (refs.length !== 1 || only === undefined || !refersTo(only, root)) return { skip: "not-owned-by-root" };
  return { owner: only };
}

function isSimkubeRef(ref: unknown, kind: string): ref is OwnerReference {
  if (typeof ref !== "object" || ref === null) return false;
  const r = ref as Partial<OwnerReference>;
  return (
    r.apiVersion === SIMKUBE_API_VERSION && r.kind === kind && typeof r.name === "string" && r.name !== ""
  );
}

/** A virtual namespace's SimulationRoot reference (labelled `simkube.io/virtual: "true"`), to find its Simulation. */
export function virtualNamespaceRootOf(namespace: KubeObject | undefined): OwnerReference | undefined {
  if (namespace?.metadata?.labels?.[VIRTUAL_LABEL_KEY] !== "true") return undefined;
  return ownerReferencesOf(namespace).find((ref) => isSimkubeRef(ref, SIMULATION_ROOT_KIND));
}

/** The name of the Simulation owning this SimulationRoot. */
export function owningSimulationName(root: KubeObject | undefined): string | undefined {
  if (!root) return undefined;
  return ownerReferencesOf(root).find((ref) => isSimkubeRef(ref, SIMULATION_KIND))?.name;
}
