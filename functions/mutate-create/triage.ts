// Which reviews mutate-create acts on, and how far, as pure functions with typed reasons. First from the
// review alone (no API call), then from the facts the handler gathered: the Simulation's virtual namespace
// prefix and the pod's owner chain.
//
// SimKube's mutate_pod (sk-driver/src/mutation.rs) mutates a pod whose owner chain holds its SimulationRoot.
// We do that too ("full"), and add one rule SimKube does not need because its driver keeps its own owner
// cache: every CREATE in one of the simulation's virtual namespaces is pinned to virtual nodes, even when
// its owner chain cannot reach the SimulationRoot (an owner was deleted). Only what needs the root, the
// sequence number and so the lifecycle, depends on the chain.

import type { AdmissionRequest } from "../../shared/admission/index.js";
import { isRecord } from "../../shared/base/index.js";
import type { Pod } from "../../shared/kube/index.js";
import {
  type OwnerLink,
  type OwnerReference,
  simulationOwnershipOf,
  simulationRootOf,
  simulationsOwning,
} from "../../shared/kube/index.js";

export type SkipReason =
  | "not-create-or-update"
  | "not-a-pod"
  | "terminating"
  | "not-in-simulation"
  | "other-simulation"
  | "update-without-root";

export type DenyReason = "no-object" | "bad-metadata";

/**
 * Why a pod is pinned but gets no sequence number or lifecycle: its chain does not reach our root (an owner
 * is gone, there is no root, or the root is another Simulation's).
 */
export type PinReason = "owner-gone" | "no-simulation-root" | "other-simulation-root";

/** A CREATE or UPDATE of a pod worth gathering facts for. */
export interface Candidate {
  operation: "CREATE" | "UPDATE";
  /** The pod, its namespace filled in from the request (admission sees it before the API server does). */
  pod: Pod;
  namespace: string;
  dryRun: boolean;
  /** A node's own status write: NodeRestriction refuses label changes (kubernetes/kubernetes plugin/pkg/admission/noderestriction). */
  labelsForbidden: boolean;
}

export type Triage = { candidate: Candidate } | { skip: SkipReason } | { deny: DenyReason; message: string };

function isNodeStatusWrite(request: AdmissionRequest): boolean {
  return request.subResource === "status" && (request.userInfo?.username ?? "").startsWith("system:node:");
}

/** The checks that need no API call: operation, kind, a pod object to judge, a terminating UPDATE. */
export function triageReview(request: AdmissionRequest): Triage {
  const operation = request.operation;
  if (operation !== "CREATE" && operation !== "UPDATE") return { skip: "not-create-or-update" };
  if (request.kind !== undefined && request.kind.kind !== "Pod") return { skip: "not-a-pod" };
  const object = request.object;
  // Without a pod we cannot tell whether it is the simulation's, so we cannot let it through.
  if (!isRecord(object)) return { deny: "no-object", message: `${operation} review has no object` };
  if (object.metadata !== undefined && !isRecord(object.metadata)) {
    return { deny: "bad-metadata", message: "pod metadata is not an object" };
  }
  const pod = object as Pod;
  // Only an UPDATE can be of a terminating pod: the API server wipes deletionTimestamp from a new object before
  // admission (k8s.io/apiserver handlers/create.go), so a CREATE carrying one is mutated like any other (SimKube
  // leaves it alone: docs/differences-from-simkube.md). KWOK completes no terminating pod.
  if (operation === "UPDATE" && pod.metadata?.deletionTimestamp) return { skip: "terminating" };
  const namespace = pod.metadata?.namespace || request.namespace || "";
  return {
    candidate: {
      operation,
      pod: { ...pod, metadata: { ...pod.metadata, namespace } },
      namespace,
      dryRun: request.dryRun === true,
      labelsForbidden: isNodeStatusWrite(request),
    },
  };
}

