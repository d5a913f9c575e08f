// Writes a Trace (shared/trace/reader.ts's model) as a SimKube .sktrace file, format version 2: the map
// rmp_serde::to_vec_named makes of sk-core's `Trace`. Pure. Reading it back with parseTrace gives the same
// Trace, and a trace SimKube wrote comes out byte-identical after parseTrace (tested on SimKube's examples).
//
// Field order and shapes follow SimKube's structs: version, config, events, index, pod_lifecycles;
// TrackedObjectConfig writes podSpecTemplatePaths (when set) and its flags only when true; pod_lifecycles is
// keyed by [owner gvk, "ns/name"] tuples, then by u64 pod spec hash; lifecycles are serde's tagged enum.

import {
  CURRENT_TRACE_FORMAT_VERSION,
  lifecycleOwners,
  type PodLifecycle,
  type Trace,
  type TracerConfig,
} from "../../../shared/trace/index.js";
import { encodeMsgpack, type MsgpackValue } from "./msgpack-writer.js";

export function encodeTrace(trace: Trace): Uint8Array {
  return encodeMsgpack(traceValue(trace));
}

function traceValue(trace: Trace): MsgpackValue {
  if (trace.version !== CURRENT_TRACE_FORMAT_VERSION) {
    throw new RangeError(`can only write trace format version ${CURRENT_TRACE_FORMAT_VERSION}`);
  }
  return new Map<MsgpackValue, MsgpackValue>([
    ["version", trace.version],
    ["config", configValue(trace.config)],
    [
      "events",
      trace.events.map(
        (e) =>
          new Map<MsgpackValue, MsgpackValue>([
            ["ts", e.ts],
            ["applied_objs", e.appliedObjs as MsgpackValue[]],
            ["deleted_objs", e.deletedObjs as MsgpackValue[]],
          ]),
      ),
    ],
    ["index", indexValue(trace.index)],
    ["pod_lifecycles", podLifecyclesValue(trace)],
  ]);
}

function configValue(config: TracerConfig): MsgpackValue {
  const tracked = new Map<MsgpackValue, MsgpackValue>();
  for (const [gvk, obj] of Object.entries(config.trackedObjects)) {
    const entry = new Map<MsgpackValue, MsgpackValue>();
    if (obj.podSpecTemplatePaths) entry.set("podSpecTemplatePaths", obj.podSpecTemplatePaths);
    if (obj.trackLifecycle) entry.set("trackLifecycle", true);
    if (obj.skipOwned) entry.set("skipOwned", true);
    tracked.set(gvk, entry);
  }
  return new Map([["trackedObjects", tracked]]);
}

function indexValue(index: Trace["index"]): MsgpackValue {
  const out = new Map<MsgpackValue, MsgpackValue>();
  for (const [gvk, names] of index) {
    out.set(gvk, new Map<MsgpackValue, MsgpackValue>([...names].map(([name, hash]) => [name, u64(hash)])));
  }
  return out;
}

function podLifecyclesValue(trace: Trace): MsgpackValue {
  const out = new Map<MsgpackValue, MsgpackValue>();
  const byHashes = trace.podLifecycles.values();
  for (const owner of lifecycleOwners(trace)) {
    const byHash = byHashes.next().value ?? new Map<string, PodLifecycle[]>();
    const hashes = new Map<MsgpackValue, MsgpackValue>();
    for (const [hash, lifecycles] of byHash) hashes.set(u64(hash), lifecycles.map(lifecycleValue));
    out.set([owner.gvk, owner.nsName], hashes);
  }
  return out;
}

function lifecycleValue(lifecycle: PodLifecycle): MsgpackValue {
  switch (lifecycle.kind) {
    case "Empty":
      return "Empty";
    case "Running":
      return new Map([["Running", lifecycle.start]]);
    case "Finished":
      return new Map<MsgpackValue, MsgpackValue>([["Finished", [lifecycle.start, lifecycle.end]]]);
  }
}

/** Decimal u64 strings (how the model keeps hashes) back to exact integers. */
function u64(hash: string): bigint {
  if (!/^\d{1,20}$/.test(hash) || BigInt(hash) >= 1n << 64n) {
    throw new RangeError(`hash "${hash}" is not an unsigned 64-bit integer`);
  }
  return BigInt(hash);
}
