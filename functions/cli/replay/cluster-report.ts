// What `replay --cluster local` prints: the live progress line, the table per owner, the interruptions, the
// teardown, and the counts `--json` prints last. Pure: results in, text out.

import type { ClusterReplayResult, Progress } from "./cluster-runner.js";
import { LIFECYCLE_TOLERANCE_S, type OwnerRow, ownerRows } from "./lifecycle-match.js";

export function progressLine(p: Progress): string {
  return `events ${p.applied}/${p.total}  pods running ${p.running}  completed ${p.completed}  clones ${p.clones}`;
}

export function clusterCounts(r: ClusterReplayResult) {
  const pods = r.pods;
  return {
    podsCreated: pods.length,
    podsMutated: pods.filter((p) => p.mutated).length,
    lifecyclesExpected: r.verdicts.length,
    lifecyclesMatched: r.verdicts.filter((v) => v.matched).length,
    interruptions: r.interruptions.filter((i) => i.pod !== undefined).length,
    clones: pods.filter((p) => p.clone).length,
    teardownReviews: r.teardown.reviews,
    teardownClones: r.teardown.clones,
    errors: r.errors.length,
    reviewLatencyP50Ms: r.teardown.latencyMs?.p50 ?? null,
    reviewLatencyP99Ms: r.teardown.latencyMs?.p99 ?? null,
    sequenceHandedOut: r.sequences?.handedOut ?? null,
    sequenceGaps: r.sequences ? r.sequences.storeGaps + r.sequences.withoutPod : null,
    sequenceDuplicates: r.sequences?.duplicates ?? null,
    runMs: r.ms,
  };
}

export function clusterReplayOk(r: ClusterReplayResult): boolean {
  const c = clusterCounts(r);
  return c.lifecyclesMatched === c.lifecyclesExpected && c.errors === 0 && c.teardownClones === 0;
}

const COLUMNS: [keyof OwnerRow, string][] = [
  ["podsCreated", "pods"],
  ["podsMutated", "mutated"],
  ["lifecyclesExpected", "lifecycles"],
  ["lifecyclesMatched", "matched"],
  ["interruptions", "interrupted"],
  ["clones", "clones"],
];

function table(rows: readonly OwnerRow[]): string[] {
  const width = Math.max(5, ...rows.map((r) => r.owner.length));
  const head = ["owner".padEnd(width), ...COLUMNS.map(([, h]) => h.padStart(h.length))].join("  ");
  const body = rows.map((r) =>
    [r.owner.padEnd(width), ...COLUMNS.map(([k, h]) => String(r[k]).padStart(h.length))].join("  "),
  );
  return [head, ...body];
}

export function clusterReport(r: ClusterReplayResult, speed: number): string[] {
  const interrupted = r.interruptions.flatMap((i) => (i.pod ? [i.pod] : []));
  const c = clusterCounts(r);
  const lines = [...table(ownerRows(r.pods, r.verdicts, interrupted)), ""];
  lines.push(
    `Lifecycles: ${c.lifecyclesMatched}/${c.lifecyclesExpected} matched (Finished(start, end): completion (end - start) / ${speed} s after the pod became Ready, within ±${LIFECYCLE_TOLERANCE_S} s; Running: still running).`,
  );
  for (const v of r.verdicts.filter((x) => !x.matched))
    lines.push(`  MISSED ${v.expected.owner} hash ${v.expected.hash} #${v.expected.sequence}: ${v.detail}`);
  for (const i of r.interruptions)
    lines.push(
      i.pod
        ? `Interruption ${i.kind}: pod ${i.pod} on ${i.node} -> ${i.clone ?? "no clone"}`
        : `Interruption ${i.kind}: ${i.note}`,
    );
  const latency = r.teardown.latencyMs
    ? `review latency p50 ${r.teardown.latencyMs.p50} ms, p99 ${r.teardown.latencyMs.p99} ms`
    : "review latency n/a (no review recorded: none in teardown, or the functions run in another process)";
  lines.push(
    `Teardown (${(r.teardown.ms / 1000).toFixed(1)} s): ${c.teardownReviews} DELETE review(s) answered, ${c.teardownClones} clone(s), ${latency}.`,
  );
  const q = r.sequences;
  lines.push(
    q
      ? `Sequence numbers read back from the store: ${q.hashes} hash(es), ${q.handedOut} handed out, ${q.storeGaps + q.withoutPod} gap(s) (${q.storeGaps} never handed out, ${q.withoutPod} without a pod), ${q.duplicates} duplicate(s).`
      : "Sequence numbers: the store was not read back.",
  );
  for (const d of q?.details ?? []) lines.push(`  ${d}`);
  for (const e of r.errors) lines.push(`ERROR ${e}`);
  lines.push(`Run time ${(r.ms / 1000).toFixed(1)} s: ${clusterReplayOk(r) ? "OK" : "UNEXPECTED"}`);
  return lines;
}
