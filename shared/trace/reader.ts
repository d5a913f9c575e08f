// Reader for SimKube's .sktrace files (trace format version 2, written by SimKube >= 2.0).
//
// The file is one msgpack map (serde's named encoding of sk-core's `Trace`):
//   version         u16, must be 2
//   config          { trackedObjects: { "<gvk>": { podSpecTemplatePaths?, trackLifecycle?, skipOwned? } } }
//   events          [{ ts, applied_objs: [object], deleted_objs: [object] }]
//   index           { "<gvk>": { "<ns>/<name>": u64 hash } }
//   pod_lifecycles  { [<owner gvk>, "<ns>/<name>"]: { <u64 pod spec hash>: [lifecycle] } }
// u64 hashes become decimal strings here (a JS number would lose precision above 2^53).
//
// parseTrace is pure; loadTrace reads the bytes through shared/trace/source.ts (the I/O edge) and parses them.
// parseTraceForLookups and loadTraceForLookups read everything but the events' bodies (counted and skipped,
// see shared/trace/events.ts): what the functions need, at a fraction of the time and memory.
// A trace is untrusted input: it is decoded by a strict msgpack reader with limits on depth, counts and
// decoded size (shared/trace/strict-msgpack.ts), and reading it is capped in bytes and in time.

import { errorMessage } from "../base/index.js";
import type { KubeObject } from "../kube/index.js";
import { TraceError } from "./error.js";
import { readEvents, scanEvents } from "./events.js";
import { canonicalGvk } from "./gvk.js";
import { describeLocation } from "./location-text.js";
import {
  CURRENT_TRACE_FORMAT_VERSION,
  type EventsSummary,
  type PodLifecycle,
  type Trace,
  type TraceEvent,
  type TraceForLookups,
  type TracerConfig,
  type TraceTables,
  type TrackedObjectConfig,
} from "./model.js";
import {
  DEFAULT_MAX_TRACE_BYTES,
  DEFAULT_TRACE_TIMEOUT_MS,
  type LoadTraceOptions,
  readTraceBytes,
  readTraceIfChanged,
} from "./source.js";
import { MsgpackCursor, MsgpackError, NotJsonValue } from "./strict-msgpack.js";
import { lifecycleKey } from "./tables.js";
import { describe, safeInteger } from "./values.js";

// ---------------------------------------------------------------------------------------------------------
// Decoding

// Real traces nest 12 to 15 levels (trace -> event -> object -> managedFields); 128 leaves room for deep
// custom resources while keeping recursion far from the stack limit.
export const TRACE_MAX_DEPTH = 128;
// SimKube's example traces decode to 7.8x to 10.3x their size by the decoder's estimate (which runs ~25%
// above the real heap); 32x leaves room for traces of small numbers and short keys but stops a file from
// expanding beyond that (a file of empty maps would reach ~190x).
export const TRACE_DECODED_SIZE_FACTOR = 32;
const TRACE_DECODED_SIZE_FLOOR = 1024 * 1024;

const U64_MAX = 2n ** 64n - 1n;

/**
 * Decodes and validates a version-2 trace. Throws TraceError naming the first problem found. The bytes
 * must be plain msgpack (no extension types, so no back-references), nested at most TRACE_MAX_DEPTH
 * deep, and decode to at most 1 MiB + TRACE_DECODED_SIZE_FACTOR x their size.
 */
export function parseTrace(bytes: Uint8Array): Trace {
  const top = decodeTop(bytes, readEvents(readKubeObject));
  return safely(() => {
    const { version, map } = readHeader(top);
    const config = readConfig(section(map, "config"));
    const events = section(map, "events") as TraceEvent[];
    return { version, config, events, ...readTables(map) };
  });
}

/**
 * As parseTrace, but the events are only counted and their time span taken, never built: what
 * mutate-create and `trace inspect` need. The limits are the same, and applied to the events too.
 */
export function parseTraceForLookups(bytes: Uint8Array): TraceForLookups {
  const top = decodeTop(bytes, scanEvents);
  return safely(() => {
    const { version, map } = readHeader(top);
    const config = readConfig(section(map, "config"));
    const eventSummary = section(map, "events") as EventsSummary;
    return { version, config, eventSummary, ...readTables(map) };
  });
}

type SectionReader = (cursor: MsgpackCursor, depth: number) => unknown;

