export { SEQUENCE_CONFIGMAP_PREFIX } from "./cluster-naming.js";
export { createClusterSequenceStore } from "./cluster-store.js";
export { LEASE_IDLE_MS, LEASE_MS, LEASE_RENEW_MS, leaseOf } from "./lease.js";
export type { ShardMeta } from "./shard.js";
export { freeNumbersOf } from "./shard.js";
export type { SequenceScope, SequenceStore } from "./store.js";
export { createMemorySequenceStore, scopeKey } from "./store.js";
