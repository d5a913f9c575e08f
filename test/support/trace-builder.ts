// Synthetic .sktrace files for tests, encoded the way SimKube's rmp_serde::to_vec_named writes them:
// a map of named fields, pod_lifecycles keyed by [gvk, "ns/name"] arrays, u64 hashes as msgpack integers
// (uint64 above 2^63, so full u64 precision round-trips), lifecycles as serde's tagged enum.
//
//   const trace = buildTrace({
//     index: { "apps/v1.Deployment": ["virtual-ns/web"] },
//     podLifecycles: [{ gvk: "apps/v1.Deployment", nsName: "virtual-ns/web", hash: "42",
//                       lifecycles: [finished(0, 30)] }],
//   });

import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Packr } from "msgpackr";
import type { PodLifecycle, Trace } from "../../shared/trace/model.js";
import { parseTrace } from "../../shared/trace/reader.js";

export type HashLike = string | bigint | number;

export interface TrackedObjectSpec {
  podSpecTemplatePaths?: string[];
  trackLifecycle?: boolean;
  skipOwned?: boolean;
}

export interface EventSpec {
  ts: number;
  applied?: object[];
  deleted?: object[];
}

export interface LifecycleRowSpec {
  /** Owner GVK string as written in the file, e.g. "apps/v1.Deployment" or "v1.Pod". */
  gvk: string;
  /** Owner "namespace/name". */
  nsName: string;
  /** Pod spec hash (u64); a decimal string keeps any value exact. */
  hash: HashLike;
  lifecycles: PodLifecycle[];
}

export interface TraceSpec {
  /** Default 2. Written as given, so tests can write 1, "2" or anything else. */
  version?: unknown;
  config?: { trackedObjects?: Record<string, TrackedObjectSpec> };
  events?: EventSpec[];
  /** gvk -> "ns/name" -> object hash, or gvk -> ["ns/name", ...] (hash 0). */
  index?: Record<string, Record<string, HashLike> | string[]>;
  /** One row per (owner, hash); rows of the same owner share one map entry, as in the file. */
  podLifecycles?: LifecycleRowSpec[];
}

export const finished = (start: number, end: number): PodLifecycle => ({ kind: "Finished", start, end });
export const running = (start: number): PodLifecycle => ({ kind: "Running", start });
export const empty = (): PodLifecycle => ({ kind: "Empty" });

/** The msgpack-shaped value of a trace (Maps where the file has non-string keys), to corrupt in tests. */
export function buildTraceValue(spec: TraceSpec = {}): Map<string, unknown> {
  const trackedObjects = new Map<string, unknown>();
  for (const [gvk, obj] of Object.entries(spec.config?.trackedObjects ?? {})) {
    // serde skips false flags (skip_serializing_if), so do we.
    const entry = new Map<string, unknown>();
    if (obj.podSpecTemplatePaths) entry.set("podSpecTemplatePaths", obj.podSpecTemplatePaths);
    if (obj.trackLifecycle) entry.set("trackLifecycle", true);
    if (obj.skipOwned) entry.set("skipOwned", true);
    trackedObjects.set(gvk, entry);
  }

  const index = new Map<string, Map<string, unknown>>();
  for (const [gvk, names] of Object.entries(spec.index ?? {})) {
    const entries: Array<[string, HashLike]> = Array.isArray(names)
      ? names.map((n) => [n, 0])
      : Object.entries(names);
    index.set(gvk, new Map(entries.map(([n, h]) => [n, u64(h)])));
  }

  // Owners are keyed by [gvk, nsName] arrays; group rows by owner first (array keys compare by identity).
  const owners = new Map<string, { key: [string, string]; byHash: Map<unknown, unknown[]> }>();
  for (const row of spec.podLifecycles ?? []) {
    const id = JSON.stringify([row.gvk, row.nsName]);
    let owner = owners.get(id);
    if (!owner) {
      owner = { key: [row.gvk, row.nsName], byHash: new Map() };
      owners.set(id, owner);
    }
    owner.byHash.set(u64(row.hash), row.lifecycles.map(lifecycleValue));
  }
  const podLifecycles = new Map<unknown, unknown>([...owners.values()].map((o) => [o.key, o.byHash]));

  return new Map<string, unknown>([
    ["version", spec.version ?? 2],
    ["config", new Map([["trackedObjects", trackedObjects]])],
    [
      "events",
      (spec.events ?? []).map(
        (e) =>
          new Map<string, unknown>([
            ["ts", e.ts],
            ["applied_objs", e.applied ?? []],
            ["deleted_objs", e.deleted ?? []],
          ]),
      ),
    ],
    ["index", index],
    ["pod_lifecycles", podLifecycles],
  ]);
}