/**
 * Decodes the top-level value under the trace limits. When it is a map, "events" is read by `eventsReader`
 * (decoded, or scanned) and the index and lifecycles straight into their tables. Throws TraceError.
 */
function decodeTop(bytes: Uint8Array, eventsReader: SectionReader): unknown {
  if (bytes.length === 0) throw new TraceError("invalid trace: the file is empty");
  const cursor = new MsgpackCursor(bytes, {
    maxDepth: TRACE_MAX_DEPTH,
    maxDecodedBytes: TRACE_DECODED_SIZE_FLOOR + TRACE_DECODED_SIZE_FACTOR * bytes.length,
  });
  const readers = new Map<unknown, SectionReader>([
    ["events", eventsReader],
    ["index", readIndexAt],
    ["pod_lifecycles", readPodLifecyclesAt],
  ]);
  try {
    const entries = cursor.mapHeader(1);
    if (entries < 0) {
      const top = cursor.value(1);
      cursor.expectEnd();
      return top;
    }
    const map = new Map<unknown, unknown>();
    for (let i = 0; i < entries; i++) {
      const key = cursor.value(2);
      const read = readers.get(key);
      map.set(key, read ? readSection(cursor, read) : cursor.value(2));
    }
    cursor.expectEnd();
    return map;
  } catch (err) {
    if (err instanceof TraceError) throw err;
    const what = err instanceof MsgpackError ? "not readable msgpack: " : ""; // else a safety net
    throw new TraceError(`invalid trace: ${what}${errorMessage(err)}`, { cause: err });
  }
}

/** A section of the wrong shape: its error is thrown when the section is used, after the version check. */
class BadSection {
  constructor(readonly error: TraceError) {}
}

function readSection(cursor: MsgpackCursor, read: SectionReader): unknown {
  const mark = cursor.mark();
  try {
    return read(cursor, 2);
  } catch (err) {
    if (!(err instanceof TraceError)) throw err;
    // The rest of the file must still be plain msgpack within the limits, as when it is decoded first.
    cursor.rewind(mark);
    cursor.skip(2);
    return new BadSection(err);
  }
}

function section(map: Map<unknown, unknown>, name: string): unknown {
  const value = field(map, name, "trace");
  if (value instanceof BadSection) throw value.error;
  return value;
}

function safely<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof TraceError) throw err;
    // A safety net: still a TraceError, never a bare crash.
    throw new TraceError(`invalid trace: ${errorMessage(err)}`, { cause: err });
  }
}

/** The top-level map and its version, which must be the one this reader knows. */
function readHeader(raw: unknown): { version: number; map: Map<unknown, unknown> } {
  if (Array.isArray(raw) && raw.length === 4) {
    throw new TraceError(
      "unsupported trace format: this looks like a pre-version-2 trace (SimKube <= 1.1.1 wrote a 4-element " +
        `array); this function reads version ${CURRENT_TRACE_FORMAT_VERSION} (SimKube >= 2.0)`,
    );
  }
  const map = asMap(raw, "trace");
  if (!map.has("version")) {
    throw new TraceError(
      `invalid trace: missing field "version" (traces older than format ${CURRENT_TRACE_FORMAT_VERSION} ` +
        "have none; this function reads traces written by SimKube >= 2.0)",
    );
  }
  const version = asInteger(map.get("version"), "version");
  if (version !== CURRENT_TRACE_FORMAT_VERSION) {
    throw new TraceError(
      `unsupported trace format version ${version}: this function reads version ` +
        `${CURRENT_TRACE_FORMAT_VERSION} (SimKube >= 2.0)`,
    );
  }
  return { version, map };
}

/** Built by readIndexAt and readPodLifecyclesAt while decoding. */
function readTables(map: Map<unknown, unknown>): TraceTables {
  return {
    index: section(map, "index") as TraceTables["index"],
    podLifecycles: section(map, "pod_lifecycles") as TraceTables["podLifecycles"],
  };
}

