// Retry with capped exponential backoff and full jitter, inside a deadline. The clock, the sleep and the
// randomness are injected so tests run without timers; production passes nothing and gets real ones.
//
// Full jitter (delay = random() * min(max, base * 2^attempt)) spreads the retries of many replicas that all
// saw the same API-server hiccup, instead of bringing them back in lockstep.

export interface RetryOptions {
  /** Give up once the next attempt could not start before this many ms after the first one. */
  deadlineMs: number;
  /** Cap of the first backoff; doubles per attempt. 50 ms by default. */
  baseDelayMs?: number;
  /** Ceiling of any single backoff. 1000 ms by default. */
  maxDelayMs?: number;
  /** Errors worth another attempt; anything else is thrown at once. */
  isRetryable: (err: unknown) => boolean;
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds clock (monotonic in production). */
  now?: () => number;
  /** In [0, 1). */
  random?: () => number;
  /** Called before each backoff, e.g. to log or count the retry. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  err: unknown;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The backoff before attempt `attempt + 1` (attempt counts from 1). Pure. */
export function backoffDelay(
  attempt: number,
  baseDelayMs: number,
  maxDelayMs: number,
  random: number,
): number {
  const cap = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random * cap);
}

/**
 * Runs `fn` until it succeeds, fails with a non-retryable error, or the deadline leaves no room for another
 * attempt; then the last error is thrown as it was (callers still branch on it). `fn` gets the attempt number.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const maxDelayMs = options.maxDelayMs ?? 1000;
  const deadline = now() + options.deadlineMs;

  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!options.isRetryable(err)) throw err;
      const delayMs = backoffDelay(attempt, baseDelayMs, maxDelayMs, random());
      if (now() + delayMs >= deadline) throw err;
      options.onRetry?.({ attempt, delayMs, err });
      await sleep(delayMs);
    }
  }
}