export function buildTraceBytes(spec: TraceSpec = {}): Uint8Array {
  return encodeMsgpack(buildTraceValue(spec));
}

/** Encoded and read back through the real reader. */
export function buildTrace(spec: TraceSpec = {}): Trace {
  return parseTrace(buildTraceBytes(spec));
}

/** A trace with these owners in the index and their lifecycles: the usual setup for lifecycle tests. */
export function ownersTraceSpec(
  owners: Array<{ gvk: string; nsName: string; hash?: HashLike; lifecycles?: PodLifecycle[] }>,
): TraceSpec {
  const index: Record<string, Record<string, HashLike>> = {};
  const podLifecycles: LifecycleRowSpec[] = [];
  for (const o of owners) {
    const names = index[o.gvk] ?? {};
    names[o.nsName] = 0;
    index[o.gvk] = names;
    if (o.lifecycles) {
      podLifecycles.push({ gvk: o.gvk, nsName: o.nsName, hash: o.hash ?? 0, lifecycles: o.lifecycles });
    }
  }
  return { index, podLifecycles };
}

const packr = new Packr({ useRecords: false, variableMapSize: true });

/** msgpack as rmp_serde writes it: compact integers (never float64 for an integer), no undefined. */
export function encodeMsgpack(value: unknown): Uint8Array {
  // Packr reuses its buffer between calls; hand out a copy.
  return new Uint8Array(packr.pack(toWire(value)));
}

function toWire(v: unknown): unknown {
  // msgpackr writes integers beyond 32 bits as float64; a bigint gets int64/uint64 like rmp_serde.
  if (typeof v === "number" && Number.isSafeInteger(v) && (v > 0xffffffff || v < -0x80000000))
    return BigInt(v);
  if (Array.isArray(v)) return v.map(toWire);
  if (v instanceof Map) return new Map([...v].map(([k, item]) => [toWire(k), toWire(item)]));
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    return new Map(
      Object.entries(v)
        .filter(([, item]) => item !== undefined)
        .map(([k, item]) => [k, toWire(item)]),
    );
  }
  return v;
}

function u64(h: HashLike): number | bigint {
  const n = BigInt(h);
  if (n < 0n || n > 2n ** 64n - 1n) throw new RangeError(`hash ${h} is not a u64`);
  return n <= 0xffffffffn ? Number(n) : n;
}

function lifecycleValue(l: PodLifecycle): unknown {
  switch (l.kind) {
    case "Empty":
      return "Empty";
    case "Running":
      return new Map([["Running", l.start]]);
    case "Finished":
      return new Map([["Finished", [l.start, l.end]]]);
  }
}

/**
 * Path of one of SimKube's example traces in ../shared/data/simkube-traces beside the clone (outside the
 * repo: never copied in), or undefined when absent, so tests can `t.skip(...)`.
 */
export function findSharedTrace(name: string): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    resolve(here, "../../../../shared/data/simkube-traces", name), // dist/test/support -> repo/..
    resolve(here, "../../../shared/data/simkube-traces", name), // test/support (unbuilt)
    resolve(process.cwd(), "../shared/data/simkube-traces", name),
  ];
  return candidates.find((p) => existsSync(p));
}
