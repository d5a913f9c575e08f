// reschedule-delete's handler: for a DELETE review of an interrupted bare simulation pod, create its clone.
// The answer is always "allowed" and never carries a patch (a non-empty patch on DELETE makes the API server
// fail the delete with a 500: k8s.io/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go); every
// failure is logged and the delete goes ahead.
//
// Checks run cheapest first: the pure triage of what the review claims (operation, dry run, oldObject, bare,
// interruption), what is already known in this process (uids handled, a teardown seen), then the steps of
// reschedule.ts, which judge everything a clone depends on from the cluster, never from the review: the
// Simulation, its driver's SimulationRoot, the teardown guard, the virtual namespace (all cached), the live
// pod, the create. During a teardown most reviews stop before any API call.
//
// A clone needs the deletion itself, not just a review of it: a live pod that passed every check but shows
// no deletionTimestamp yet (a first-phase review: the API server stores the deletion only after the answer)
// is answered at once, and its clone waits in pending-clones.ts until the pod shows the deletion
// (deletion-wait.ts), or is never made. A review that no deletion backs creates nothing ("no-deletion-seen"),
// nor one whose deletion is not the one it describes ("deletion-not-this-reviews", live-checks.ts).
//
// One clone per pod, whatever the number of reviews (admission runs inside the storage layer's retry
// loops, k8s.io/apiserver pkg/registry/generic/registry/store.go), of replicas and of restarts: the cluster
// is the record, not this process. The clone's name is a function of the pod's, and the clone names the uid
// of the pod it replaces (clone-record.ts); before creating, the name and the next one are read, so a clone
// already made, or made and then itself replaced by its own clone, is found, and a second create gets
// AlreadyExists. A memo of uids already handled only saves API calls in-process. What remains: a clone whose
// line was ended (its clone deleted by a non-interrupting delete, or two generations gone) while the
// original still exists is made again by a late review of the original's deletion.

import { LRUCache } from "lru-cache";
import {
  type AdmissionRequest,
  type AdmissionReview,
  allow,
  parseReview,
  type ReviewHandler,
  UnanswerableReviewError,
} from "../../shared/admission/index.js";
import { type Logger, lazyChild, type WorkLogger, withDeadline, withRetry } from "../../shared/base/index.js";
import type { Pod } from "../../shared/kube/index.js";
import { isTransient, type KubeApi } from "../../shared/kube/index.js";
import type { SimulationSource } from "../../shared/simulation/index.js";
import { createCachedReads } from "./cached-reads.js";
import { awaitDeletion, DEFAULT_DELETION_WAIT_MS, type DeletionWaitOptions } from "./deletion-wait.js";
import type { TeardownReason } from "./outcomes.js";
import { createPendingClones, type PendingClones } from "./pending-clones.js";
import type { Candidate } from "./plan.js";
import { triageDelete } from "./plan.js";
import { createPodReadGrants, type PodReadSettings, podReadIn } from "./pod-read-grants.js";
import {
  type AwaitingDeletion,
  type Confirmed,
  cloneAfterDeletion,
  type Decision,
  type RescheduleWorld,
  reschedule,
  type StepCall,
  skip,
} from "./reschedule.js";
import { createRescheduleStats, type RescheduleStats } from "./stats.js";
import { createTeardownGuard, type TeardownGuard } from "./teardown.js";

