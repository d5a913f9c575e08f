// The cluster store's options, and the settings they make once the defaults are applied. Pure.

/**
 * How long next() may take by default. It was 3 s, and under CPU load the deadline denied pods whose writes
 * were merely slow; the webhook allows 30 s (knative/tuning.ts).
 */
export const DEFAULT_SEQUENCE_DEADLINE_MS = 10_000;

export interface ClusterSequenceStoreOptions {
  /** Where the ConfigMaps live: the function's own namespace (its Role grants access there). */
  namespace: string;
  /**
   * How long one next() may take before it fails. Default DEFAULT_SEQUENCE_DEADLINE_MS, a third of the
   * webhook's 30 s timeout (knative/tuning.ts), so that the rest of the review and the answer still fit.
   */
  deadlineMs?: number;
  /** Read-modify-write attempts one next() may take part in. Default 25. */
  maxAttempts?: number;
  /** First backoff step after a conflict or transient error, doubled per failure in a row. Default 5. */
  backoffBaseMs?: number;
  /** Largest backoff step after a transient error (the API server is struggling). Default 200. */
  backoffMaxMs?: number;
  /**
   * Largest backoff step after a 409. A conflict means another replica just made progress, not that the
   * API server is overloaded, so the cap is low: a long backoff only lets the replicas that won last
   * time win again. Default 20 (two to four round trips of a real API server).
   */
  conflictBackoffMaxMs?: number;
  /** [0, 1); jitter source. Default Math.random. */
  random?: () => number;
  /** Backoff sleep. Default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds clock for deadlines. Default performance.now. */
  now?: () => number;
  /** Epoch milliseconds, stored with each write record. Default Date.now. */
  wallClock?: () => number;
  /** This process's name in the shards' write records. Default: 12 random hex digits. */
  writerId?: string;
  /**
   * Whether a replica alone on a hot shard may lease it and reserve numbers ahead (lease.ts).
   * Default true. Off, every batch of numbers is one write, as before the lease existed.
   */
  lease?: boolean;
}

/** The options with their defaults applied. */
export interface StoreSettings {
  namespace: string;
  deadlineMs: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  conflictBackoffMaxMs: number;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  wallClock: () => number;
  lease: boolean;
}

export function resolveSettings(options: ClusterSequenceStoreOptions): StoreSettings {
  const backoffMaxMs = options.backoffMaxMs ?? 200;
  return {
    namespace: options.namespace,
    deadlineMs: options.deadlineMs ?? DEFAULT_SEQUENCE_DEADLINE_MS,
    maxAttempts: options.maxAttempts ?? 25,
    backoffBaseMs: options.backoffBaseMs ?? 5,
    backoffMaxMs,
    conflictBackoffMaxMs: Math.min(options.conflictBackoffMaxMs ?? 20, backoffMaxMs),
    random: options.random ?? Math.random,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    now: options.now ?? (() => performance.now()),
    wallClock: options.wallClock ?? Date.now,
    lease: options.lease ?? true,
  };
}
