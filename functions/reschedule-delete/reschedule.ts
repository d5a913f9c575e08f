// reschedule-delete's steps for one interruption candidate, in SimKube's vocabulary: without SIM_NAME, find
// the simulation from the pod's namespace (its owner root's owner); check the simulation,
// find its root, check teardown, check the virtual namespace, confirm the live pod, check it is owned by the
// root; then create the clone once, but only when the live pod shows the deletion the review describes (a
// deletionTimestamp of the claimed kind, made after a first-phase review: checkDeletionClaim).
// Until it does the candidate is "awaiting-deletion": the handler answers, waits for the deletion to show
// (deletion-wait.ts), and calls cloneAfterDeletion. Each step that reads the API goes through `call` (retries inside one
// deadline); the judging is done by the pure functions of live-checks.ts and plan.ts.
//
// Cheapest and most shared first: the Simulation, the root and the namespace are cached reads that a whole
// burst shares (and a teardown found here is remembered, so later reviews stop before any call); the pod
// read and the create are per pod and come last.

import { SIMKUBE_API_VERSION, SIMULATION_ROOT_KIND } from "../../shared/base/index.js";
import type { OwnerReference, Pod } from "../../shared/kube/index.js";
import { isAlreadyExists, isNotFound, type KubeApi, kubeErrorOf } from "../../shared/kube/index.js";
import {
  driverRootName,
  isSimulationOver,
  type Simulation,
  type SimulationSource,
  wantsBarePodRescheduling,
} from "../../shared/simulation/index.js";
import type { CachedReads } from "./cached-reads.js";
import { buildCloneName } from "./clone-name.js";
import { continuesLineOf, judgeFoundClone } from "./clone-record.js";
import type { DeletionSeen } from "./deletion-wait.js";
import {
  checkDeletionClaim,
  checkOwnedByRoot,
  checkSimulationRoot,
  checkVirtualNamespace,
  confirmLivePod,
  owningSimulationName,
  type RootRef,
  virtualNamespaceRootOf,
} from "./live-checks.js";
import type { RescheduleOutcome } from "./outcomes.js";
import { buildClone, type Candidate } from "./plan.js";
import { type PodReadGrants, podReadIn } from "./pod-read-grants.js";
import type { RescheduleStats } from "./stats.js";
import type { TeardownGuard, TeardownTarget } from "./teardown.js";

/** How a review ended: a skip reason, or "cloned" (created now, or found already created). */
export type Decision =
  | { reason: Exclude<RescheduleOutcome, "cloned">; clone?: string }
  | { reason: "cloned"; clone: string };

/** Everything checked on the live pod; what the clone is made from once the deletion shows. */
export interface Confirmed {
  live: Pod;
  /** The root reference checked on the live pod: the clone's one owner. */
  owner: OwnerReference;
  root: RootRef;
  target: TeardownTarget;
}

/** All checks passed, but the live pod does not show the deletion yet: nothing is created now. */
export interface AwaitingDeletion {
  reason: "awaiting-deletion";
  confirmed: Confirmed;
}

/** One API step of a review (named for the logs), retried on transient errors inside the review's deadline. */
export type StepCall = <T>(step: string, fn: () => Promise<T>) => Promise<T>;

/** What the steps read and write through. */
export interface RescheduleWorld {
  kube: KubeApi;
  /** The one Simulation served (SIM_NAME); unset: the one owning the pod's namespace's root. */
  simName?: string;
  simulation: SimulationSource;
  teardown: TeardownGuard;
  /** The cached reads the teardown guard also uses: the root and the namespace cost one call per burst. */
  reads: CachedReads;
  stats: RescheduleStats;
  /** `--pod-reads virtual-namespaces`: pods are read only where a binding was made (pod-read-grants.ts). */
  podReads?: PodReadGrants;
}

export function skip(reason: Exclude<RescheduleOutcome, "cloned">): Decision {
  return { reason };
}

/** Rescheduling wanted and the Simulation still running; an over Simulation is remembered for the fast path. */
export async function checkSimulation(
  w: RescheduleWorld,
  simName: string,
  candidate: Candidate,
  call: StepCall,
): Promise<{ sim: Simulation } | Decision> {
  const sim = await call("simulation", () => w.simulation.get(simName));
  if (!wantsBarePodRescheduling(sim)) return skip("rescheduling-off");
  if (isSimulationOver(sim)) {
    if (candidate.directRoot) {
      w.teardown.observeSimulation(sim, { namespace: candidate.namespace, root: candidate.directRoot });
    }
    return skip("simulation-over");
  }
  return { sim };
}