export interface RetrySettings {
  /** Budget for all API calls of one review, retries included; the answer comes by this + 0.5 s, inside the generated webhook timeout of 5 s. Default 3000. */
  deadlineMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface RescheduleDeleteDeps {
  kube: KubeApi;
  /** The one Simulation served (SIM_NAME); unset: each pod's, from its virtual namespace's owner. */
  simName?: string;
  /** Usernames whose deletes replay production (SimKube's driver): never interruptions. */
  driverUsers: readonly string[];
  log: Logger;
  simulation: SimulationSource;
  /** Default: createTeardownGuard(kube), reading through the handler's cached reads. */
  teardown?: TeardownGuard;
  /** Default: fresh counters (pass one to read them, as GET /stats does). */
  stats?: RescheduleStats;
  retry?: RetrySettings;
  /**
   * Answer by then even if the API has not (a hung call must not make the API server time the webhook
   * out: with failurePolicy Fail that would fail the delete). The work goes on and is logged. Default
   * retry deadline + 500 ms.
   */
  answerWithinMs?: number;
  /** How many pod uids are remembered as handled. Default 10000. */
  memoSize?: number;
  /** How long, and how often, a clone waits for its deletion to show after the answer (deletion-wait.ts). */
  deletionWait?: Pick<DeletionWaitOptions, "waitMs" | "firstDelayMs" | "maxDelayMs">;
  /** The clones waiting for their deletion. Default: a fresh registry of 256 (pass one to drain it on shutdown). */
  pending?: PendingClones;
  /** `--pod-reads virtual-namespaces`: bind this role to this account in each virtual namespace first. */
  podReads?: PodReadSettings;
  /** Milliseconds clock, sleep and randomness for the retries (tests inject them). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const DEFAULT_DEADLINE_MS = 3_000;

/** The steps' API calls for one review: transient errors retried, all inside one deadline from now. */
function stepCaller(deps: RescheduleDeleteDeps, stats: RescheduleStats, log: WorkLogger): StepCall {
  const now = deps.now ?? (() => performance.now());
  const deadline = now() + (deps.retry?.deadlineMs ?? DEFAULT_DEADLINE_MS);
  return (step, fn) =>
    withRetry(fn, {
      deadlineMs: Math.max(0, deadline - now()),
      isRetryable: isTransient,
      now,
      ...(deps.retry?.baseDelayMs !== undefined ? { baseDelayMs: deps.retry.baseDelayMs } : {}),
      ...(deps.retry?.maxDelayMs !== undefined ? { maxDelayMs: deps.retry.maxDelayMs } : {}),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      ...(deps.random ? { random: deps.random } : {}),
      onRetry: ({ attempt, delayMs, err }) => {
        stats.retry();
        log.warn({ step, attempt, delayMs, err }, "transient API error; retrying");
      },
    });
}

function interruptionCause(candidate: Candidate): string {
  const { judgement } = candidate;
  return judgement.cause === "deleted-by-user" ? `user:${judgement.detail}` : judgement.detail;
}

/** What one handler keeps between reviews. */
interface HandlerState {
  deps: RescheduleDeleteDeps;
  world: RescheduleWorld;
  stats: RescheduleStats;
  answerWithinMs: number;
  /** Pod uids already cloned, with the clone's name. */
  handled: LRUCache<string, string>;
  /** The work on each pod uid under way: reviews of one deletion arriving together share it. */
  inFlight: Map<string, Promise<Decision | AwaitingDeletion>>;
  pending: PendingClones;
}

function buildState(deps: RescheduleDeleteDeps): HandlerState {
  const stats = deps.stats ?? createRescheduleStats();
  const clock = deps.now ? { now: deps.now } : {};
  // One set of cached reads for the teardown guard and the steps: a namespace is read once per burst.
  const reads = createCachedReads(deps.kube, clock);
  const teardown = deps.teardown ?? createTeardownGuard(deps.kube, { reads, ...clock });
  const { kube, simName, simulation } = deps;
  const pending = deps.pending ?? createPendingClones();
  stats.countPendingWith(() => pending.size);
  const podReads = deps.podReads
    ? createPodReadGrants(kube, deps.podReads, { ...clock, ...(deps.sleep ? { sleep: deps.sleep } : {}) })
    : undefined;
  return {
    deps,
    world: {
      kube,
      ...(simName ? { simName } : {}),
      simulation,
      teardown,
      reads,
      stats,
      ...(podReads ? { podReads } : {}),
    },
    stats,
    answerWithinMs: deps.answerWithinMs ?? (deps.retry?.deadlineMs ?? DEFAULT_DEADLINE_MS) + 500,
    handled: new LRUCache<string, string>({ max: deps.memoSize ?? 10_000 }),
    inFlight: new Map(),
    pending,
  };
}

/** Only a clone is remembered, and logged: it was checked against the live pod and its deletion. */
function record(s: HandlerState, candidate: Candidate, decision: Decision, log: WorkLogger): void {
  // A skip might come from a forged or stale review, and remembering it could suppress the real
  // interruption of that uid later.
  if (decision.reason === "cloned") s.handled.set(candidate.uid, decision.clone);
  const verdict = decision.reason === "cloned" ? "clone" : "skip";
  const fields = {
    decision: verdict,
    reason: decision.reason,
    interruption: interruptionCause(candidate),
    clone: decision.clone,
  };
  if (decision.reason === "no-deletion-seen") {
    log.warn(fields, "the pod never showed the deletion the review claims; no clone");
  } else log.info(fields, "review done");
}

/** Never rejects: an error is a logged decision, and the delete is allowed anyway. */
async function decide(
  s: HandlerState,
  candidate: Candidate,
  log: WorkLogger,
): Promise<Decision | AwaitingDeletion> {
  const cause = interruptionCause(candidate);
  s.stats.interruption(candidate.judgement.cause, candidate.judgement.detail);
  let decision: Decision | AwaitingDeletion;
  try {
    decision = await reschedule(s.world, candidate, stepCaller(s.deps, s.stats, log));
  } catch (err) {
    log.error(
      { err, namespace: candidate.namespace, pod: candidate.name, interruption: cause },
      "could not reschedule interrupted pod; allowing the delete",
    );
    return skip("error");
  }
  if (decision.reason !== "awaiting-deletion") record(s, candidate, decision, log);
  return decision;
}

/** After the answer: wait for the deletion to show, then clone (or not); the review's decision is counted then. */
async function cloneWhenDeleted(
  s: HandlerState,
  candidate: Candidate,
  confirmed: Confirmed,
  log: WorkLogger,
): Promise<void> {
  const { namespace, name, uid } = candidate;
  const ref = { apiVersion: "v1", kind: "Pod", name, namespace };
  const started = (s.deps.now ?? (() => performance.now()))();
  let decision: Decision;
  try {
    const read = podReadIn(s.world.podReads, namespace, () => s.deps.kube.read<Pod>(ref));
    const shown = await awaitDeletion(read, uid, {
      ...s.deps.deletionWait,
      ...(s.deps.sleep ? { sleep: s.deps.sleep } : {}),
      stop: () => s.handled.has(uid),
    });
    if (s.handled.has(uid)) decision = skip("already-handled");
    else if (shown.shown === "no-deletion-seen") decision = skip("no-deletion-seen");
    else {
      log.debug({ shown: shown.shown }, "the pod shows the deletion");
      decision = await cloneAfterDeletion(
        s.world,
        candidate,
        confirmed,
        shown,
        stepCaller(s.deps, s.stats, log),
      );
    }
  } catch (err) {
    log.error({ err }, "could not clone the interrupted pod");
    decision = skip("error");
  }
  const waitedMs = Math.round((s.deps.now ?? (() => performance.now()))() - started);
  log.debug({ waitedMs }, "deletion wait over");
  record(s, candidate, decision, log);
  s.stats.decision(decision.reason);
}

/** The review's part when the clone must wait: start (or join) the wait, bounded in number. */
function awaitDeletionOf(s: HandlerState, candidate: Candidate, confirmed: Confirmed, log: WorkLogger) {
  const started = s.pending.start(candidate.uid, () => cloneWhenDeleted(s, candidate, confirmed, log));
  if (started === "started") {
    log.debug({ pending: s.pending.size }, "answered; waiting for the pod to show the deletion");
    return;
  }
  if (started === "full") {
    log.warn({ pending: s.pending.size }, "too many clones waiting for their deletion; no clone");
    s.stats.decision("pending-full");
  } else s.stats.decision("deletion-pending");
}

/** What this process already knows about the candidate, with no API call: handled, or torn down. */
function knownSkip(s: HandlerState, candidate: Candidate): "already-handled" | TeardownReason | undefined {
  if (s.handled.has(candidate.uid)) return "already-handled";
  if (!candidate.directRoot) return undefined;
  return s.world.teardown.known({ namespace: candidate.namespace, root: candidate.directRoot });
}

/** One piece of work per pod uid, answered by the answer deadline whether or not it is done. */
async function decideOnce(s: HandlerState, candidate: Candidate, log: WorkLogger): Promise<void> {
  let work = s.inFlight.get(candidate.uid);
  const shared = work !== undefined;
  if (work === undefined) {
    work = decide(s, candidate, log).finally(() => s.inFlight.delete(candidate.uid));
    s.inFlight.set(candidate.uid, work);
  }
  const decision = await withDeadline<Decision | AwaitingDeletion>(work, s.answerWithinMs, () =>
    skip("answer-deadline"),
  );
  if (shared) s.stats.decision("already-handled");
  else if (decision.reason === "awaiting-deletion") awaitDeletionOf(s, candidate, decision.confirmed, log);
  else s.stats.decision(decision.reason);
  if (decision.reason === "answer-deadline") {
    log.warn(
      { answerWithinMs: s.answerWithinMs },
      "reschedule still running at the answer deadline; allowing the delete now",
    );
  }
}

async function handleDelete(s: HandlerState, request: AdmissionRequest): Promise<AdmissionReview> {
  const triage = triageDelete(request, s.deps.driverUsers);
  if ("skip" in triage) {
    s.stats.decision(triage.skip);
    s.deps.log.debug({ uid: request.uid, decision: "skip", reason: triage.skip }, "review done");
    return allow(request);
  }
  const { candidate } = triage;
  // Bound only when a line is written: a teardown's candidates mostly end in knownSkip, at debug.
  const log = lazyChild(s.deps.log, () => ({
    uid: request.uid,
    namespace: candidate.namespace,
    pod: candidate.name,
    op: request.operation,
  }));
  const known = knownSkip(s, candidate);
  if (known) {
    s.stats.decision(known);
    log.debug({ decision: "skip", reason: known, earlier: s.handled.get(candidate.uid) }, "review done");
    return allow(request);
  }
  await decideOnce(s, candidate, log);
  return allow(request);
}

async function handleReview(s: HandlerState, body: unknown): Promise<AdmissionReview> {
  s.stats.review();
  const parsed = parseReview(body);
  if (!parsed.ok) {
    s.deps.log.warn({ uid: parsed.uid, reason: parsed.message }, "malformed review");
    s.stats.decision("malformed");
    // Fail open: a review with a uid is answered allowed. Without one there is nothing to answer, and a
    // DELETE must never be denied: the adapter answers HTTP 400 instead.
    if (!parsed.uid) throw new UnanswerableReviewError(parsed.message);
    return allow({ uid: parsed.uid });
  }
  try {
    return await handleDelete(s, parsed.request);
  } catch (err) {
    // Only a bug gets here (decide() does not throw); the delete still goes ahead.
    s.stats.decision("error");
    s.deps.log.error({ err, uid: parsed.request.uid }, "reschedule-delete failed; allowing the delete");
    return allow(parsed.request);
  }
}

/** How long a shutdown waits for the clones still waiting: one deletion wait, then one review's API deadline. */
export function pendingSettleMs(deps: Pick<RescheduleDeleteDeps, "deletionWait" | "retry">): number {
  const waitMs = deps.deletionWait?.waitMs ?? DEFAULT_DELETION_WAIT_MS;
  return waitMs + (deps.retry?.deadlineMs ?? DEFAULT_DEADLINE_MS) + 500;
}

export function createRescheduleDeleteHandler(deps: RescheduleDeleteDeps): ReviewHandler {
  const state = buildState(deps);
  return (body) => handleReview(state, body);
}
