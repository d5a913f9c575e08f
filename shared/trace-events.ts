// A trace's events without their bodies: how many there are, how many objects they apply and delete, and
// the time span. The events are most of a trace's bytes (every object applied or deleted, in full), and
// mutate-create never reads them: skipping them keeps its start fast and its memory small. The bytes are
// still walked under the decoder's limits, so a file is refused for the same msgpack faults either way.

import type { MsgpackCursor } from "./strict-msgpack.js";
import { describe, safeInteger } from "./trace-values.js";

export interface EventsSummary {
  count: number;
  appliedObjects: number;
  deletedObjects: number;
  /** First and last event time (Unix seconds), null for a trace without events. */
  startTs: number | null;
  endTs: number | null;
}

/**
 * What scanning found. A wrong shape is kept, not thrown, so that the trace reader reports problems in the
 * same order whether it decoded the events or skipped them (a wrong version first, then the events).
 */
export class EventsScan {
  constructor(
    readonly summary: EventsSummary,
    /** "<path>: <problem>" for the first event of the wrong shape. */
    readonly problem?: string,
  ) {}
}

/** Reads the events array at the cursor, skipping every object in it. Throws only MsgpackError. */
export function scanEvents(cursor: MsgpackCursor, depth: number): EventsScan {
  const summary: EventsSummary = {
    count: 0,
    appliedObjects: 0,
    deletedObjects: 0,
    startTs: null,
    endTs: null,
  };
  const count = cursor.arrayHeader(depth);
  if (count < 0)
    return new EventsScan(summary, `events: expected an array, got ${describe(cursor.value(depth))}`);
  summary.count = count;
  let problem: string | undefined;
  for (let i = 0; i < count; i++) {
    const found = scanEvent(cursor, depth + 1, summary, i);
    problem ??= found;
  }
  return new EventsScan(summary, problem);
}

/** One event: { ts, applied_objs: [map], deleted_objs: [map] }. Returns the problem, if any. */
function scanEvent(
  cursor: MsgpackCursor,
  depth: number,
  summary: EventsSummary,
  i: number,
): string | undefined {
  const path = `events[${i}]`;
  const fields = cursor.mapHeader(depth);
  if (fields < 0) return `${path}: expected a map, got ${describe(cursor.value(depth))}`;
  let problem: string | undefined;
  const missing = new Set<string>(REQUIRED);
  for (let f = 0; f < fields; f++) {
    const key = cursor.value(depth + 1);
    if (typeof key === "string") missing.delete(key);
    if (key === "ts") problem ??= readTs(cursor.value(depth + 1), summary, i);
    else if (key === "applied_objs" || key === "deleted_objs") {
      const objects = skipObjects(cursor, depth + 1, `${path}.${key}`);
      if (typeof objects === "string") problem ??= objects;
      else if (key === "applied_objs") summary.appliedObjects += objects;
      else summary.deletedObjects += objects;
    } else cursor.skip(depth + 1);
  }
  for (const name of missing) problem ??= `${path}: missing field "${name}"`;
  return problem;
}

const REQUIRED = ["ts", "applied_objs", "deleted_objs"] as const;

function readTs(raw: unknown, summary: EventsSummary, i: number): string | undefined {
  const ts = safeInteger(raw);
  if (ts === undefined) return `events[${i}].ts: expected an integer, got ${describe(raw)}`;
  if (i === 0) summary.startTs = ts;
  summary.endTs = ts;
  return undefined;
}

/** An array of maps, skipped: its length, or the problem. */
function skipObjects(cursor: MsgpackCursor, depth: number, path: string): number | string {
  const count = cursor.arrayHeader(depth);
  if (count < 0) return `${path}: expected an array, got ${describe(cursor.value(depth))}`;
  let problem: string | undefined;
  for (let i = 0; i < count; i++) {
    const entries = cursor.mapHeader(depth + 1);
    if (entries < 0) problem ??= `${path}[${i}]: expected a map, got ${describe(cursor.value(depth + 1))}`;
    for (let k = 0; k < 2 * entries; k++) cursor.skip(depth + 2);
  }
  return problem ?? count;
}
