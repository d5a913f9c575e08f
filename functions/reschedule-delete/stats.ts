// reschedule-delete's counters, served at GET /stats (the load test and operators read them): reviews,
// one decision per review by outcome (outcomes.ts), interruptions by cause, clone outcomes, retries, clones
// waiting for their deletion.

import type { RescheduleOutcome } from "./outcomes.js";
import type { InterruptionCause } from "./plan.js";

export type CloneOutcome = "created" | "alreadyExisted" | "failed";

// A type, not an interface: it must be assignable to Record<string, unknown> (what GET /stats serves).
export type RescheduleStatsSnapshot = {
  reviews: number;
  /** One per review, by outcome (outcomes.ts); only the outcomes seen so far, sorted. */
  decisions: Partial<Record<RescheduleOutcome, number>>;
  /**
   * Reviews judged interruptions, by cause only: `deleted-by-user`, or the DisruptionTarget condition's reason
   * when Kubernetes sets it (DISRUPTION_REASONS), else `disruption-other`. Never a user name: /stats and
   * /metrics say what happened, not who did it (the log says who).
   */
  interruptions: Record<string, number>;
  clones: Record<CloneOutcome, number>;
  /** Transient API errors retried. */
  retries: number;
  /** Clones waiting now for their pod to show the deletion (their reviews' decisions are counted when it ends). */
  pendingClones: number;
};

export interface RescheduleStats {
  review(): void;
  decision(outcome: RescheduleOutcome): void;
  /** `reason`: the DisruptionTarget condition's reason (ignored for a user's delete). */
  interruption(cause: InterruptionCause, reason: string): void;
  clone(outcome: CloneOutcome): void;
  retry(): void;
  /** Where `pendingClones` is read from (the handler's registry). */
  countPendingWith(size: () => number): void;
  snapshot(): RescheduleStatsSnapshot;
}

/**
 * The DisruptionTarget reasons Kubernetes' own controllers set (and "DisruptionTarget" for a condition without
 * one). Anything else is whatever a writer of pod status chose, and is counted as `disruption-other`.
 */
export const DISRUPTION_REASONS: ReadonlySet<string> = new Set([
  "PreemptionByScheduler",
  "PreemptionByKubeScheduler",
  "DeletionByTaintManager",
  "EvictionByEvictionAPI",
  "DeletionByPodGC",
  "TerminationByKubelet",
  "DisruptionTarget",
]);

/** The key an interruption is counted under: from a fixed set, whatever the review says. */
export function interruptionKey(cause: InterruptionCause, reason: string): string {
  if (cause === "deleted-by-user") return "deleted-by-user";
  return DISRUPTION_REASONS.has(reason) ? reason : "disruption-other";
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function sorted(map: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...map.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

export function createRescheduleStats(): RescheduleStats {
  let reviews = 0;
  let retries = 0;
  let pendingSize = () => 0;
  const decisions = new Map<RescheduleOutcome, number>();
  const interruptions = new Map<string, number>();
  const clones: Record<CloneOutcome, number> = { created: 0, alreadyExisted: 0, failed: 0 };
  return {
    review() {
      reviews++;
    },
    decision(outcome) {
      decisions.set(outcome, (decisions.get(outcome) ?? 0) + 1);
    },
    interruption(cause, reason) {
      bump(interruptions, interruptionKey(cause, reason));
    },
    clone(outcome) {
      clones[outcome]++;
    },
    retry() {
      retries++;
    },
    countPendingWith(size) {
      pendingSize = size;
    },
    snapshot() {
      return {
        reviews,
        decisions: sorted(decisions),
        interruptions: sorted(interruptions),
        clones: { ...clones },
        retries,
        pendingClones: pendingSize(),
      };
    },
  };
}
