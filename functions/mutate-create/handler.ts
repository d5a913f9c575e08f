// mutate-create's handler: gathers the facts (owner chain, Simulation, hash, sequence, trace lifecycle),
// asks the plan for the mutated pod, answers with the patch. Fails closed: any failure while mutating a
// simulation pod denies it, so a simulated pod never reaches a real node unmutated.

import {
  type AdmissionRequest,
  allow,
  deny,
  parseReview,
  type ReviewHandler,
  rejectReview,
  withPatch,
} from "../../shared/admission.js";
import { createClusterSequenceStore } from "../../shared/cluster-sequence-store.js";
import type { FunctionConfig } from "../../shared/config.js";
import { type Counters, createCounters } from "../../shared/counters.js";
import { errorMessage, isRecord } from "../../shared/json.js";
import type { KubeApi } from "../../shared/kube-api.js";
import type { Logger } from "../../shared/log.js";
import {
  createOwnerResolver,
  type OwnerResolver,
  simulationRootOf,
  workloadOwners,
} from "../../shared/owners.js";
import type { Pod } from "../../shared/pod.js";
import { podSpecHash } from "../../shared/pod-hash.js";
import { createMemorySequenceStore, type SequenceStore } from "../../shared/sequence-store.js";
import { createSimulationSource, type SimulationSource, simulationSpeed } from "../../shared/simulation.js";
import { loadTrace, type Trace } from "../../shared/trace.js";
import { findCompletionTime } from "./lifecycle-plan.js";
import {
  lifecycleCandidates,
  mutationPatch,
  needsLifecycle,
  podName,
  recordedHash,
  recordedSequence,
} from "./plan.js";

export interface MutateCreateDeps {
  simName: string;
  log: Logger;
  owners: OwnerResolver;
  simulation: SimulationSource;
  sequences: SequenceStore;
  /** Without a trace, pods are still pinned to virtual nodes; they just get no completion time. */
  trace?: Trace;
  now?: () => Date;
  counters?: Counters;
}

/** A node's own status writes may not change labels (kubernetes/kubernetes NodeRestriction admission). */
function labelsForbidden(request: AdmissionRequest): boolean {
  return request.subResource === "status" && (request.userInfo?.username ?? "").startsWith("system:node:");
}

export function createMutateCreateHandler(deps: MutateCreateDeps): ReviewHandler {
  const now = deps.now ?? (() => new Date());
  const counters = deps.counters ?? createCounters();

  async function mutate(request: AdmissionRequest, pod: Pod, log: Logger) {
    const chain = await deps.owners.ownerChain(pod);
    const root = simulationRootOf(chain, deps.simName);
    if (root === undefined) {
      counters.inc("skip:not-in-simulation");
      log.debug({ decision: "skip", reason: "not-in-simulation" }, "review done");
      return allow(request);
    }
    const operation = request.operation as "CREATE" | "UPDATE";
    const sim = await deps.simulation.get();
    const hash = recordedHash(pod) ?? podSpecHash(pod);
    // A dry run is never stored, so it must not consume a number (the webhook declares NoneOnDryRun).
    const sequence =
      recordedSequence(pod) ??
      (request.dryRun
        ? undefined
        : await deps.sequences.next(hash, {
            simName: deps.simName,
            owner: { apiVersion: root.apiVersion, kind: root.kind, name: root.name, uid: root.uid },
          }));

    let completionTime: string | undefined;
    if (deps.trace && sequence !== undefined && needsLifecycle(pod)) {
      const outcome = findCompletionTime(
        deps.trace,
        lifecycleCandidates(pod, workloadOwners(chain)),
        hash,
        sequence,
        simulationSpeed(sim),
        now(),
      );
      if (outcome.found) completionTime = outcome.completionTime;
      else log.info({ lifecycle: outcome.reason, hash, sequence }, "no completion time for running pod");
    }

    const forbidLabels = labelsForbidden(request);
    if (forbidLabels && completionTime !== undefined) {
      log.warn(
        { user: request.userInfo?.username },
        "node status update cannot carry labels; lifecycle deferred",
      );
    }
    const ops = mutationPatch({
      operation,
      pod,
      simName: deps.simName,
      hash,
      ...(sequence !== undefined ? { sequence } : {}),
      lifecycleParams: sim.spec?.lifecycleParams ?? {},
      ...(completionTime !== undefined ? { completionTime } : {}),
      labelsForbidden: forbidLabels,
    });
    counters.inc(`mutate:${operation.toLowerCase()}`);
    log.info({ decision: "mutate", hash, sequence, ops: ops.length, completionTime }, "review done");
    return withPatch(request, ops);
  }

  return async (body) => {
    counters.inc("reviews");
    const parsed = parseReview(body);
    if (!parsed.ok) {
      counters.inc("reject:malformed");
      deps.log.warn({ uid: parsed.uid, reason: parsed.message }, "malformed review");
      return rejectReview(parsed);
    }
    const request = parsed.request;
    if (request.operation !== "CREATE" && request.operation !== "UPDATE") {
      counters.inc("skip:operation");
      return allow(request);
    }
    if (request.kind !== undefined && request.kind.kind !== "Pod") {
      counters.inc("skip:not-a-pod");
      return allow(request);
    }
    if (!isRecord(request.object)) {
      // We cannot tell whether it belongs to the simulation, so we cannot let it through.
      counters.inc("deny:no-object");
      return deny(request, `simkube-fn mutate-create: ${request.operation} review has no object`);
    }
    const object = request.object as Pod;
    if (object.metadata !== undefined && !isRecord(object.metadata)) {
      counters.inc("deny:bad-metadata");
      return deny(request, "simkube-fn mutate-create: pod metadata is not an object");
    }
    if (object.metadata?.deletionTimestamp) {
      counters.inc("skip:terminating");
      return allow(request);
    }
    const ownerRefs = object.metadata?.ownerReferences;
    if (ownerRefs === undefined || (Array.isArray(ownerRefs) && ownerRefs.length === 0)) {
      // No owners: it cannot hang off a SimulationRoot. Answered without any API call.
      counters.inc("skip:not-in-simulation");
      return allow(request);
    }
    // Admission sees the pod before the API server fills in its namespace (and, for generateName, its name).
    const namespace = object.metadata?.namespace || request.namespace || "";
    const pod = { ...object, metadata: { ...object.metadata, namespace } } as Pod;
    const log = deps.log.child({ uid: request.uid, namespace, pod: podName(pod), op: request.operation });
    try {
      return await mutate(request, pod, log);
    } catch (err) {
      counters.inc("deny:error");
      log.error({ err }, "could not mutate simulation pod; denying it");
      return deny(
        request,
        `simkube-fn mutate-create could not mutate pod ${namespace}/${podName(pod)}: ${errorMessage(err)}`,
      );
    }
  };
}

/** Builds everything the handler needs from configuration: trace, caches, sequence store. */
export async function buildMutateCreateDeps(
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
): Promise<MutateCreateDeps> {
  const trace = config.tracePath ? await loadTrace(config.tracePath) : undefined;
  if (trace) log.info({ tracePath: config.tracePath, events: trace.events.length }, "trace loaded");
  else log.warn("no TRACE_PATH: pods are pinned to virtual nodes but get no lifecycle from a trace");
  const deps: MutateCreateDeps = {
    simName: config.simName,
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube, config.simName),
    sequences:
      config.sequenceStore === "memory"
        ? createMemorySequenceStore()
        : createClusterSequenceStore(kube, { namespace: config.storeNamespace }),
    counters: createCounters(),
  };
  if (trace) deps.trace = trace;
  return deps;
}
