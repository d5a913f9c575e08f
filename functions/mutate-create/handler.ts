// mutate-create's handler: triage the review (pure), gather the facts (the Simulation, the owner chain, the
// hash, a sequence number, the trace lifecycle), ask the plan for the mutated pod, answer with the patch.
// Fails closed: any failure while mutating a simulation pod denies it, so it never reaches a real node
// unmutated. A pod in a virtual namespace is pinned to virtual nodes even when its owner chain cannot reach
// the SimulationRoot; only its sequence number and lifecycle need that chain (triage.ts).
// Without SIM_NAME one deployment serves every Simulation: each pod's is found from its owner chain (or its
// virtual namespace), and that Simulation's settings and trace are used.

import {
  type AdmissionRequest,
  type AdmissionReview,
  allow,
  deny,
  parseReview,
  type ReviewHandler,
  rejectReview,
  withPatch,
} from "../../shared/admission/index.js";
import {
  errorMessage,
  type Logger,
  lazyChild,
  VIRTUAL_LABEL_KEY,
  type WorkLogger,
  withBindings,
} from "../../shared/base/index.js";
import { podSpecHash } from "../../shared/hash/index.js";
import {
  type KubeObject,
  type OwnerLink,
  type OwnerReference,
  type OwnerResolver,
  simulationOwnershipOf,
  workloadOwners,
} from "../../shared/kube/index.js";
import type { SequenceStore } from "../../shared/sequence/index.js";
import {
  type Simulation,
  type SimulationSource,
  simulationSpeed,
  simulationTracePath,
  virtualNsPrefix,
} from "../../shared/simulation/index.js";
import { describeLocation, type Instant, type TraceTables } from "../../shared/trace/index.js";
import { findCompletionTime } from "./lifecycle-plan.js";
import {
  lifecycleCandidates,
  mutationPatch,
  needsLifecycle,
  podName,
  recordedHash,
  recordedSequence,
} from "./plan.js";
import type { RescheduleNotice } from "./reschedule-notice.js";
import { createMutateStats, type MutateDecision, type MutateStats } from "./stats.js";
import { type TraceCache, TraceLocationRefused } from "./trace-cache.js";
import {
  type Candidate,
  planScope,
  planScopeAnySimulation,
  type Scope,
  type SkipReason,
  triageReview,
} from "./triage.js";
import { createWallClockNanos } from "./wall-clock.js";

export interface MutateCreateDeps {
  /** The one Simulation served (SIM_NAME); unset: every Simulation, each pod's found from the cluster. */
  simName?: string;
  log: Logger;
  owners: OwnerResolver;
  simulation: SimulationSource;
  sequences: SequenceStore;
  /** Without a trace, pods are still pinned to virtual nodes; they just get no completion time. */
  trace?: TraceTables;
  /** Without SIM_NAME and TRACE_PATH: each Simulation's spec.driver.tracePath, loaded once per location. */
  traces?: TraceCache;
  /** Without SIM_NAME: the namespace object (undefined when not found), to tell a virtual namespace's Simulation. */
  readNamespace?: (name: string) => Promise<KubeObject | undefined>;
  /** The wall clock; default: nanoseconds since the epoch, as SimKube's clock has them. */
  now?: () => Instant;
  /** Default: fresh stats (pass one to read them, as GET /stats does). */
  stats?: MutateStats;
  /**
   * RESCHEDULE_SERVED=false: told of each Simulation a pod is admitted for, to say when one asks for
   * rescheduling this deployment cannot serve (reschedule-notice.ts). Unset: nothing to say.
   */
  rescheduleNotice?: RescheduleNotice;
}

/** What one admission has found out so far. */
interface Facts {
  candidate: Candidate;
  simName: string;
  sim: Simulation;
  chain: OwnerLink[];
  hash: string;
  /** The review's uid: a repeated call of the same review gets the same sequence number. */
  requestUid: string;
}

/** The handler's world: its deps with defaults filled in. */
interface Context {
  deps: MutateCreateDeps;
  stats: MutateStats;
  now: () => Instant;
}

type Mutation = Exclude<Scope, { skip: unknown }>;

/** How far to mutate a pod, and for which Simulation. */
type Resolved =
  | { skip: SkipReason }
  | { mutation: Mutation; simName: string; sim: Simulation; chain: OwnerLink[] };

/** The number SimKube's add_pod_hash_annotations records: the pod's own, or the next one of its hash. */
async function reserveSequence(
  ctx: Context,
  facts: Facts,
  root: OwnerReference,
): Promise<number | undefined> {
  const recorded = recordedSequence(facts.candidate.pod);
  // A dry run is never stored, so it must not consume a number (the webhook declares NoneOnDryRun).
  if (recorded !== undefined || facts.candidate.dryRun) return recorded;
  const owner = { apiVersion: root.apiVersion, kind: root.kind, name: root.name, uid: root.uid };
  return await ctx.deps.sequences.next(facts.hash, { simName: facts.simName, owner }, facts.requestUid);
}

