// Every way a DELETE review can end, in one place: one outcome per review, counted by type (stats.ts) and
// logged with the same words. Each list below belongs to one step of the request path (docs/architecture.md);
// the steps' files import their list from here instead of declaring it. Pure: names only.

/** triageDelete (plan.ts): the review alone shows this is no interruption of a simulated bare pod. */
export const TRIAGE_SKIPS = [
  "not-delete",
  "not-a-pod",
  "dry-run",
  "no-old-object",
  "no-uid",
  "not-in-simulation",
  "not-bare",
  "not-running",
  "succeeded",
  "driver-delete",
  "teardown-controller",
  "controller-manager",
  "final-phase",
  "no-user",
] as const;
export type TriageSkip = (typeof TRIAGE_SKIPS)[number];

/** live-checks.ts: the live pod, its root or its namespace contradicts the review. */
export const LIVE_SKIPS = [
  "root-gone",
  "not-in-simulation",
  "namespace-not-virtual",
  "pod-gone",
  "uid-mismatch",
  "live-pod-not-interrupted",
  "not-bare",
  "not-owned-by-root",
  // The deletion the live pod shows is not the one the review claims: shown before a first-phase review
  // could have made it, or of another kind (an eviction for a user's delete, a plain delete for a disruption).
  "deletion-not-this-reviews",
] as const;
export type LiveSkip = (typeof LIVE_SKIPS)[number];

/** teardown.ts: the simulation around the pod is being torn down, so no clone is wanted. */
export const TEARDOWN_REASONS = [
  "simulation-over",
  "root-deleting",
  "root-gone",
  "namespace-terminating",
  "namespace-gone",
] as const;
export type TeardownReason = (typeof TEARDOWN_REASONS)[number];

/** handler.ts and reschedule.ts: what the review's own handling decided, short of a clone. */
export const HANDLER_SKIPS = [
  // Another review of the same pod already decided (this process remembers it, or is deciding now).
  "already-handled",
  // The Simulation does not set spec.rescheduleInterruptedBarePods.
  "rescheduling-off",
  // An API error that retries did not cure; the delete goes ahead.
  "error",
  // The decision was not ready by the answer deadline; the delete goes ahead.
  "answer-deadline",
  // The live pod never showed a deletion: nothing backs the review (deletion-wait.ts).
  "no-deletion-seen",
  // Too many clones already wait for their pods to show the deletion.
  "pending-full",
  // A clone for this pod already waits for its deletion; this review joins it.
  "deletion-pending",
  // The clone's name is held by a clone of another pod (an earlier pod of the same name): none is made.
  "clone-name-taken",
  // This pod's clone was made, then itself interrupted: its own clone (the next name) carries the line on.
  "clone-replaced",
  // The body is not an AdmissionReview the handler can read.
  "malformed",
] as const;
export type HandlerSkip = (typeof HANDLER_SKIPS)[number];

/** One per review: why no clone was made, or "cloned" (created now, or found already created). */
export type RescheduleOutcome = TriageSkip | LiveSkip | TeardownReason | HandlerSkip | "cloned";

/** Every outcome once, in the order of the request path. */
export const RESCHEDULE_OUTCOMES: readonly RescheduleOutcome[] = [
  ...new Set<RescheduleOutcome>([
    ...TRIAGE_SKIPS,
    ...LIVE_SKIPS,
    ...TEARDOWN_REASONS,
    ...HANDLER_SKIPS,
    "cloned",
  ]),
];
