// A trace's events without their bodies: how many there are, how many objects they apply and delete, and
// the time span. The events are most of a trace's bytes (every object applied or deleted, in full), and
// mutate-create never reads them: skipping them keeps its start fast and its memory small. The bytes are
// still walked under the decoder's limits, so a file is refused for the same msgpack faults either way.

import type { MsgpackCursor } from "./strict-msgpack.js";
import { TraceError } from "./trace-error.js";
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
 * Reads the events array at the cursor, skipping every object in it. Throws MsgpackError for bytes that are
 * not msgpack, TraceError for events of the wrong shape: { ts, applied_objs: [map], deleted_objs: [map] }.
 */
export function scanEvents(cursor: MsgpackCursor, depth: number): EventsSummary {
  const summary: EventsSummary = {
    count: 0,
    appliedObjects: 0,
    deletedObjects: 0,
    startTs: null,
    endTs: null,
  };
  const count = cursor.arrayHeader(depth);
  if (count < 0) throw invalid("events", `expected an array, got ${describe(cursor.value(depth))}`);
  summary.count = count;
  for (let i = 0; i < count; i++) scanEvent(cursor, depth + 1, summary, i);
  return summary;
}

const REQUIRED = ["ts", "applied_objs", "deleted_objs"] as const;

function scanEvent(cursor: MsgpackCursor, depth: number, summary: EventsSummary, i: number): void {
  const path = `events[${i}]`;
  const fields = cursor.mapHeader(depth);
  if (fields < 0) throw invalid(path, `expected a map, got ${describe(cursor.value(depth))}`);
  let seen = 0;
  for (let f = 0; f < fields; f++) {
    const key = cursor.value(depth + 1);
    if (key === "ts") {
      const raw = cursor.value(depth + 1);
      const ts = safeInteger(raw);
      if (ts === undefined) throw invalid(`${path}.ts`, `expected an integer, got ${describe(raw)}`);
      if (i === 0) summary.startTs = ts;
      summary.endTs = ts;
      seen |= 1;
    } else if (key === "applied_objs") {
      summary.appliedObjects += skipObjects(cursor, depth + 1, `${path}.${key}`);
      seen |= 2;
    } else if (key === "deleted_objs") {
      summary.deletedObjects += skipObjects(cursor, depth + 1, `${path}.${key}`);
      seen |= 4;
    } else cursor.skip(depth + 1);
  }
  REQUIRED.forEach((name, bit) => {
    if (!(seen & (1 << bit))) throw invalid(path, `missing field "${name}"`);
  });
}

/** An array of maps (Kubernetes objects), skipped: how many. */
function skipObjects(cursor: MsgpackCursor, depth: number, path: string): number {
  const count = cursor.arrayHeader(depth);
  if (count < 0) throw invalid(path, `expected an array, got ${describe(cursor.value(depth))}`);
  for (let i = 0; i < count; i++) {
    const entries = cursor.mapHeader(depth + 1);
    if (entries < 0)
      throw invalid(`${path}[${i}]`, `expected a map, got ${describe(cursor.value(depth + 1))}`);
    for (let k = 0; k < 2 * entries; k++) cursor.skip(depth + 2);
  }
  return count;
}

function invalid(path: string, problem: string): TraceError {
  return new TraceError(`invalid trace: ${path}: ${problem}`);
}
