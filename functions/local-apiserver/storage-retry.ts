// The storage layer's optimistic retry: admission runs inside GuaranteedUpdate and conditionalDelete, so when
// the stored object changes while a webhook is being called, the write starts over and calls admission again
// (k8s.io/apiserver pkg/registry/generic/registry/store.go, pkg/storage/etcd3/store.go).

import type { Backend } from "./backend.js";
import { conflict, MODIFIED, notFound } from "./status.js";
import type { Reply, ResourceInfo } from "./types.js";

/** The stored object changed while admission ran: the storage layer's retry loop takes over. */
export class StaleWrite extends Error {}

/** GuaranteedUpdate and conditionalDelete retry (calling admission again) a bounded number of times. */
const MAX_STORAGE_RETRIES = 5;

/** Runs attempt until it is not stale; a conditional write (it named a resourceVersion) gets a 409 at once. */
export async function retryStale(
  res: ResourceInfo,
  name: string,
  conditional: boolean,
  attempt: () => Promise<Reply>,
): Promise<Reply> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof StaleWrite)) throw err;
      if (conditional || i >= MAX_STORAGE_RETRIES) throw conflict(res, name, MODIFIED);
    }
  }
}

/** After admission: throws NotFound when the object is gone, StaleWrite when its resourceVersion moved on. */
export function checkUnchanged(
  b: Backend,
  res: ResourceInfo,
  namespace: string | undefined,
  name: string,
  resourceVersion: unknown,
): void {
  const latest = b.store.get(res, namespace, name);
  if (!latest) throw notFound(res, name);
  if (latest.metadata?.resourceVersion !== resourceVersion) throw new StaleWrite();
}
