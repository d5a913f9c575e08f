// A KubeApi for unit tests over a set of objects keyed by kind and name (scope is the real adapter's
// business): every read is recorded, a read can be made to fail, and `put`/`remove` change the objects as a
// controller or kubectl would, between reviews. Creates are stored (a name taken answers 409, as the API
// server does); replaces are accepted and not stored.

import { type KubeApi, KubeError, type KubeObject, type ObjectRef } from "../../shared/kube/api.js";

export interface ObjectsKube extends KubeApi {
  /** "<kind>/<name>" of every read, in order. */
  reads: string[];
  put(object: KubeObject): void;
  remove(kind: string, name: string): void;
}

const keyOf = (kind: string | undefined, name: string | undefined) => `${kind}/${name}`;

/** `failures`: reads of "<kind>/<name>" that throw the given error instead. */
export function objectsKube(
  objects: KubeObject[],
  failures: Map<string, KubeError> = new Map(),
): ObjectsKube {
  const byKey = new Map(objects.map((o) => [keyOf(o.kind, o.metadata?.name), o]));
  const reads: string[] = [];
  return {
    reads,
    put(o) {
      byKey.set(keyOf(o.kind, o.metadata?.name), o);
    },
    remove(kind, name) {
      byKey.delete(keyOf(kind, name));
    },
    async read<T extends KubeObject>(ref: ObjectRef): Promise<T> {
      const key = keyOf(ref.kind, ref.name);
      reads.push(key);
      const failure = failures.get(key);
      if (failure) throw failure;
      const found = byKey.get(key);
      if (!found) throw new KubeError(404, "NotFound", `${ref.kind} "${ref.name}" not found`);
      return structuredClone(found) as T;
    },
    async create<T extends KubeObject>(o: T): Promise<T> {
      const key = keyOf(o.kind, o.metadata?.name);
      if (byKey.has(key)) throw new KubeError(409, "AlreadyExists", `${o.kind} "${o.metadata?.name}" exists`);
      byKey.set(key, structuredClone(o));
      return o;
    },
    async replace<T extends KubeObject>(o: T): Promise<T> {
      return o;
    },
  };
}
