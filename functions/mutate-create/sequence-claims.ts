// A repeated admission call for the same pod gets the number the first call got. The API server sends the
// same review (same request uid) again when its client retries a call, e.g. one answered 429/5xx with
// Retry-After (client-go rest.Request); a number per call would then count one pod twice and shift every
// later pod of its hash onto the next lifecycle. Remembered in this process, for CLAIM_TTL_MS: a repeat
// that reaches another replica is not recognised (docs/traces.md, "Pod sequence numbers").

import { type SequenceScope, type SequenceStore, scopeKey } from "../../shared/sequence/index.js";

/** Longer than the longest webhook call (30 s, the API server's maximum timeoutSeconds). */
export const CLAIM_TTL_MS = 60_000;
/** At most this many remembered calls; the oldest go first. */
export const CLAIM_LIMIT = 20_000;

export interface ClaimOptions {
  ttlMs?: number;
  limit?: number;
  /** Milliseconds clock. Default performance.now. */
  now?: () => number;
}

/** `store` whose next() answers a repeated claim (request uid) for the same hash and run with the same number. */
export function rememberClaims(store: SequenceStore, options: ClaimOptions = {}): SequenceStore {
  const ttlMs = options.ttlMs ?? CLAIM_TTL_MS;
  const limit = options.limit ?? CLAIM_LIMIT;
  const now = options.now ?? (() => performance.now());
  // Insertion order is age order: expired entries are always at the front.
  const claims = new Map<string, { at: number; seq: Promise<number> }>();
  const forget = (t: number) => {
    for (const [key, entry] of claims) {
      if (claims.size <= limit && t - entry.at < ttlMs) break;
      claims.delete(key);
    }
  };
  return {
    next(hash: string, scope: SequenceScope, claim?: string): Promise<number> {
      if (claim === undefined || claim === "") return store.next(hash, scope);
      const t = now();
      forget(t);
      const key = `${scopeKey(scope)}\u0000${hash}\u0000${claim}`;
      const known = claims.get(key);
      if (known) return known.seq;
      const seq = store.next(hash, scope);
      claims.set(key, { at: t, seq });
      // A call that got no number is not remembered: its repeat tries again.
      seq.catch(() => {
        if (claims.get(key)?.seq === seq) claims.delete(key);
      });
      return seq;
    },
    close: () => store.close?.() ?? Promise.resolve(),
  };
}