/** The driver's SimulationRoot of this Simulation, read by its name (never taken from the review). */
export async function findSimulationRoot(
  w: RescheduleWorld,
  simName: string,
  sim: Simulation,
  call: StepCall,
): Promise<{ root: RootRef } | Decision> {
  const ref = {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_ROOT_KIND,
    name: driverRootName(simName),
  };
  const found = checkSimulationRoot(await call("root", () => w.reads.read(ref)), sim);
  return "skip" in found ? skip(found.skip) : found;
}

/**
 * SIM_NAME unset: the Simulation owning the root that owns the pod's virtual namespace (cached reads a burst
 * shares). Only a name: the steps after it check the root by its driver name and uid, and the namespace.
 */
export async function simulationOfNamespace(
  w: RescheduleWorld,
  namespace: string,
  call: StepCall,
): Promise<string | undefined> {
  const nsRef = { apiVersion: "v1", kind: "Namespace", name: namespace };
  const rootRef = virtualNamespaceRootOf(await call("namespace", () => w.reads.read(nsRef)));
  if (!rootRef) return undefined;
  const ref = { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, name: rootRef.name };
  return owningSimulationName(await call("root", () => w.reads.read(ref)));
}

/** The review's namespace must be one of the root's virtual namespaces; the pod is read there and nowhere else. */
export async function checkNamespace(w: RescheduleWorld, namespace: string, root: RootRef, call: StepCall) {
  const ref = { apiVersion: "v1", kind: "Namespace", name: namespace };
  return checkVirtualNamespace(await call("namespace", () => w.reads.read(ref)), root);
}

