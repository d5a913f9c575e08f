// The pod-spec stable hash: SimKube keys a trace's pod lifecycles by it and writes it into the
// `static.simkube.io/pod-spec-stable-hash` annotation, so ours has to be bit-identical to SimKube's:
// Rust's `Hash` of the serde_json value of the stable spec (sk-core jsonutils::hash over
// PodExt::stable_spec), fed to std's DefaultHasher (SipHash-1-3, zero keys).
//
// How each JSON value feeds the hasher (serde_json 1.x without arbitrary_precision):
// - string: its UTF-8 bytes, then 0xff;  bool: one byte;  null: 8 zero bytes (`None::<()>`);
// - number: 8 little-endian bytes, no type tag: an integer in [0, 2^64) as u64, a negative one
//   in [-2^63, 0) as i64 (two's complement), anything else as its f64 bits, with -0 hashed as +0;
// - array: its elements in order, no length;
// - object: keys in byte order of their UTF-8 (serde_json's Map is a BTreeMap), each key then its value.
//
// Choices forced by JavaScript (documented, tested):
// - JSON.parse cannot tell `1.0` from `1`: a JS number with an integral value hashes as an integer,
//   where serde_json would hash the text `1.0` as an f64. Every number in a PodSpec is an integer
//   field (i32/i64), and the API server never writes `1.0`, so pods are not affected.
// - Integers beyond 2^53 lose precision in JSON.parse before we see them; a bigint (e.g. a
//   64-bit msgpack integer from shared/trace/strict-msgpack.ts) is hashed exactly.
// - NaN and ±Infinity are not JSON: hashJson throws on them.
//
// What SimKube's typed round trip (JSON -> k8s-openapi PodSpec -> serde_json::Value) does, and how
// we follow it:
// - null members disappear (every optional field is an Option skipped when None): podSpecHash and
//   stableSpec drop null object members at every depth. hashJson hashes raw values and keeps them.
// - `containers` is a required Vec: always present, `[]` when missing. That is why the empty spec
//   `{}` hashes as `{"containers": [], "volumes": []}`.
// - NOT followed: k8s-openapi (v1_30 in SimKube 2.x) silently ignores fields it does not know, and
//   defaults missing required scalars (a container without `name` gets `""`). Pods from the API
//   server carry only fields it knows; a pod that uses a field added after Kubernetes 1.30 (e.g.
//   pod-level `resources`, `hostnameOverride`) hashes differently here than in SimKube, because
//   SimKube drops that field and we keep it.

import { isRecord, type JsonObject } from "../base/index.js";
import { SipHasher13 } from "./siphash.js";

/** Volumes (and their mounts) with this name prefix are the injected service-account token. */
export const KUBE_SVC_ACCOUNT_VOLUME_NAME_PREFIX = "kube-api-access";

const TWO_32 = 0x1_0000_0000;
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;
const U64_LIMIT = 1n << 64n;
const I64_MIN = -(1n << 63n);

// f64 -> bits without allocating per number.
const f64Scratch = new Float64Array(1);
const f64Words = new Uint32Array(f64Scratch.buffer);
const F64_LO = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

// ---------------------------------------------------------------------------------------------
// Stable spec

// What the stable spec leaves out and fills in, shared by stableSpec (which builds it) and podSpecHash (which
// writes it without building it).

/** Scheduling and identity details that differ between a traced pod and its simulated twin. */
function isIdentityKey(key: string): boolean {
  return key === "nodeName" || key === "serviceAccount" || key === "serviceAccountName";
}

/**
 * SimKube's driver removes regular containers' ports before creating simulated pods (the API server refuses
 * patches with duplicate ports), so a traced pod and its simulated twin only hash alike without them. Init
 * containers keep theirs, as in SimKube.
 */
function isDroppedContainerKey(key: string, dropPorts: boolean): boolean {
  return dropPorts && key === "ports";
}

/** The service-account token volume (and its mounts) gets a random suffix per pod (kube-api-access-x7k2p). */
function isKubeApiAccess(entry: unknown): boolean {
  const name = isRecord(entry) ? entry.name : undefined;
  return typeof name === "string" && name.startsWith(KUBE_SVC_ACCOUNT_VOLUME_NAME_PREFIX);
}

/** A list in the spec: [] when absent or null (SimKube always serializes it); an error when not a list. */
function specList(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`spec.${field} must be an array, got ${describe(value)}`);
  return value;
}

function containerAt(containers: unknown[], i: number, field: string): JsonObject {
  const container = containers[i];
  if (!isRecord(container))
    throw new Error(`spec.${field}[${i}] must be an object, got ${describe(container)}`);
  return container;
}