function readConfig(raw: unknown): TracerConfig {
  const config = asMap(raw, "config");
  const tracked = asMap(field(config, "trackedObjects", "config"), "config.trackedObjects");
  const entries: Array<[string, TrackedObjectConfig]> = [];
  for (const [rawGvk, rawObj] of tracked) {
    const gvk = readGvk(rawGvk, "config.trackedObjects key");
    const path = `config.trackedObjects["${gvk}"]`;
    const obj = asMap(rawObj, path);
    const entry: TrackedObjectConfig = {
      trackLifecycle: optional(obj, "trackLifecycle", path, asBoolean) ?? false,
      skipOwned: optional(obj, "skipOwned", path, asBoolean) ?? false,
    };
    const paths = optional(obj, "podSpecTemplatePaths", path, (v, p) =>
      asArray(v, p).map((s, i) => asString(s, `${p}[${i}]`)),
    );
    // The deprecated single-path field counts only when the list is absent or empty, as in SimKube.
    const legacy = optional(obj, "podSpecTemplatePath", path, asString);
    if (paths && paths.length > 0) entry.podSpecTemplatePaths = paths;
    else if (legacy !== undefined) entry.podSpecTemplatePaths = [legacy];
    else if (paths) entry.podSpecTemplatePaths = paths;
    entries.push([gvk, entry]);
  }
  return { trackedObjects: Object.fromEntries(entries) };
}

/** One object of an event, straight from the bytes into plain JSON (see MsgpackCursor.json). */
function readKubeObject(c: MsgpackCursor, depth: number, path: string): KubeObject {
  const mark = c.mark();
  if (c.mapHeader(depth) < 0) throw invalid(path, `expected a map, got ${describe(c.value(depth))}`);
  c.rewind(mark);
  try {
    return c.json(depth) as KubeObject;
  } catch (err) {
    if (!(err instanceof NotJsonValue)) throw err;
    // Not JSON somewhere inside: decode it again as msgpack values, to name where and why.
    c.rewind(mark);
    return toJsonValue(c.value(depth), path) as KubeObject;
  }
}

// The index and the lifecycles are read straight from the bytes into the lookup tables: building the
// decoder's Maps first and copying them doubled the peak memory of a big trace and tripled its GC time.

function readIndexAt(c: MsgpackCursor, depth: number): TraceTables["index"] {
  const index = new Map<string, Map<string, string>>();
  const kinds = mapAt(c, depth, "index");
  for (let k = 0; k < kinds; k++) {
    const gvk = readGvk(c.value(depth + 1), "index key");
    const path = `index["${gvk}"]`;
    const names = new Map<string, string>();
    const count = mapAt(c, depth + 1, path);
    for (let i = 0; i < count; i++) {
      const nsName = asString(c.value(depth + 2), () => `${path} key`);
      names.set(
        nsName,
        asU64String(c.value(depth + 2), () => `${path}["${nsName}"]`),
      );
    }
    index.set(gvk, names);
  }
  return index;
}

function readPodLifecyclesAt(c: MsgpackCursor, depth: number): TraceTables["podLifecycles"] {
  const result = new Map<string, Map<string, PodLifecycle[]>>();
  const gvks = new Map<unknown, string>(); // a trace has few distinct GVKs and many owners
  const owners = mapAt(c, depth, "pod_lifecycles");
  for (let o = 0; o < owners; o++) {
    const key = readOwnerKey(c, depth + 1, gvks);
    const path = `pod_lifecycles[${key}]`;
    const byHash = new Map<string, PodLifecycle[]>();
    const hashes = mapAt(c, depth + 1, path);
    for (let h = 0; h < hashes; h++) {
      const hash = asU64String(c.value(depth + 2), () => `${path} key`);
      const listPath = () => `${path}[${hash}]`;
      const count = arrayAt(c, depth + 2, listPath);
      const lifecycles = new Array<PodLifecycle>(count);
      for (let i = 0; i < count; i++)
        lifecycles[i] = readLifecycle(c, depth + 3, () => `${listPath()}[${i}]`);
      byHash.set(hash, lifecycles);
    }
    result.set(key, byHash);
  }
  return result;
}

/** A [gvk, "ns/name"] key of pod_lifecycles, as a lifecycleKey. */
function readOwnerKey(c: MsgpackCursor, depth: number, gvks: Map<unknown, string>): string {
  const items = c.arrayHeader(depth);
  if (items !== 2) {
    const got = items < 0 ? describe(c.value(depth)) : `an array of ${items}`;
    throw invalid("pod_lifecycles key", `expected a [gvk, "ns/name"] pair, got ${got}`);
  }
  const rawGvk = c.value(depth + 1);
  let gvk = gvks.get(rawGvk);
  if (gvk === undefined) {
    gvk = readGvk(rawGvk, "pod_lifecycles key[0]");
    gvks.set(rawGvk, gvk);
  }
  return lifecycleKey(gvk, asString(c.value(depth + 1), "pod_lifecycles key[1]"));
}

