// The clones waiting for their deletion to show (deletion-wait.ts), after their review was answered. Bounded
// in number, one per pod uid, and drained on shutdown:
// - a burst of forged reviews must not grow memory without bound: past `limit` a review starts no wait;
// - reviews of one uid share one wait, so repeating a review never multiplies the work;
// - SIGTERM waits for them (each ends within its own bound), so an answered interruption still gets its clone.

export type PendingStart = "started" | "joined" | "full";

export interface PendingClones {
  /** Runs `work` for `uid` unless one runs already (joined) or `limit` are under way (full). Never rejects. */
  start(uid: string, work: () => Promise<void>): PendingStart;
  has(uid: string): boolean;
  readonly size: number;
  /** Resolves when every wait under way has ended, or after `timeoutMs`: true when all ended. */
  settle(timeoutMs: number): Promise<boolean>;
}

export const DEFAULT_PENDING_LIMIT = 256;

export function createPendingClones(limit = DEFAULT_PENDING_LIMIT): PendingClones {
  const running = new Map<string, Promise<void>>();
  return {
    start(uid, work) {
      if (running.has(uid)) return "joined";
      if (running.size >= limit) return "full";
      const done = Promise.resolve()
        .then(work)
        .catch(() => {}) // the work logs its own failures; a stray one must not become unhandled
        .finally(() => running.delete(uid));
      running.set(uid, done);
      return "started";
    },
    has: (uid) => running.has(uid),
    get size() {
      return running.size;
    },
    async settle(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const all = (async () => {
        // New waits may start while draining (reviews still being answered): wait for those too.
        while (running.size > 0) await Promise.all([...running.values()]);
        return true as const;
      })();
      try {
        return await Promise.race([all, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