/** TRACE_PATH's trace; without it and without SIM_NAME, the one the pod's Simulation names. */
async function traceFor(ctx: Context, sim: Simulation): Promise<TraceTables | undefined> {
  if (ctx.deps.trace) return ctx.deps.trace;
  const location = ctx.deps.traces ? simulationTracePath(sim) : undefined;
  if (!location || !ctx.deps.traces) return undefined;
  try {
    return await ctx.deps.traces.get(location);
  } catch (err) {
    // The detail (address, port, HTTP status, file error) goes to the log only: in the denial it would tell
    // whoever creates pods what the function can reach, a port-scan oracle.
    ctx.deps.log.error({ err, location: describeLocation(location) }, "could not load a Simulation's trace");
    const refused = err instanceof TraceLocationRefused;
    ctx.stats.lifecycle(refused ? "trace-refused" : "trace-unreadable");
    throw new Error(
      refused
        ? "the Simulation's spec.driver.tracePath is not a trace location this deployment allows"
        : "the Simulation's trace could not be loaded (the function's log says why)",
    );
  }
}

/** What SimKube's add_lifecycle_fields needs: a Running pod's completion time, when the trace has one (the
 * caller asks only for a pod that needsLifecycle). */
async function completionTimeOf(
  ctx: Context,
  facts: Facts,
  sequence: number,
  log: WorkLogger,
): Promise<string | undefined> {
  const { pod, labelsForbidden } = facts.candidate;
  const trace = await traceFor(ctx, facts.sim);
  if (trace === undefined) {
    ctx.stats.lifecycle("no-trace");
    return undefined;
  }
  const candidates = lifecycleCandidates(pod, workloadOwners(facts.chain));
  const speed = simulationSpeed(facts.sim);
  const outcome = findCompletionTime(trace, candidates, facts.hash, sequence, speed, ctx.now());
  if (!outcome.found) {
    ctx.stats.lifecycle(outcome.reason);
    log.info({ lifecycle: outcome.reason, hash: facts.hash, sequence }, "no completion time for running pod");
    return undefined;
  }
  ctx.stats.lifecycle(labelsForbidden ? "labels-forbidden" : "completion-set");
  if (labelsForbidden) log.warn("node status update cannot carry labels; lifecycle deferred");
  return outcome.completionTime;
}

/** Pinned always; a sequence number and a lifecycle only when the chain reaches our root. */
async function mutate(
  ctx: Context,
  request: AdmissionRequest,
  facts: Facts,
  scope: Mutation,
  log: WorkLogger,
): Promise<AdmissionReview> {
  const { candidate, hash } = facts;
  const sequence = scope.mutate === "full" ? await reserveSequence(ctx, facts, scope.root) : undefined;
  // Only a Running pod has a lifecycle to look up (most CREATEs are Pending): no call, no await otherwise.
  const completionTime =
    sequence === undefined || !needsLifecycle(candidate.pod)
      ? undefined
      : await completionTimeOf(ctx, facts, sequence, log);
  const ops = mutationPatch({
    operation: candidate.operation,
    pod: candidate.pod,
    simName: facts.simName,
    hash,
    ...(sequence !== undefined ? { sequence } : {}),
    lifecycleParams: facts.sim.spec?.lifecycleParams ?? {},
    ...(completionTime !== undefined ? { completionTime } : {}),
    labelsForbidden: candidate.labelsForbidden,
  });
  const decision: MutateDecision = scope.mutate === "full" ? "mutated" : `pinned-${scope.reason}`;
  ctx.stats.decision(decision);
  const line = { decision, hash, sequence, ops: ops.length, completionTime };
  if (scope.mutate === "full") log.info(line, "review done");
  else
    log.warn(line, "pinned to virtual nodes without a sequence number: no SimulationRoot in the owner chain");
  return withPatch(request, ops);
}

/** SIM_NAME set: planScope over the served Simulation's prefix and the pod's chain. */
function servedScope(candidate: Candidate, simName: string, sim: Simulation, chain: OwnerLink[]): Resolved {
  const scope = planScope({
    operation: candidate.operation,
    namespace: candidate.namespace,
    virtualNsPrefix: virtualNsPrefix(sim),
    chain,
    simName,
  });
  return "skip" in scope ? scope : { mutation: scope, simName, sim, chain };
}

/**
 * SIM_NAME set and both the Simulation and the pod's whole owner chain cached, as for nearly every review of a
 * burst: the scope at once, without the promises of the reads (docs/performance.md, "History", has what that saved).
 * Else undefined.
 */
function resolveServedFromCache(ctx: Context, candidate: Candidate, simName: string): Resolved | undefined {
  const sim = ctx.deps.simulation.cached();
  const chain = sim && ctx.deps.owners.cachedOwnerChain(candidate.pod);
  return sim && chain ? servedScope(candidate, simName, sim, chain) : undefined;
}

