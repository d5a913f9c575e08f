// Readiness: whether a function can do its job now, as GET /readyz and `serve --check` report it. What is
// checked is a function passed in (api-readiness.ts: one read of the API); this module decides how often it
// runs and how one result changes the verdict:
//   - cheap: a verdict is reused for `ttlMs`; a stale one is answered at once and refreshed in the background,
//     one check at a time, so a probe never waits on the API (only the very first one, which has nothing else);
//   - steady: a ready function turns not ready only after `failuresToUnready` failed checks in a row, so one
//     dropped connection or one slow answer does not take a working function out of its Service;
//   - honest: never ready before a check succeeded.
// The reason a check gives goes to the log and to `--check`; the probe's answer itself carries none.

/** What a check found: undefined when the function can work, otherwise one line naming what is missing. */
export type ReadinessCheck = () => Promise<string | undefined>;

export interface ReadinessVerdict {
  ready: boolean;
  /** The last failed check's reason: why not ready, or (still ready) what just failed. */
  reason?: string;
}

export interface ReadinessOptions {
  /** How long one check's verdict is reused. Default 5 s. */
  ttlMs?: number;
  /** Failed checks in a row that turn a ready function not ready. Default 3. */
  failuresToUnready?: number;
  /** Told when the verdict changes (ready or not), with the reason when not. */
  onChange?: (verdict: ReadinessVerdict) => void;
  now?: () => number;
}

export interface Readiness {
  /** The verdict, from a check at most ttlMs old (refreshed in the background when older). */
  current(): Promise<ReadinessVerdict>;
  /** Runs a check now (or joins the one running) and returns the verdict after it. */
  checkNow(): Promise<ReadinessVerdict>;
}

export const READINESS_TTL_MS = 5_000;
export const FAILURES_TO_UNREADY = 3;

interface State {
  verdict: ReadinessVerdict | undefined;
  failures: number;
  checkedAt: number;
}

/** The next verdict from the last one and one check's result (pure). */
export function nextVerdict(
  last: ReadinessVerdict | undefined,
  failuresInARow: number,
  reason: string | undefined,
  failuresToUnready: number,
): ReadinessVerdict {
  if (reason === undefined) return { ready: true };
  const stillReady = last?.ready === true && failuresInARow < failuresToUnready;
  return { ready: stillReady, reason };
}

export function createReadiness(check: ReadinessCheck, options: ReadinessOptions = {}): Readiness {
  const ttlMs = options.ttlMs ?? READINESS_TTL_MS;
  const failuresToUnready = options.failuresToUnready ?? FAILURES_TO_UNREADY;
  const now = options.now ?? Date.now;
  const state: State = { verdict: undefined, failures: 0, checkedAt: 0 };
  let running: Promise<ReadinessVerdict> | undefined;

  const record = (reason: string | undefined): ReadinessVerdict => {
    state.failures = reason === undefined ? 0 : state.failures + 1;
    const verdict = nextVerdict(state.verdict, state.failures, reason, failuresToUnready);
    const changed = state.verdict?.ready !== verdict.ready;
    state.verdict = verdict;
    state.checkedAt = now();
    if (changed) options.onChange?.(verdict);
    return verdict;
  };
  const checkNow = (): Promise<ReadinessVerdict> => {
    running ??= check()
      .catch((err: unknown) => `readiness check failed: ${(err as Error)?.message ?? String(err)}`)
      .then(record)
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  return {
    checkNow,
    async current() {
      const verdict = state.verdict;
      if (verdict === undefined) return checkNow();
      if (now() - state.checkedAt >= ttlMs) void checkNow();
      return verdict;
    },
  };
}
