// Which of the trace's pod lifecycles the real cluster reproduced. Pure: observed pods in, one row per owner out.
// A lifecycle is the trace's (owner, pod spec hash, sequence number); the pods that played it are the original
// and its clones (clones carry the original's hash and sequence).

import {
  getPodLifecycles,
  lifecycleOwners,
  type PodLifecycle,
  type Trace,
} from "../../../shared/trace/index.js";

/** Seconds a Finished lifecycle may be off: KWOK's timestamps have 1 s resolution and both ends round. */
export const LIFECYCLE_TOLERANCE_S = 2;

export interface ObservedPod {
  name: string;
  /** "Kind <original ns>/<name>" of the traced object that owns it (or the bare pod itself). */
  owner: string;
  clone: boolean;
  mutated: boolean;
  hash?: string;
  sequence?: number;
  /** Epoch seconds: Ready became True; the pod Succeeded. */
  runningAt?: number;
  succeededAt?: number;
  phase?: string;
}

export interface ExpectedLifecycle {
  owner: string;
  hash: string;
  sequence: number;
  lifecycle: PodLifecycle;
  /**
   * The owner has lifecycles under this hash only. mutate-create's lookup then uses them whatever the pod's
   * hash (shared/trace/lifecycle.ts), and the hash does differ: the traced hash is production's pod, the simulated
   * pod carries the driver's nodeSelector and toleration, which SimKube's stable hash covers.
   */
  onlyHash: boolean;
  /** Lifecycles recorded under this hash. */
  count: number;
}

export function ownerKey(kind: string, nsName: string): string {
  return `${kind} ${nsName}`;
}

/** Every Finished or Running lifecycle the trace records, in file order. */
export function expectedLifecycles(trace: Trace): ExpectedLifecycle[] {
  const out: ExpectedLifecycle[] = [];
  for (const { gvk, nsName } of lifecycleOwners(trace)) {
    const kind = gvk.slice(gvk.lastIndexOf(".") + 1);
    const byHash = getPodLifecycles(trace, gvk, nsName) ?? new Map<string, PodLifecycle[]>();
    for (const [hash, lifecycles] of byHash) {
      lifecycles.forEach((lifecycle, sequence) => {
        if (lifecycle.kind === "Empty") return;
        out.push({
          owner: ownerKey(kind, nsName),
          hash,
          sequence,
          lifecycle,
          onlyHash: byHash.size === 1,
          count: lifecycles.length,
        });
      });
    }
  }
  return out;
}

export interface LifecycleVerdict {
  expected: ExpectedLifecycle;
  matched: boolean;
  /** What was seen, for a person: "completed after 7 s (expected 7 s)". */
  detail: string;
}

/**
 * The pods that played a lifecycle, by original (the original and its clones). mutate-create takes the
 * lifecycle at (sequence number mod the number recorded), and numbers count per hash across owners.
 */
export function playedBy(e: ExpectedLifecycle, pods: readonly ObservedPod[]): ObservedPod[][] {
  const mine = pods.filter(
    (p) =>
      p.owner === e.owner &&
      p.sequence !== undefined &&
      p.sequence % e.count === e.sequence &&
      (e.onlyHash || p.hash === e.hash),
  );
  const chains = new Map<string, ObservedPod[]>();
  for (const p of mine) {
    const original = p.name.replace(/-clone-\d+$/, "");
    chains.set(original, [...(chains.get(original) ?? []), p]);
  }
  return [...chains.values()];
}

/** How one original and its clones played a Finished lifecycle: seconds from the first Ready to Succeeded. */
function tookSeconds(chain: readonly ObservedPod[]): number | undefined {
  const done = chain.find((p) => p.succeededAt !== undefined);
  const starts = chain.map((p) => p.runningAt).filter((t): t is number => t !== undefined);
  if (!done || starts.length === 0) return undefined;
  return (done.succeededAt as number) - Math.min(...starts);
}

/**
 * Finished: some original (with its clones) completed within the tolerance of the scaled run time after it
 * first became Ready; Running: a pod still runs and none completed.
 */
export function judgeLifecycle(
  e: ExpectedLifecycle,
  pods: readonly ObservedPod[],
  speed: number,
): LifecycleVerdict {
  const chains = playedBy(e, pods);
  if (chains.length === 0) return { expected: e, matched: false, detail: "no pod" };
  const all = chains.flat();
  const done = all.some((p) => p.succeededAt !== undefined);
  if (e.lifecycle.kind === "Running") {
    const running = all.some((p) => p.phase === "Running");
    const detail = done ? "completed" : running ? "running" : "not running";
    return { expected: e, matched: running && !done, detail };
  }
  if (e.lifecycle.kind !== "Finished") return { expected: e, matched: false, detail: "no lifecycle" };
  const want = Math.trunc(Math.max(0, e.lifecycle.end - e.lifecycle.start) / speed);
  const took = chains.map(tookSeconds).filter((t): t is number => t !== undefined);
  if (took.length === 0) return { expected: e, matched: false, detail: `not completed (expected ${want} s)` };
  const best = took.reduce((a, b) => (Math.abs(a - want) <= Math.abs(b - want) ? a : b));
  return {
    expected: e,
    matched: Math.abs(best - want) <= LIFECYCLE_TOLERANCE_S,
    detail: `completed after ${best} s (expected ${want} s)`,
  };
}

export interface OwnerRow {
  owner: string;
  podsCreated: number;
  podsMutated: number;
  lifecyclesExpected: number;
  lifecyclesMatched: number;
  interruptions: number;
  clones: number;
}

/** One row per owner (traced objects with pods, or with lifecycles), in first-seen order. */
export function ownerRows(
  pods: readonly ObservedPod[],
  verdicts: readonly LifecycleVerdict[],
  interruptedPods: readonly string[],
): OwnerRow[] {
  const owners = [...new Set([...pods.map((p) => p.owner), ...verdicts.map((v) => v.expected.owner)])];
  return owners.map((owner) => {
    const mine = pods.filter((p) => p.owner === owner);
    const judged = verdicts.filter((v) => v.expected.owner === owner);
    return {
      owner,
      podsCreated: mine.length,
      podsMutated: mine.filter((p) => p.mutated).length,
      lifecyclesExpected: judged.length,
      lifecyclesMatched: judged.filter((v) => v.matched).length,
      interruptions: mine.filter((p) => interruptedPods.includes(p.name)).length,
      clones: mine.filter((p) => p.clone).length,
    };
  });
}