/** The pod as it is now, or undefined when it is gone. */
export async function readLivePod(w: RescheduleWorld, candidate: Candidate, call: StepCall) {
  const ref = { apiVersion: "v1", kind: "Pod", name: candidate.name, namespace: candidate.namespace };
  const read = podReadIn(w.podReads, candidate.namespace, () =>
    call("read-pod", () => w.kube.read<Pod>(ref)),
  );
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function isNamespaceTerminatingError(err: unknown): boolean {
  const e = kubeErrorOf(err);
  return e !== undefined && e.status === 403 && /being terminated/.test(e.message);
}

/** A pod's metadata by name in `namespace` (through the pod-read grant), or undefined when there is none. */
async function readPodMetadata(w: RescheduleWorld, namespace: string, name: string, call: StepCall) {
  const ref = { apiVersion: "v1", kind: "Pod", name, namespace };
  const read = podReadIn(w.podReads, namespace, () =>
    call("read-clone", () => w.kube.read<Pod>(ref, { metadataOnly: true })),
  );
  try {
    return await read();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * What the cluster records of this pod's clone (clone-record.ts): made already, its name held by another
 * pod's clone, or made and replaced by its own clone. Undefined: none was made, create it.
 */
async function recordedClone(
  w: RescheduleWorld,
  clone: Pod,
  uid: string,
  call: StepCall,
): Promise<Decision | undefined> {
  const name = clone.metadata?.name ?? "";
  const namespace = clone.metadata?.namespace ?? "";
  const [found, next] = await Promise.all([
    readPodMetadata(w, namespace, name, call),
    readPodMetadata(w, namespace, buildCloneName(name), call),
  ]);
  const judged = judgeFoundClone(found, uid);
  if (judged === "this-pods") {
    w.stats.clone("alreadyExisted");
    return { reason: "cloned", clone: name };
  }
  if (judged === "another-pods") return skip("clone-name-taken");
  return continuesLineOf(next, uid) ? skip("clone-replaced") : undefined;
}

/**
 * One clone per pod, whatever the number of reviews, replicas and restarts: the cluster is the record. The
 * clone's name is a function of the pod's and the clone names the pod's uid, so what is read before the
 * create, and an AlreadyExists after it, tell whether this pod's clone was made. A 403 because the
 * namespace is terminating is a teardown, remembered.
 */
export async function createCloneOnce(
  w: RescheduleWorld,
  clone: Pod,
  uid: string,
  target: TeardownTarget,
  call: StepCall,
): Promise<Decision> {
  const cloneName = clone.metadata?.name ?? "";
  const recorded = await recordedClone(w, clone, uid, call);
  if (recorded) return recorded;
  try {
    await call("create", () => w.kube.create(clone));
    w.stats.clone("created");
  } catch (err) {
    if (isAlreadyExists(err)) {
      // Another replica made it between the read and the create (or another pod's clone took the name).
      const found = await readPodMetadata(w, clone.metadata?.namespace ?? "", cloneName, call);
      if (judgeFoundClone(found, uid) === "another-pods") return skip("clone-name-taken");
      w.stats.clone("alreadyExisted");
    } else if (isNamespaceTerminatingError(err)) {
      w.teardown.markNamespaceTerminating(target);
      return skip("namespace-terminating");
    } else {
      w.stats.clone("failed");
      throw err;
    }
  }
  return { reason: "cloned", clone: cloneName };
}

/** The checks in order; the first that finds a reason not to clone ends the review. */
export async function confirmCandidate(
  w: RescheduleWorld,
  candidate: Candidate,
  call: StepCall,
): Promise<{ confirmed: Confirmed } | Decision> {
  const simName = w.simName ?? (await simulationOfNamespace(w, candidate.namespace, call));
  if (simName === undefined) return skip("not-in-simulation");
  const simulation = await checkSimulation(w, simName, candidate, call);
  if (!("sim" in simulation)) return simulation;
  const found = await findSimulationRoot(w, simName, simulation.sim, call);
  if (!("root" in found)) return found;
  const target: TeardownTarget = { namespace: candidate.namespace, root: found.root };
  const torn = await call("teardown", () => w.teardown.check(target));
  if (torn) return skip(torn);
  const notVirtual = await checkNamespace(w, candidate.namespace, found.root, call);
  if (notVirtual) return skip(notVirtual);
  // Only now, in a namespace checked to be this Simulation's virtual one, may pods be made readable.
  const { podReads } = w;
  if (podReads) await call("pod-read-binding", () => podReads.ensure(candidate.namespace));
  // During the final delete the pod still exists (admission runs before removal), so this read finds it.
  const live = await readLivePod(w, candidate, call);
  const unconfirmed = confirmLivePod(live, candidate);
  if (unconfirmed || live === undefined) return skip(unconfirmed ?? "pod-gone");
  const owned = checkOwnedByRoot(live, found.root);
  if ("skip" in owned) return skip(owned.skip);
  return { confirmed: { live, owner: owned.owner, root: found.root, target } };
}

/** The checks, then the clone at once if the live pod already shows the deletion (a final-phase review). */
export async function reschedule(
  w: RescheduleWorld,
  candidate: Candidate,
  call: StepCall,
): Promise<Decision | AwaitingDeletion> {
  const checked = await confirmCandidate(w, candidate, call);
  if (!("confirmed" in checked)) return checked;
  const { confirmed } = checked;
  if (!confirmed.live.metadata?.deletionTimestamp) return { reason: "awaiting-deletion", confirmed };
  const notTheReviews = checkDeletionClaim(confirmed.live, candidate, true);
  if (notTheReviews) return skip(notTheReviews);
  const clone = buildClone(confirmed.live, confirmed.owner);
  return createCloneOnce(w, clone, candidate.uid, confirmed.target, call);
}

/**
 * The deletion showed: a deletionTimestamp on the pod with the review's uid (checked again, as at the
 * review), or the pod gone (the clone is made from the pod as last read). The teardown is checked again: a
 * namespace or root deleted meanwhile is no interruption.
 */
export async function cloneAfterDeletion(
  w: RescheduleWorld,
  candidate: Candidate,
  confirmed: Confirmed,
  shown: DeletionSeen,
  call: StepCall,
): Promise<Decision> {
  let live = confirmed.live;
  let owner = confirmed.owner;
  if (shown.shown === "deletion-timestamp") {
    const unconfirmed = confirmLivePod(shown.live, candidate);
    if (unconfirmed) return skip(unconfirmed);
    const owned = checkOwnedByRoot(shown.live, confirmed.root);
    if ("skip" in owned) return skip(owned.skip);
    const notTheReviews = checkDeletionClaim(shown.live, candidate, false);
    if (notTheReviews) return skip(notTheReviews);
    live = shown.live;
    owner = owned.owner;
  }
  const torn = await call("teardown", () => w.teardown.check(confirmed.target));
  if (torn) return skip(torn);
  return createCloneOnce(w, buildClone(live, owner), candidate.uid, confirmed.target, call);
}