/** SIM_NAME set: the served Simulation and the pod's chain, read where not cached. */
async function resolveServed(ctx: Context, candidate: Candidate, simName: string): Promise<Resolved> {
  // Independent reads, so a cold cache waits for the slower of the two rather than for both in turn.
  const [sim, chain] = await Promise.all([
    ctx.deps.simulation.get(),
    ctx.deps.owners.ownerChain(candidate.pod),
  ]);
  return servedScope(candidate, simName, sim, chain);
}

/** The Simulation whose virtual namespace this is: labelled virtual, owned by a root a Simulation owns. */
async function namespaceSimulationOf(ctx: Context, name: string): Promise<string | undefined> {
  const read = ctx.deps.readNamespace;
  if (!read) throw new Error("without SIM_NAME, mutate-create needs to read namespaces");
  const namespace = await read(name);
  if (namespace?.metadata?.labels?.[VIRTUAL_LABEL_KEY] !== "true") return undefined;
  return simulationOwnershipOf(await ctx.deps.owners.ownerChain(namespace))?.simName;
}

/** SIM_NAME unset: the pod's Simulation from its chain, else from its namespace; then that Simulation. */
async function resolveAnySimulation(ctx: Context, candidate: Candidate): Promise<Resolved> {
  const chain = await ctx.deps.owners.ownerChain(candidate.pod);
  const namespaceSimulation = simulationOwnershipOf(chain)
    ? undefined
    : await namespaceSimulationOf(ctx, candidate.namespace);
  const scope = planScopeAnySimulation({ operation: candidate.operation, chain, namespaceSimulation });
  if ("skip" in scope) return scope;
  const sim = await ctx.deps.simulation.get(scope.simName);
  return { mutation: scope, simName: scope.simName, sim, chain };
}

/** Gathers the facts and lets the scope say how far to go. Throws on any failure (the caller denies). */
async function admit(
  ctx: Context,
  request: AdmissionRequest,
  candidate: Candidate,
  log: WorkLogger,
): Promise<AdmissionReview> {
  const { simName } = ctx.deps;
  const resolved =
    simName === undefined
      ? await resolveAnySimulation(ctx, candidate)
      : (resolveServedFromCache(ctx, candidate, simName) ?? (await resolveServed(ctx, candidate, simName)));
  if ("skip" in resolved) {
    ctx.stats.decision(resolved.skip);
    log.debug({ decision: "skip", reason: resolved.skip }, "review done");
    return allow(request);
  }
  // Not awaited, never failing: the notice is beside the admission, not part of it.
  void ctx.deps.rescheduleNotice?.(resolved.sim);
  const hash = recordedHash(candidate.pod) ?? podSpecHash(candidate.pod);
  const facts = {
    candidate,
    simName: resolved.simName,
    sim: resolved.sim,
    chain: resolved.chain,
    hash,
    requestUid: request.uid,
  };
  const simLog = simName === undefined ? withBindings(log, { sim: resolved.simName }) : log;
  return await mutate(ctx, request, facts, resolved.mutation, simLog);
}

/** Fail closed: whatever goes wrong while judging or mutating a pod, it is denied, saying why. */
async function admitOrDeny(
  ctx: Context,
  request: AdmissionRequest,
  candidate: Candidate,
): Promise<AdmissionReview> {
  const { namespace, pod, operation } = candidate;
  const log = lazyChild(ctx.deps.log, () => ({
    uid: request.uid,
    namespace,
    pod: podName(pod),
    op: operation,
  }));
  try {
    return await admit(ctx, request, candidate, log);
  } catch (err) {
    ctx.stats.decision("error");
    log.error({ err }, "could not mutate simulation pod; denying it");
    const message = `could not mutate pod ${namespace}/${podName(pod)}: ${errorMessage(err)}`;
    return deny(request, `simkube-fn mutate-create ${message}`);
  }
}

export function createMutateCreateHandler(deps: MutateCreateDeps): ReviewHandler {
  const ctx: Context = {
    deps,
    stats: deps.stats ?? createMutateStats(),
    now: deps.now ?? createWallClockNanos(),
  };
  return async (body) => {
    ctx.stats.review();
    const parsed = parseReview(body);
    if (!parsed.ok) {
      ctx.stats.decision("malformed");
      deps.log.warn({ uid: parsed.uid, reason: parsed.message }, "malformed review");
      return rejectReview(parsed);
    }
    const request = parsed.request;
    const triage = triageReview(request);
    if ("skip" in triage) {
      ctx.stats.decision(triage.skip);
      return allow(request);
    }
    if ("deny" in triage) {
      ctx.stats.decision(triage.deny);
      return deny(request, `simkube-fn mutate-create: ${triage.message}`);
    }
    return await admitOrDeny(ctx, request, triage.candidate);
  };
}
