// reschedule-delete's handler: for a DELETE review of an interrupted bare simulation pod, create its clone.
// The answer is always "allowed" and never carries a patch (a non-empty patch on DELETE makes the API server
// fail the delete with a 500: k8s.io/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go); every
// failure is logged and the delete goes ahead.
//
// Checks run cheapest first: the pure triage (operation, dry run, oldObject, bare, interruption), what is
// already known in this process (uids handled, a teardown seen), then the API: the Simulation (cached), the
// owner chain (cached), the teardown guard (cached), the live pod, the create. During a teardown most
// reviews stop before any API call.
//
// One clone per deletion, whatever the number of reviews (admission runs inside the storage layer's retry
// loops, k8s.io/apiserver pkg/registry/generic/registry/store.go) and of replicas: the clone's name is
// a function of the pod's name, so a second create gets AlreadyExists, which counts as success. A memo of
// uids already handled saves the API calls in-process. The one gap: if a late review of a deletion arrives
// at a replica that has not seen it, after the clone was itself interrupted and deleted, while the original
// pod still exists (its delete not finished), that replica recreates the first clone. The live-pod read
// closes the gap as soon as the original is gone.

import { LRUCache } from "lru-cache";
import {
  type AdmissionRequest,
  type AdmissionReview,
  allow,
  parseReview,
  type ReviewHandler,
  rejectReview,
} from "../../shared/admission.js";
import type { FunctionConfig } from "../../shared/config.js";
import {
  isAlreadyExists,
  isNotFound,
  isTransient,
  type KubeApi,
  kubeErrorOf,
} from "../../shared/kube-api.js";
import type { Logger } from "../../shared/log.js";
import { createOwnerResolver, isBarePod, type OwnerResolver, simulationRootOf } from "../../shared/owners.js";
import type { Pod } from "../../shared/pod.js";
import { withRetry } from "../../shared/retry.js";
import {
  createSimulationSource,
  isSimulationOver,
  type SimulationSource,
  wantsBarePodRescheduling,
} from "../../shared/simulation.js";
import { createTeardownGuard, type TeardownGuard, type TeardownTarget } from "../../shared/teardown.js";
import { buildClone, type Candidate, confirmsInterruption, type SkipReason, triageDelete } from "./plan.js";
import { createRescheduleStats, type RescheduleStats } from "./stats.js";

