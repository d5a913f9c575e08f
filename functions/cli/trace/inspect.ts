// `simkube-fn trace inspect`: what a trace holds, as a summary (for --json) and a table. Pure.
// It needs no event bodies, so the command reads traces with parseTraceForLookups.

import {
  lifecycleOwners,
  type PodLifecycle,
  summarizeEvents,
  type Trace,
  type TraceForLookups,
  type TraceTables,
} from "../../../shared/trace/index.js";

export interface OwnerSummary {
  owner: string;
  hashes: number;
  lifecycles: number;
  finished: number;
  running: number;
  empty: number;
}

export interface TraceSummary {
  version: number;
  events: number;
  appliedObjects: number;
  deletedObjects: number;
  /** First and last event time (Unix seconds), null for a trace without events. */
  startTs: number | null;
  endTs: number | null;
  durationSeconds: number;
  trackedKinds: Array<{
    gvk: string;
    trackLifecycle: boolean;
    skipOwned: boolean;
    podSpecTemplatePaths: string[];
  }>;
  indexObjects: number;
  indexByKind: Record<string, number>;
  /** Owners with lifecycle data. */
  owners: number;
  /** (owner, pod spec hash) pairs. */
  hashes: number;
  /** Lifecycle entries in all, and by kind. */
  lifecycles: number;
  finished: number;
  running: number;
  empty: number;
}

export function summarizeTrace(trace: Trace | TraceForLookups): {
  summary: TraceSummary;
  owners: OwnerSummary[];
} {
  const events = "events" in trace ? summarizeEvents(trace.events) : trace.eventSummary;
  const { appliedObjects, deletedObjects, startTs, endTs } = events;
  const owners = ownerSummaries(trace);
  const total = (field: "hashes" | "lifecycles" | "finished" | "running" | "empty") =>
    owners.reduce((n, o) => n + o[field], 0);
  const indexByKind = Object.fromEntries([...trace.index].map(([gvk, names]) => [gvk, names.size]));
  const summary: TraceSummary = {
    version: trace.version,
    events: events.count,
    appliedObjects,
    deletedObjects,
    startTs,
    endTs,
    durationSeconds: startTs === null || endTs === null ? 0 : endTs - startTs,
    trackedKinds: Object.entries(trace.config.trackedObjects).map(([gvk, c]) => ({
      gvk,
      trackLifecycle: c.trackLifecycle,
      skipOwned: c.skipOwned,
      podSpecTemplatePaths: c.podSpecTemplatePaths ?? [],
    })),
    indexObjects: Object.values(indexByKind).reduce((n, k) => n + k, 0),
    indexByKind,
    owners: owners.length,
    hashes: total("hashes"),
    lifecycles: total("lifecycles"),
    finished: total("finished"),
    running: total("running"),
    empty: total("empty"),
  };
  return { summary, owners };
}

function ownerSummaries(trace: TraceTables): OwnerSummary[] {
  const names = lifecycleOwners(trace);
  let i = 0;
  const result: OwnerSummary[] = [];
  // lifecycleOwners lists the owners in the map's order: zip them with its values.
  for (const byHash of trace.podLifecycles.values()) {
    const owner = names[i++];
    const all: PodLifecycle[] = [...byHash.values()].flat();
    result.push({
      owner: owner ? `${owner.gvk} ${owner.nsName}` : "?",
      hashes: byHash.size,
      lifecycles: all.length,
      finished: all.filter((l) => l.kind === "Finished").length,
      running: all.filter((l) => l.kind === "Running").length,
      empty: all.filter((l) => l.kind === "Empty").length,
    });
  }
  return result;
}

/** Rows past this many owners are counted, not printed (--json has the totals). */
export const MAX_OWNER_ROWS = 50;

export function formatInspect(file: string, summary: TraceSummary, owners: OwnerSummary[]): string[] {
  const span =
    summary.startTs === null || summary.endTs === null
      ? "no events"
      : `${isoSeconds(summary.startTs)} .. ${isoSeconds(summary.endTs)} (${summary.durationSeconds} s)`;
  const lines = [
    `trace          ${file}`,
    `version        ${summary.version}`,
    `time span      ${span}`,
    `events         ${summary.events} (${summary.appliedObjects} objects applied, ${summary.deletedObjects} deleted)`,
    `tracked kinds  ${summary.trackedKinds.map(describeTracked).join(", ") || "none"}`,
    `index          ${summary.indexObjects} object(s)${describeCounts(summary.indexByKind)}`,
    `owners         ${summary.owners} with lifecycles: ${summary.lifecycles} lifecycle(s) under ${summary.hashes} pod spec hash(es); ` +
      `${summary.finished} finished, ${summary.running} running, ${summary.empty} empty`,
  ];
  if (owners.length === 0) return lines;
  const rows = [
    ["owner", "hashes", "lifecycles", "finished", "running"],
    ...owners
      .slice(0, MAX_OWNER_ROWS)
      .map((o) => [o.owner, String(o.hashes), String(o.lifecycles), String(o.finished), String(o.running)]),
  ];
  lines.push("", ...table(rows));
  if (owners.length > MAX_OWNER_ROWS) lines.push(`... and ${owners.length - MAX_OWNER_ROWS} more owner(s)`);
  return lines;
}

function describeTracked(kind: TraceSummary["trackedKinds"][number]): string {
  const flags = [kind.trackLifecycle ? "lifecycles" : "", kind.skipOwned ? "skip owned" : ""].filter(Boolean);
  return flags.length > 0 ? `${kind.gvk} (${flags.join(", ")})` : kind.gvk;
}

function describeCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts).map(([gvk, n]) => `${gvk} ${n}`);
  return parts.length > 0 ? `: ${parts.join(", ")}` : "";
}

function isoSeconds(ts: number): string {
  const date = new Date(ts * 1000);
  return Number.isNaN(date.getTime()) ? String(ts) : date.toISOString().replace(".000Z", "Z");
}

/** Columns padded to their widest cell; the first left-aligned, the rest (counts) right-aligned. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows.map((cells) =>
    cells
      .map((cell, i) => (i > 0 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}
