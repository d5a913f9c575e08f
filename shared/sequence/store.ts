// Pod sequence numbers: the n-th pod created with a given stable spec hash gets n (0 for the first),
// and mutate-create gives it lifecycles[n % len] from the trace, as SimKube's driver does.
//
// SimKube counts in driver memory, which works because one process sees every pod of a simulation.
// A scale-to-zero function does not: its memory is lost on every cold start, and during a burst several
// replicas would count on their own and hand out the same numbers. So the default store keeps the
// counters in the cluster (shared/sequence/cluster-store.ts, a few sharded ConfigMaps per simulation run);
// the memory store below is for one local process and for tests. Limits and costs: docs/traces.md
// ("Pod sequence numbers").

/** The owner the cluster store puts on its object so that it is garbage-collected with the simulation. */
export interface SequenceOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export interface SequenceScope {
  simName: string;
  /**
   * The SimulationRoot (or Simulation) found in the pod's owner chain. Its uid also tells one run of a
   * simulation from the next run under the same name, so counting restarts at 0 for a new run. Pass the
   * same owner for every pod of a run.
   */
  owner?: SequenceOwner;
}

export interface SequenceStore {
  /**
   * The next sequence number for pods with this spec hash in this simulation run; 0 for the first.
   * `claim` names the admission call (its request uid): a store wrapped by rememberClaims
   * (sequence-claims.ts) answers a repeated claim with the same number.
   */
  next(hash: string, scope: SequenceScope, claim?: string): Promise<number>;
  /**
   * Before the process exits: gives back what the store holds for this process alone (the cluster store's
   * leases and their reserved numbers), so no number is lost with the process. Calls after it still work.
   */
  close?(): Promise<void>;
}

/** Why no number could be handed out; mutate-create denies the pod with this message. */
export class SequenceStoreError extends Error {
  override readonly name = "SequenceStoreError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// ConfigMap data keys are [-._a-zA-Z0-9]+ (at most 253 chars); stable spec hashes are decimal u64 strings,
// so anything else is a caller bug or a hand-edited annotation, refused the same way by every store.
const SEQUENCE_KEY = /^[-._a-zA-Z0-9]{1,253}$/;

export function isValidSequenceHash(hash: string): boolean {
  return SEQUENCE_KEY.test(hash);
}

export function checkSequenceHash(hash: string): void {
  if (typeof hash !== "string" || !isValidSequenceHash(hash)) {
    throw new SequenceStoreError(
      `pod spec hash ${JSON.stringify(hash)} cannot be counted: expected letters, digits, '-', '.' or '_' (at most 253)`,
    );
  }
}

/** One run of one simulation: its name and, when known, the uid of its owner object. */
export function scopeKey(scope: SequenceScope): string {
  return scope.owner ? `${scope.simName}/${scope.owner.uid}` : scope.simName;
}

/**
 * Counts in this process only, like SimKube's driver: correct for a single long-lived process (local
 * `serve`, tests), wrong as soon as a second replica or a restart is involved.
 */
export function createMemorySequenceStore(): SequenceStore {
  const counts = new Map<string, Map<string, number>>();
  return {
    async next(hash, scope) {
      checkSequenceHash(hash);
      const key = scopeKey(scope);
      let perHash = counts.get(key);
      if (perHash === undefined) {
        perHash = new Map();
        counts.set(key, perHash);
      }
      const seq = perHash.get(hash) ?? 0;
      perHash.set(hash, seq + 1);
      return seq;
    },
  };
}