// serde's externally tagged enum: "Empty", { Running: start }, { Finished: [start, end] }.
function readLifecycle(c: MsgpackCursor, depth: number, path: () => string): PodLifecycle {
  const entries = c.mapHeader(depth);
  if (entries !== 1) {
    const raw = entries < 0 ? c.value(depth) : undefined;
    if (raw === "Empty") return { kind: "Empty" };
    const got = entries < 0 ? describe(raw) : `a map of ${entries}`;
    throw invalid(path, `expected "Empty", {Running: start} or {Finished: [start, end]}, got ${got}`);
  }
  const variant = c.value(depth + 1);
  switch (variant) {
    case "Running":
      return { kind: "Running", start: asInteger(c.value(depth + 1), () => `${path()}.Running`) };
    case "Finished": {
      const items = arrayAt(c, depth + 1, () => `${path()}.Finished`);
      if (items !== 2) {
        throw invalid(() => `${path()}.Finished`, `expected [start, end], got ${items} items`);
      }
      const start = asInteger(c.value(depth + 2), () => `${path()}.Finished[0]`);
      return { kind: "Finished", start, end: asInteger(c.value(depth + 2), () => `${path()}.Finished[1]`) };
    }
    case "Empty":
      c.skip(depth + 1);
      return { kind: "Empty" };
    default:
      throw invalid(path, `unknown lifecycle variant ${describe(variant)}`);
  }
}

/** The entry count of the map at the cursor; anything else is named in a TraceError. */
function mapAt(c: MsgpackCursor, depth: number, path: Path): number {
  const count = c.mapHeader(depth);
  if (count < 0) throw invalid(path, `expected a map, got ${describe(c.value(depth))}`);
  return count;
}

function arrayAt(c: MsgpackCursor, depth: number, path: Path): number {
  const count = c.arrayHeader(depth);
  if (count < 0) throw invalid(path, `expected an array, got ${describe(c.value(depth))}`);
  return count;
}

// --- small typed readers; each names the path of what is wrong ---

/** Where a value sits in the trace; a function where building the string for every item would cost. */
type Path = string | (() => string);

function invalid(path: Path, problem: string): TraceError {
  return new TraceError(`invalid trace: ${typeof path === "string" ? path : path()}: ${problem}`);
}

function field(map: Map<unknown, unknown>, name: string, path: string): unknown {
  if (!map.has(name)) throw invalid(path, `missing field "${name}"`);
  return map.get(name);
}

function optional<T>(
  map: Map<unknown, unknown>,
  name: string,
  path: string,
  read: (v: unknown, p: string) => T,
): T | undefined {
  const v = map.get(name);
  return v === undefined || v === null ? undefined : read(v, `${path}.${name}`);
}

function asMap(v: unknown, path: Path): Map<unknown, unknown> {
  if (v instanceof Map) return v;
  throw invalid(path, `expected a map, got ${describe(v)}`);
}

function asArray(v: unknown, path: Path): unknown[] {
  if (Array.isArray(v)) return v;
  throw invalid(path, `expected an array, got ${describe(v)}`);
}

function asString(v: unknown, path: Path): string {
  if (typeof v === "string") return v;
  throw invalid(path, `expected a string, got ${describe(v)}`);
}

function asBoolean(v: unknown, path: Path): boolean {
  if (typeof v === "boolean") return v;
  throw invalid(path, `expected a boolean, got ${describe(v)}`);
}

/** i64 timestamps and the like: exact integers within JS's safe range. */
function asInteger(v: unknown, path: Path): number {
  const n = safeInteger(v);
  if (n !== undefined) return n;
  throw invalid(path, `expected an integer, got ${describe(v)}`);
}

/** u64 hashes as decimal strings, never through a JS number above 2^53. */
function asU64String(v: unknown, path: Path): string {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === "bigint" && v >= 0n && v <= U64_MAX) return v.toString();
  throw invalid(path, `expected an unsigned 64-bit integer, got ${describe(v)}`);
}

