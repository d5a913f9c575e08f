// mutate-create's counters, served at GET /stats in the same shape as reschedule-delete's: reviews, one
// decision per review by reason, then what this function has of its own (lifecycle outcomes of Running pods).

import type { LifecycleOutcome } from "./lifecycle-plan.js";
import type { DenyReason, PinReason, SkipReason } from "./triage.js";

/** How a review ended: mutated in full, pinned only, skipped or denied (with why). */
export type MutateDecision =
  | "mutated"
  | `pinned-${PinReason}`
  | SkipReason
  | DenyReason
  | "malformed"
  | "error";

/** What a Running, not yet complete simulation pod got: a completion time, or why not. */
export type LifecycleResult =
  | "completion-set"
  | "labels-forbidden"
  | "no-trace"
  | "trace-refused"
  | "trace-unreadable"
  | Extract<LifecycleOutcome, { found: false }>["reason"];

const LIFECYCLE_RESULTS: readonly LifecycleResult[] = [
  "completion-set",
  "labels-forbidden",
  "no-trace",
  "trace-refused",
  "trace-unreadable",
  "not-in-trace",
  "no-finished-lifecycle",
  "no-original-namespace",
];

// A type, not an interface: it must be assignable to Record<string, unknown> (what GET /stats serves).
export type MutateStatsSnapshot = {
  reviews: number;
  /** One per review, only the reasons seen so far, sorted. */
  decisions: Partial<Record<MutateDecision, number>>;
  /** Every result, zero included. */
  lifecycles: Record<LifecycleResult, number>;
};

export interface MutateStats {
  review(): void;
  decision(decision: MutateDecision): void;
  lifecycle(result: LifecycleResult): void;
  snapshot(): MutateStatsSnapshot;
}

export function createMutateStats(): MutateStats {
  let reviews = 0;
  const decisions = new Map<MutateDecision, number>();
  const lifecycles = Object.fromEntries(LIFECYCLE_RESULTS.map((r) => [r, 0])) as Record<
    LifecycleResult,
    number
  >;
  return {
    review() {
      reviews++;
    },
    decision(decision) {
      decisions.set(decision, (decisions.get(decision) ?? 0) + 1);
    },
    lifecycle(result) {
      lifecycles[result]++;
    },
    snapshot() {
      return {
        reviews,
        decisions: Object.fromEntries([...decisions.entries()].sort(([a], [b]) => a.localeCompare(b))),
        lifecycles: { ...lifecycles },
      };
    },
  };
}