/** One of the simulation's virtual namespaces: `<virtualNsPrefix>-<original namespace>`, as its driver names them. */
export function isVirtualNamespace(namespace: string, virtualNsPrefix: string): boolean {
  return namespace.length > virtualNsPrefix.length + 1 && namespace.startsWith(`${virtualNsPrefix}-`);
}

/** A SimulationRoot in the chain, read from the API, that another Simulation owns. */
export function otherSimulationRootOf(
  chain: readonly OwnerLink[],
  simName: string,
): OwnerReference | undefined {
  return chain.find((link) => !link.gone && simulationsOwning(link).some((name) => name !== simName))?.ref;
}

export interface ScopeFacts {
  operation: "CREATE" | "UPDATE";
  namespace: string;
  /** The served Simulation's spec.driver.virtualNsPrefix (default "virtual"). */
  virtualNsPrefix: string;
  chain: readonly OwnerLink[];
  simName: string;
}

export type Scope =
  | { mutate: "full"; root: OwnerReference }
  | { mutate: "pin"; reason: PinReason }
  | { skip: SkipReason };

/**
 * How far to mutate. Full when the chain holds our SimulationRoot. Otherwise a CREATE in one of our virtual
 * namespaces is pinned, whatever its chain reaches, and anything else is not the simulation's. A pod whose
 * chain reaches another Simulation's root is pinned too: SimKube leaves it to that Simulation's webhook, but
 * that webhook may be gone (the Simulation finished) or never called, and a pod in a virtual namespace must
 * not land on a real node. It gets no sequence number: that Simulation's webhook counts it, per its root.
 * Outside our virtual namespaces it is left to its own webhook.
 */
export function planScope(facts: ScopeFacts): Scope {
  const root = simulationRootOf(facts.chain, facts.simName);
  if (root !== undefined) return { mutate: "full", root };
  const other = otherSimulationRootOf(facts.chain, facts.simName);
  if (!isVirtualNamespace(facts.namespace, facts.virtualNsPrefix)) {
    return { skip: other ? "other-simulation" : "not-in-simulation" };
  }
  // A pod's nodeSelector cannot change after it is created, and a lifecycle needs the root's sequence.
  if (facts.operation === "UPDATE") return { skip: other ? "other-simulation" : "update-without-root" };
  if (other) return { mutate: "pin", reason: "other-simulation-root" };
  return {
    mutate: "pin",
    reason: facts.chain.some((link) => link.gone) ? "owner-gone" : "no-simulation-root",
  };
}

export interface AnySimulationFacts {
  operation: "CREATE" | "UPDATE";
  chain: readonly OwnerLink[];
  /**
   * The Simulation whose virtual namespace the pod is in, when its namespace object says so (labelled
   * `simkube.io/virtual: "true"` and owned by a SimulationRoot that a Simulation owns); else undefined.
   */
  namespaceSimulation?: string | undefined;
}

export type AnySimulationScope =
  | { mutate: "full"; root: OwnerReference; simName: string }
  | { mutate: "pin"; reason: PinReason; simName: string }
  | { skip: SkipReason };

/**
 * planScope for a deployment without SIM_NAME: the pod's Simulation is the owner of the SimulationRoot in
 * its chain. Without one, a CREATE in a virtual namespace is pinned for the namespace's Simulation. The
 * namespace object decides, not the name prefix: with no Simulation named in advance, a prefix alone cannot
 * tell whose namespace it is, while its label and owner are what SimKube's driver sets on it.
 */
export function planScopeAnySimulation(facts: AnySimulationFacts): AnySimulationScope {
  const owned = simulationOwnershipOf(facts.chain);
  if (owned) return { mutate: "full", root: owned.root, simName: owned.simName };
  if (facts.namespaceSimulation === undefined) return { skip: "not-in-simulation" };
  if (facts.operation === "UPDATE") return { skip: "update-without-root" };
  return {
    mutate: "pin",
    reason: facts.chain.some((link) => link.gone) ? "owner-gone" : "no-simulation-root",
    simName: facts.namespaceSimulation,
  };
}