function readGvk(v: unknown, path: string): string {
  const s = asString(v, path);
  try {
    return canonicalGvk(s);
  } catch (err) {
    throw invalid(path, errorMessage(err));
  }
}

/**
 * A decoded Kubernetes object as plain JSON: Maps become objects (Object.fromEntries, so a "__proto__" key
 * stays an ordinary property). 64-bit integers beyond 2^53 become decimal strings rather than lose digits.
 */
function toJsonValue(v: unknown, path: string): unknown {
  try {
    return jsonValue(v);
  } catch (err) {
    if (err instanceof BadJsonValue) throw invalid(path + err.segments.reverse().join(""), err.problem);
    throw err;
  }
}

// Objects are most of a trace's bytes: build the error path only when something is wrong.
class BadJsonValue {
  readonly segments: string[] = [];
  constructor(readonly problem: string) {}
}

function jsonValue(v: unknown): unknown {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = withSegment(i, v[i]);
    return out;
  }
  if (v instanceof Map) {
    const entries: Array<[string, unknown]> = [];
    for (const [k, item] of v) {
      if (typeof k !== "string") throw new BadJsonValue(`expected string keys, got ${describe(k)}`);
      entries.push([k, withSegment(k, item)]);
    }
    return Object.fromEntries(entries);
  }
  throw new BadJsonValue(`expected a JSON value, got ${describe(v)}`);
}

function withSegment(key: string | number, v: unknown): unknown {
  // Scalars (most values) need no frame of their own.
  if (v === null || typeof v === "string" || typeof v === "boolean" || typeof v === "number") {
    if (typeof v !== "number" || Number.isFinite(v)) return v;
  }
  try {
    return jsonValue(v);
  } catch (err) {
    if (err instanceof BadJsonValue) err.segments.push(typeof key === "number" ? `[${key}]` : `.${key}`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Loading

/**
 * Reads and parses a whole trace (events included, as the replay needs) from any location
 * shared/trace/source.ts reads: a path, file://, http(s)://, s3://, gs:// or azure://.
 */
export function loadTrace(location: string, options: LoadTraceOptions = {}): Promise<Trace> {
  return loadAndParse(location, options, parseTrace);
}

/**
 * As loadTrace, but without the events' bodies (parseTraceForLookups): what mutate-create and
 * `trace inspect` need, read in a fraction of the time and memory.
 */
export function loadTraceForLookups(
  location: string,
  options: LoadTraceOptions = {},
): Promise<TraceForLookups> {
  return loadAndParse(location, options, parseTraceForLookups);
}

/** A trace loaded for lookups, with what the cache keeps about it. */
export interface LoadedTrace {
  trace: TraceTables;
  /** The source's version of the bytes (shared/trace/source.ts readTraceIfChanged), when it tells one. */
  version?: string;
  /** The file's size: what the cache counts the trace as. */
  bytes: number;
}

/**
 * As loadTraceForLookups, but undefined when the trace is still at version `known`, which is then not read
 * again (for a file: not even opened).
 */
export async function loadTraceForLookupsIfChanged(
  location: string,
  options: LoadTraceOptions = {},
  known?: string,
): Promise<LoadedTrace | undefined> {
  const read = await readTraceIfChanged(location, limitsOf(options), known);
  if (read === undefined) return undefined;
  const trace = parseNamed(location, read.bytes, parseTraceForLookups);
  return { trace, bytes: read.bytes.byteLength, ...(read.version ? { version: read.version } : {}) };
}

function limitsOf(options: LoadTraceOptions) {
  return {
    timeoutMs: options.timeoutMs ?? DEFAULT_TRACE_TIMEOUT_MS,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_TRACE_BYTES,
    ...(options.allowRedirect ? { allowRedirect: options.allowRedirect } : {}),
  };
}

/** Reads the bytes, parses them, and names the location in any TraceError the parser throws. */
async function loadAndParse<T>(
  location: string,
  options: LoadTraceOptions,
  parse: (bytes: Uint8Array) => T,
): Promise<T> {
  return parseNamed(location, await readTraceBytes(location, limitsOf(options)), parse);
}

function parseNamed<T>(location: string, bytes: Uint8Array, parse: (bytes: Uint8Array) => T): T {
  try {
    return parse(bytes);
  } catch (err) {
    if (err instanceof TraceError) {
      throw new TraceError(`${describeLocation(location)}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}
