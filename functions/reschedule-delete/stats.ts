// reschedule-delete's counters, served at GET /stats (the load test and operators read them): reviews,
// one decision per review by outcome (outcomes.ts), interruptions by cause, clone outcomes, retries, clones
// waiting for their deletion.

import type { RescheduleOutcome } from "./outcomes.js";

export type CloneOutcome = "created" | "alreadyExisted" | "failed";

// A type, not an interface: it must be assignable to Record<string, unknown> (what GET /stats serves).
export type RescheduleStatsSnapshot = {
  reviews: number;
  /** One per review, by outcome (outcomes.ts); only the outcomes seen so far, sorted. */
  decisions: Partial<Record<RescheduleOutcome, number>>;
  /** Reviews judged interruptions, by DisruptionTarget reason or `user:<name>`. */
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
  interruption(detail: string): void;
  clone(outcome: CloneOutcome): void;
  retry(): void;
  /** Where `pendingClones` is read from (the handler's registry). */
  countPendingWith(size: () => number): void;
  snapshot(): RescheduleStatsSnapshot;
}

// Interruption details include usernames; keep the map bounded whatever the cluster sends.
const MAX_KEYS = 100;
const OTHER = "other";

function bump(map: Map<string, number>, key: string): void {
  const slot = map.has(key) || map.size < MAX_KEYS ? key : OTHER;
  map.set(slot, (map.get(slot) ?? 0) + 1);
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
    interruption(detail) {
      bump(interruptions, detail);
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
