// A trace's events without their bodies: how many there are, how many objects they apply and delete, and
// the time span. The events are most of a trace's bytes (every object applied or deleted, in full), and
// mutate-create never reads them: skipping them keeps its start fast and its memory small. The bytes are
// still walked under the decoder's limits, so a file is refused for the same msgpack faults either way.

import type { KubeObject } from "../kube/index.js";
import { TraceError } from "./error.js";
import type { EventsSummary, TraceEvent } from "./model.js";
import type { MsgpackCursor } from "./strict-msgpack.js";
import { describe, safeInteger } from "./values.js";

/** Reads one object of an event at the cursor (or throws TraceError naming `path`). */
export type ObjectReader = (cursor: MsgpackCursor, depth: number, path: string) => KubeObject;

/**
 * Reads the events array at the cursor, skipping every object in it. Throws MsgpackError for bytes that are
 * not msgpack, TraceError for events of the wrong shape: { ts, applied_objs: [map], deleted_objs: [map] }.
 */
export function scanEvents(cursor: MsgpackCursor, depth: number): EventsSummary {
  return walkEvents(cursor, depth).summary;
}

/** As scanEvents, keeping every event, its objects read by `readObject`. */
export function readEvents(readObject: ObjectReader): (cursor: MsgpackCursor, depth: number) => TraceEvent[] {
  return (cursor, depth) => walkEvents(cursor, depth, readObject).events;
}

interface Walk {
  summary: EventsSummary;
  /** Empty unless objects are read. */
  events: TraceEvent[];
  readObject: ObjectReader | undefined;
}

function walkEvents(cursor: MsgpackCursor, depth: number, readObject?: ObjectReader): Walk {
  const summary: EventsSummary = {
    count: 0,
    appliedObjects: 0,
    deletedObjects: 0,
    startTs: null,
    endTs: null,
  };
  const walk: Walk = { summary, events: [], readObject };
  const count = cursor.arrayHeader(depth);
  if (count < 0) throw invalid("events", `expected an array, got ${describe(cursor.value(depth))}`);
  summary.count = count;
  for (let i = 0; i < count; i++) walkEvent(cursor, depth + 1, walk, i);
  return walk;
}

const REQUIRED = ["ts", "applied_objs", "deleted_objs"] as const;

function walkEvent(cursor: MsgpackCursor, depth: number, walk: Walk, i: number): void {
  const path = `events[${i}]`;
  const fields = cursor.mapHeader(depth);
  if (fields < 0) throw invalid(path, `expected a map, got ${describe(cursor.value(depth))}`);
  const event: TraceEvent = { ts: 0, appliedObjs: [], deletedObjs: [] };
  let seen = 0;
  for (let f = 0; f < fields; f++) {
    const key = cursor.value(depth + 1);
    if (key === "ts") {
      const raw = cursor.value(depth + 1);
      const ts = safeInteger(raw);
      if (ts === undefined) throw invalid(`${path}.ts`, `expected an integer, got ${describe(raw)}`);
      event.ts = ts;
      seen |= 1;
    } else if (key === "applied_objs") {
      walk.summary.appliedObjects += walkObjects(
        cursor,
        depth + 1,
        `${path}.${key}`,
        walk,
        event.appliedObjs,
      );
      seen |= 2;
    } else if (key === "deleted_objs") {
      walk.summary.deletedObjects += walkObjects(
        cursor,
        depth + 1,
        `${path}.${key}`,
        walk,
        event.deletedObjs,
      );
      seen |= 4;
    } else cursor.skip(depth + 1);
  }
  REQUIRED.forEach((name, bit) => {
    if (!(seen & (1 << bit))) throw invalid(path, `missing field "${name}"`);
  });
  if (i === 0) walk.summary.startTs = event.ts;
  walk.summary.endTs = event.ts;
  if (walk.readObject) walk.events.push(event);
}

/** An array of maps (Kubernetes objects), read into `objects` or skipped: how many. */
function walkObjects(
  cursor: MsgpackCursor,
  depth: number,
  path: string,
  walk: Walk,
  objects: KubeObject[],
): number {
  const count = cursor.arrayHeader(depth);
  if (count < 0) throw invalid(path, `expected an array, got ${describe(cursor.value(depth))}`);
  const read = walk.readObject;
  for (let i = 0; i < count; i++) {
    if (read) {
      objects.push(read(cursor, depth + 1, `${path}[${i}]`));
      continue;
    }
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
