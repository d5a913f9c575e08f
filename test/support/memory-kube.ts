// An in-memory KubeApi for unit tests: objects keyed by apiVersion/kind/namespace/name, resourceVersions,
// the API server's 404/409 answers, a call log, injectable faults, and an async pause around every call so
// that concurrent callers really interleave (read, someone else writes, stale replace -> 409).

import { randomUUID } from "node:crypto";
import { type KubeApi, KubeError, type KubeObject, type ObjectRef, refOf } from "../../shared/kube/api.js";
import { asPartialObjectMetadata } from "../../shared/kube/partial-metadata.js";

export type KubeVerb = "read" | "create" | "replace";

export interface KubeCall {
  verb: KubeVerb;
  ref: ObjectRef;
  /** What the fake answered: an HTTP status (200/201 on success). */
  status: number;
  /** A read of the metadata only (answered with a PartialObjectMetadata, as the API server does). */
  metadataOnly?: true;
}

export interface Fault {
  verb?: KubeVerb;
  kind?: string;
  /** How many matching calls fail; default 1. */
  times?: number;
  error: KubeError;
  /** Apply the call, then throw: a write whose outcome the caller cannot know (connection reset). */
  afterApply?: boolean;
  /** Never answer (the promise stays pending). */
  hang?: boolean;
}

export interface MemoryKubeOptions {
  /** Awaited before and after each call touches the store; default one macrotask (setImmediate). */
  pause?: (verb: KubeVerb) => Promise<void>;
}

export interface MemoryKube extends KubeApi {
  readonly calls: KubeCall[];
  /** Queue a fault; faults match in the order they were added. */
  inject(fault: Fault): void;
  /** The stored object (a copy), or undefined. */
  get<T extends KubeObject = KubeObject>(ref: ObjectRef): T | undefined;
  /** Put an object in place without a call (uid and resourceVersion filled in). */
  seed(object: KubeObject): KubeObject;
  /** Remove an object without a call, as kubectl delete or the garbage collector would. */
  remove(ref: ObjectRef): boolean;
  countCalls(verb?: KubeVerb): number;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

function keyOf(ref: ObjectRef): string {
  return `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ""}/${ref.name}`;
}

function describe(ref: ObjectRef): string {
  return `${ref.kind.toLowerCase()}s "${ref.name}"`;
}

export function createMemoryKube(options: MemoryKubeOptions = {}): MemoryKube {
  const pause = options.pause ?? macrotask;
  const store = new Map<string, KubeObject>();
  const calls: KubeCall[] = [];
  const faults: Array<Fault & { left: number }> = [];
  let revision = 1;

  function takeFault(verb: KubeVerb, ref: ObjectRef): Fault | undefined {
    const i = faults.findIndex(
      (f) => (f.verb === undefined || f.verb === verb) && (f.kind === undefined || f.kind === ref.kind),
    );
    if (i < 0) return undefined;
    const fault = faults[i] as Fault & { left: number };
    fault.left -= 1;
    if (fault.left <= 0) faults.splice(i, 1);
    return fault;
  }

  function stamp(object: KubeObject, uid: string): KubeObject {
    const copy = structuredClone(object);
    copy.metadata = { ...copy.metadata, uid, resourceVersion: String(++revision) };
    return copy;
  }

  // The validation the API server would do for the one kind these tests write in bulk.
  function validate(object: KubeObject): void {
    if (object.kind !== "ConfigMap" || object.data === undefined) return;
    for (const [key, value] of Object.entries(object.data as Record<string, unknown>)) {
      if (!CONFIGMAP_KEY.test(key) || typeof value !== "string") {
        throw new KubeError(422, "Invalid", `ConfigMap "${object.metadata?.name}" is invalid: data[${key}]`);
      }
    }
  }

  async function run<T>(
    verb: KubeVerb,
    ref: ObjectRef,
    apply: () => KubeObject,
    ok: number,
    metadataOnly = false,
  ): Promise<T> {
    const log = (status: number) =>
      calls.push(metadataOnly ? { verb, ref, status, metadataOnly } : { verb, ref, status });
    await pause(verb);
    const fault = takeFault(verb, ref);
    if (fault?.hang) {
      log(0);
      return new Promise<T>(() => {});
    }
    if (fault && !fault.afterApply) {
      log(fault.error.status);
      throw fault.error;
    }
    let result: KubeObject;
    try {
      result = apply();
    } catch (err) {
      log(err instanceof KubeError ? err.status : 500);
      throw err;
    }
    log(fault ? fault.error.status : ok);
    await pause(verb);
    if (fault) throw fault.error;
    return structuredClone(result) as T;
  }

  return {
    calls,
    inject(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    get<T extends KubeObject = KubeObject>(ref: ObjectRef) {
      const found = store.get(keyOf(ref));
      return found === undefined ? undefined : (structuredClone(found) as T);
    },
    seed(object) {
      const stored = stamp(object, object.metadata?.uid ?? randomUUID());
      store.set(keyOf(refOf(stored)), stored);
      return structuredClone(stored);
    },
    remove(ref) {
      return store.delete(keyOf(ref));
    },
    countCalls(verb) {
      return verb === undefined ? calls.length : calls.filter((c) => c.verb === verb).length;
    },

    read(ref, options = {}) {
      const metadataOnly = options.metadataOnly === true;
      return run(
        "read",
        ref,
        () => {
          const found = store.get(keyOf(ref));
          if (found === undefined) throw new KubeError(404, "NotFound", `${describe(ref)} not found`);
          return metadataOnly ? asPartialObjectMetadata(found) : found;
        },
        200,
        metadataOnly,
      );
    },

    create(object) {
      const ref = refOf(object);
      return run(
        "create",
        ref,
        () => {
          if (store.has(keyOf(ref)))
            throw new KubeError(409, "AlreadyExists", `${describe(ref)} already exists`);
          validate(object);
          const created = stamp(object, randomUUID());
          store.set(keyOf(ref), created);
          return created;
        },
        201,
      );
    },

    replace(object) {
      const ref = refOf(object);
      return run(
        "replace",
        ref,
        () => {
          const current = store.get(keyOf(ref));
          if (current === undefined) throw new KubeError(404, "NotFound", `${describe(ref)} not found`);
          const expected = object.metadata?.resourceVersion;
          if (expected !== undefined && expected !== current.metadata?.resourceVersion) {
            throw new KubeError(
              409,
              "Conflict",
              `Operation cannot be fulfilled on ${describe(ref)}: the object has been modified; please apply your changes to the latest version and try again`,
            );
          }
          validate(object);
          const replaced = stamp(object, current.metadata?.uid ?? randomUUID());
          store.set(keyOf(ref), replaced);
          return replaced;
        },
        200,
      );
    },
  };
}