export interface RetrySettings {
  /** Budget for all API calls of one review, retries included; the answer comes by this + 0.5 s, inside the generated webhook timeout of 5 s. Default 3000. */
  deadlineMs?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface RescheduleDeleteDeps {
  kube: KubeApi;
  simName: string;
  /** Usernames whose deletes replay production (SimKube's driver): never interruptions. */
  driverUsers: readonly string[];
  log: Logger;
  simulation: SimulationSource;
  owners: OwnerResolver;
  /** Default: createTeardownGuard(kube). */
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
  /** Milliseconds clock, sleep and randomness for the retries (tests inject them). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** How a review ended: a skip reason, or "cloned" (created now, or found already created). */
type Decision = { reason: SkipReason | HandlerSkip; clone?: string } | { reason: "cloned"; clone: string };

type HandlerSkip =
  | "already-handled"
  | "rescheduling-off"
  | "simulation-over"
  | "root-deleting"
  | "root-gone"
  | "namespace-terminating"
  | "namespace-gone"
  | "pod-gone"
  | "uid-mismatch"
  | "live-pod-not-interrupted"
  | "error"
  | "answer-deadline";

const DEFAULT_DEADLINE_MS = 3_000;

function isNamespaceTerminatingError(err: unknown): boolean {
  const e = kubeErrorOf(err);
  return e !== undefined && e.status === 403 && /being terminated/.test(e.message);
}

export function createRescheduleDeleteHandler(deps: RescheduleDeleteDeps): ReviewHandler {
  const stats = deps.stats ?? createRescheduleStats();
  const teardown = deps.teardown ?? createTeardownGuard(deps.kube);
  const now = deps.now ?? (() => performance.now());
  const deadlineMs = deps.retry?.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const answerWithinMs = deps.answerWithinMs ?? deadlineMs + 500;
  const handled = new LRUCache<string, string>({ max: deps.memoSize ?? 10_000 });
  const inFlight = new Map<string, Promise<Decision>>();

  function skip(reason: SkipReason | HandlerSkip): Decision {
    return { reason };
  }

  async function reschedule(candidate: Candidate, log: Logger): Promise<Decision> {
    const { namespace, name, uid } = candidate;
    const deadline = now() + deadlineMs;
    const call = <T>(step: string, fn: () => Promise<T>): Promise<T> =>
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

    const sim = await call("simulation", () => deps.simulation.get());
    if (!wantsBarePodRescheduling(sim)) return skip("rescheduling-off");
    if (isSimulationOver(sim)) {
      if (candidate.directRoot) teardown.observeSimulation(sim, { namespace, root: candidate.directRoot });
      return skip("simulation-over");
    }

    const chain = await call("owners", () => deps.owners.ownerChain(candidate.pod));
    const root = simulationRootOf(chain, deps.simName);
    if (root === undefined) return skip("not-in-simulation");
    const target: TeardownTarget = { namespace, root };
    const torn = await call("teardown", () => teardown.check(target));
    if (torn) return skip(torn);

    // Trust nothing in the review: the pod must exist with the same uid, and be what the review said.
    // During the final delete the pod still exists (admission runs before removal), so this read finds it.
    let live: Pod;
    try {
      live = await call("read-pod", () =>
        deps.kube.read<Pod>({ apiVersion: "v1", kind: "Pod", name, namespace }),
      );
    } catch (err) {
      if (isNotFound(err)) return skip("pod-gone");
      throw err;
    }
    if (live.metadata?.uid !== uid) return skip("uid-mismatch");
    if (!isBarePod(live)) return skip("not-bare");
    if (!confirmsInterruption(live, candidate.judgement)) return skip("live-pod-not-interrupted");

    const clone = buildClone(live);
    const cloneName = clone.metadata?.name ?? "";
    try {
      await call("create", () => deps.kube.create(clone));
      stats.clone("created");
    } catch (err) {
      if (isAlreadyExists(err)) {
        stats.clone("alreadyExisted");
      } else if (isNamespaceTerminatingError(err)) {
        teardown.markNamespaceTerminating(target);
        return skip("namespace-terminating");
      } else {
        stats.clone("failed");
        throw err;
      }
    }
    return { reason: "cloned", clone: cloneName };
  }

  /** Never rejects: an error is a logged decision, and the delete is allowed anyway. */
  async function decide(candidate: Candidate, log: Logger): Promise<Decision> {
    const { judgement } = candidate;
    const cause = judgement.cause === "deleted-by-user" ? `user:${judgement.detail}` : judgement.detail;
    stats.interruption(cause);
    let decision: Decision;
    try {
      decision = await reschedule(candidate, log);
    } catch (err) {
      log.error(
        { err, namespace: candidate.namespace, pod: candidate.name, interruption: cause },
        "could not reschedule interrupted pod; allowing the delete",
      );
      return skip("error");
    }
    // Only a clone is remembered: it was checked against the live pod. A skip might come from a forged or
    // stale review, and remembering it could suppress the real interruption of that uid later.
    if (decision.reason === "cloned") handled.set(candidate.uid, decision.clone);
    log.info(
      {
        decision: decision.reason === "cloned" ? "clone" : "skip",
        reason: decision.reason,
        interruption: cause,
        clone: decision.clone,
      },
      "review done",
    );
    return decision;
  }

  function withinAnswerDeadline(work: Promise<Decision>): Promise<Decision> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Decision>((resolve) => {
      timer = setTimeout(() => resolve(skip("answer-deadline")), answerWithinMs);
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  async function handleDelete(request: AdmissionRequest): Promise<AdmissionReview> {
    const triage = triageDelete(request, deps.driverUsers);
    if ("skip" in triage) {
      stats.decision(triage.skip);
      deps.log.debug({ uid: request.uid, decision: "skip", reason: triage.skip }, "review done");
      return allow(request);
    }
    const candidate = triage.candidate;
    const log = deps.log.child({
      uid: request.uid,
      namespace: candidate.namespace,
      pod: candidate.name,
      op: request.operation,
    });
    if (handled.has(candidate.uid)) {
      stats.decision("already-handled");
      log.debug(
        { decision: "skip", reason: "already-handled", earlier: handled.get(candidate.uid) },
        "review done",
      );
      return allow(request);
    }
    const known = candidate.directRoot
      ? teardown.known({ namespace: candidate.namespace, root: candidate.directRoot })
      : undefined;
    if (known) {
      stats.decision(known);
      log.debug({ decision: "skip", reason: known }, "review done");
      return allow(request);
    }
    // Reviews of one deletion arriving together share one piece of work.
    let work = inFlight.get(candidate.uid);
    const shared = work !== undefined;
    if (work === undefined) {
      work = decide(candidate, log).finally(() => inFlight.delete(candidate.uid));
      inFlight.set(candidate.uid, work);
    }
    const decision = await withinAnswerDeadline(work);
    stats.decision(shared ? "already-handled" : decision.reason);
    if (decision.reason === "answer-deadline") {
      log.warn(
        { answerWithinMs },
        "reschedule still running at the answer deadline; allowing the delete now",
      );
    }
    return allow(request);
  }

  return async (body) => {
    stats.review();
    const parsed = parseReview(body);
    if (!parsed.ok) {
      deps.log.warn({ uid: parsed.uid, reason: parsed.message }, "malformed review");
      stats.decision("malformed");
      // Fail open: a review we can answer (it has a uid) is allowed; only a body without one is rejected.
      return parsed.uid ? allow({ uid: parsed.uid }) : rejectReview(parsed);
    }
    try {
      return await handleDelete(parsed.request);
    } catch (err) {
      // Only a bug gets here (decide() does not throw); the delete still goes ahead.
      stats.decision("error");
      deps.log.error({ err, uid: parsed.request.uid }, "reschedule-delete failed; allowing the delete");
      return allow(parsed.request);
    }
  };
}

/** Everything the handler needs, from configuration; the CLI does `createRescheduleDeleteHandler(await ...)`. */
export async function buildRescheduleDeleteDeps(
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
): Promise<RescheduleDeleteDeps & { stats: RescheduleStats }> {
  log.info({ simName: config.simName, driverUsers: config.driverUsers }, "reschedule-delete configured");
  return {
    kube,
    simName: config.simName,
    driverUsers: config.driverUsers,
    log,
    simulation: createSimulationSource(kube, config.simName),
    owners: createOwnerResolver(kube, log),
    teardown: createTeardownGuard(kube),
    stats: createRescheduleStats(),
  };
}