/** A stable spec that still shares untouched subtrees (and their null members) with the input. */
function buildStableSpec(spec: unknown): JsonObject {
  if (!isRecord(spec)) throw new Error(`pod spec must be an object, got ${describe(spec)}`);
  const out: JsonObject = {};
  for (const key of Object.keys(spec)) {
    const value = spec[key];
    if (value === null || value === undefined || isIdentityKey(key)) continue;
    out[key] = value;
  }
  out.containers = stableContainers(spec.containers, "containers", true);
  if (out.initContainers !== undefined) {
    out.initContainers = stableContainers(spec.initContainers, "initContainers", false);
  }
  out.volumes = withoutKubeApiAccess(spec.volumes, "volumes");
  return out;
}

function stableContainers(containers: unknown, field: string, dropPorts: boolean): JsonObject[] {
  const list = specList(containers, field);
  return list.map((_, i) => {
    const container = containerAt(list, i, field);
    const out: JsonObject = {};
    for (const key of Object.keys(container)) {
      const value = container[key];
      if (value === null || value === undefined || isDroppedContainerKey(key, dropPorts)) continue;
      out[key] = value;
    }
    out.volumeMounts = withoutKubeApiAccess(container.volumeMounts, `${field}[${i}].volumeMounts`);
    return out;
  });
}

function withoutKubeApiAccess(entries: unknown, field: string): unknown[] {
  return specList(entries, field).filter((entry) => !isKubeApiAccess(entry));
}

function withoutNullMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullMembers);
  if (!isRecord(value)) return value;
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (member !== null && member !== undefined) out[key] = withoutNullMembers(member);
  }
  return out;
}

/**
 * The pod spec as SimKube hashes it (PodExt::stable_spec, then serialized): without `nodeName`,
 * `serviceAccount`, `serviceAccountName` and the regular containers' `ports`; `volumes` and every
 * (init) container's `volumeMounts` without the `kube-api-access*` entries, `[]` when absent;
 * `containers` always present; null members removed at every depth. Pure: a new object, the input
 * is untouched. Throws when `spec` (or a list it filters) has the wrong shape.
 */
export function stableSpec(spec: unknown): Record<string, unknown> {
  return withoutNullMembers(buildStableSpec(spec)) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Hashing

// One hasher reused across calls: a new one per hash would spend more on allocating its buffer than
// on hashing a typical spec. Hashing is synchronous; the flag only matters if a getter in the value
// re-enters (then that inner call gets a hasher of its own).
const sharedHasher = new SipHasher13();
let sharedHasherBusy = false;

function withHasher<T>(run: (h: SipHasher13) => T): T {
  if (sharedHasherBusy) return run(new SipHasher13());
  sharedHasherBusy = true;
  try {
    return run(sharedHasher.reset());
  } finally {
    sharedHasherBusy = false;
  }
}

function writeNumber(h: SipHasher13, n: number): void {
  if (Number.isInteger(n) && n >= -TWO_63 && n < TWO_64) {
    // Both halves of an integral double are exact; ToUint32 (>>> 0) wraps negatives to two's complement.
    h.writeU64(n >>> 0, Math.floor(n / TWO_32) >>> 0);
    return;
  }
  if (!Number.isFinite(n)) throw new RangeError(`cannot hash ${n}: not a JSON number`);
  // Non-integral, or an integer outside u64/i64 (serde_json parses those as f64 too).
  f64Scratch[0] = n;
  h.writeU64(f64Words[F64_LO] as number, f64Words[1 - F64_LO] as number);
}

function writeBigInt(h: SipHasher13, n: bigint): void {
  if (n >= I64_MIN && n < U64_LIMIT) h.writeU64(n);
  else writeNumber(h, Number(n)); // serde_json reads integers beyond 64 bits as f64
}

// serde_json's BTreeMap orders keys by UTF-8 bytes, i.e. by code point. JS's default order compares
// UTF-16 units, which agrees except when a surrogate pair meets a unit in U+E000..U+FFFF, so only keys
// beyond ASCII can tell the two apart. A hash is first written in UTF-16 order, which is cheaper; if the
// hasher saw any string beyond ASCII (pod specs practically never have one), it is written again in
// code point order. Scanning every key for such characters instead cost 10% of a pod spec's hash.
type KeyOrder = (keys: string[]) => string[];

// Pod spec objects have a handful of keys: an insertion sort of those took half the time of keys.sort() (a
// measured 1.4 us of a ~7 us hash); larger ones go to sort().
const INSERTION_SORT_MAX = 16;

function utf16Order(keys: string[]): string[] {
  const n = keys.length;
  if (n > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < n; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > key; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = key;
  }
  return keys;
}

function codePointOrder(keys: string[]): string[] {
  return keys.sort(compareCodePoints);
}

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** How one hash walks its value: which null members it skips, and in which order it takes keys. */
interface Walk {
  /** A typed round trip (SimKube's PodSpec) drops null members; a raw serde_json value keeps them. */
  dropNullMembers: boolean;
  order: KeyOrder;
}

/** Writes the value, then, if a string beyond ASCII made UTF-16 order doubtful, writes it again exactly. */
function hashWalk(dropNullMembers: boolean, write: (h: SipHasher13, walk: Walk) => void): string {
  return withHasher((h) => {
    write(h, { dropNullMembers, order: utf16Order });
    if (h.wroteNonAscii) write(h.reset(), { dropNullMembers, order: codePointOrder });
    return h.finishDecimal();
  });
}

function writeValue(h: SipHasher13, value: unknown, walk: Walk): void {
  switch (typeof value) {
    case "string":
      h.writeStr(value);
      return;
    case "number":
      writeNumber(h, value);
      return;
    case "boolean":
      h.writeU8(value ? 1 : 0);
      return;
    case "bigint":
      writeBigInt(h, value);
      return;
    case "undefined": // only reached at the top or inside an array, where JSON would say null
      h.writeU64(0, 0);
      return;
    case "object": {
      if (value === null) {
        h.writeU64(0, 0);
        return;
      }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) writeValue(h, value[i], walk);
        return;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(
          `cannot hash a ${proto?.constructor?.name ?? "non-plain object"}: not a JSON value`,
        );
      }
      const obj = value as JsonObject;
      const keys = walk.order(Object.keys(obj));
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const member = obj[key];
        if (member === undefined || (member === null && walk.dropNullMembers)) continue;
        h.writeStr(key);
        writeValue(h, member, walk);
      }
      return;
    }
    default:
      throw new TypeError(`cannot hash a ${typeof value}: not a JSON value`);
  }
}

/**
 * Rust's `Hash` of the serde_json value `value` under std's DefaultHasher, as a decimal u64 string
 * (SimKube's jsonutils::hash; `undefined` hashes as null, like its hash_option(None)). Null
 * members are hashed, as in a raw serde_json value. Throws on NaN/Infinity and non-JSON types.
 */
export function hashJson(value: unknown): string {
  return hashWalk(false, (h, walk) => writeValue(h, value, walk));
}

// podSpecHash writes stableSpec(spec) straight from the pod's spec, without building it: the copies were a
// quarter of the hash's work. Same bytes as hashJson(stableSpec(spec)) (test/unit/pod-hash.test.ts holds the
// two together), and both take their rules from the helpers above.

/** The stable spec's members in key order: those of the spec, and the lists it always has. */
function writeStableSpec(h: SipHasher13, spec: JsonObject, walk: Walk): void {
  const keys = Object.keys(spec);
  if (!Object.hasOwn(spec, "containers")) keys.push("containers");
  if (!Object.hasOwn(spec, "volumes")) keys.push("volumes");
  walk.order(keys);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const value = spec[key];
    if (isIdentityKey(key)) continue;
    switch (key) {
      case "containers":
        h.writeStr(key);
        writeStableContainers(h, value, key, true, walk);
        continue;
      case "initContainers":
        if (value === null || value === undefined) continue;
        h.writeStr(key);
        writeStableContainers(h, value, key, false, walk);
        continue;
      case "volumes":
        h.writeStr(key);
        writeWithoutKubeApiAccess(h, value, key, walk);
        continue;
    }
    if (value === null || value === undefined) continue;
    h.writeStr(key);
    writeValue(h, value, walk);
  }
}

function writeStableContainers(
  h: SipHasher13,
  containers: unknown,
  field: string,
  dropPorts: boolean,
  walk: Walk,
): void {
  const list = specList(containers, field);
  for (let c = 0; c < list.length; c++) {
    const container = containerAt(list, c, field);
    const keys = Object.keys(container);
    if (!Object.hasOwn(container, "volumeMounts")) keys.push("volumeMounts");
    walk.order(keys);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const value = container[key];
      if (key === "volumeMounts") {
        h.writeStr(key);
        writeWithoutKubeApiAccess(h, value, `${field}[${c}].volumeMounts`, walk);
        continue;
      }
      if (value === null || value === undefined || isDroppedContainerKey(key, dropPorts)) continue;
      h.writeStr(key);
      writeValue(h, value, walk);
    }
  }
}

function writeWithoutKubeApiAccess(h: SipHasher13, entries: unknown, field: string, walk: Walk): void {
  const list = specList(entries, field);
  for (let i = 0; i < list.length; i++) {
    if (!isKubeApiAccess(list[i])) writeValue(h, list[i], walk);
  }
}

/**
 * The stable hash of a pod's spec as a decimal u64 string, equal to SimKube's
 * `static.simkube.io/pod-spec-stable-hash` and to its trace's pod-lifecycle keys.
 * Throws `Error("pod has no spec")` when the spec is missing, or when it has the wrong shape.
 */
export function podSpecHash(pod: { spec?: unknown }): string {
  const spec = pod.spec;
  if (spec === undefined || spec === null) throw new Error("pod has no spec");
  if (!isRecord(spec)) throw new Error(`pod spec must be an object, got ${describe(spec)}`);
  return hashWalk(true, (h, walk) => writeStableSpec(h, spec, walk));
}
