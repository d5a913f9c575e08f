// Per-function scaling and timeout knobs: how many replicas stay warm, how long the API server waits for an
// answer, and Knative's burst knobs. Pure: options in, checked values out.
//
// Defaults come from measurement (docs/deploying.md, "Cold starts and timeouts"): a process start to first answered
// review is well under a second, so the budget is dominated by the platform's scale from zero (pod
// scheduling, container start, the activator), which Knative reports at ~1-4 s and beyond under load.

export interface FunctionTuning {
  /** Replicas kept warm: Knative min-scale; OpenFaaS com.openfaas.scale.min (0 = scale to zero, Pro only). */
  minScale?: number;
  /** The webhook's timeoutSeconds (1-30, the API server's range). */
  timeoutSeconds?: number;
  /** Knative autoscaling.knative.dev/activation-scale: replicas started when waking from zero. */
  activationScale?: number;
  /** Knative autoscaling.knative.dev/scale-down-delay: how long a replica outlives its last request (0s-1h). */
  scaleDownDelay?: string;
}

export type ResolvedTuning = Required<FunctionTuning>;

/**
 * mutate-create: fail-closed, so it gets the API server's longest wait (30 s) and scales to zero: a cold
 * start only delays a pod's creation. Its traffic comes in simulation-long streams (creates, then KWOK's
 * status updates), which keep it warm on their own, so no scale-down delay.
 *
 * reschedule-delete: fail-open (a timeout loses the clone silently) and called mostly while idle, since
 * the driver's own deletes are filtered out. 15 s covers a scale from zero plus the handler's own 3.5 s
 * answer cap; scale-down-delay 10m keeps it up between the interruptions of one simulation; a wake-up
 * starts 2 replicas because a teardown is a burst of DELETE reviews.
 */
export const DEFAULT_TUNING: Readonly<Record<"mutate-create" | "reschedule-delete", ResolvedTuning>> = {
  "mutate-create": { minScale: 0, timeoutSeconds: 30, activationScale: 1, scaleDownDelay: "0s" },
  "reschedule-delete": { minScale: 0, timeoutSeconds: 15, activationScale: 2, scaleDownDelay: "10m" },
};

export class TuningError extends Error {}

const DURATION = /^(\d+)(s|m|h)$/;
const SECONDS_PER_UNIT: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** Knative accepts a scale-down-delay from 0s to 1h (autoscaler config validation). */
function checkDelay(value: string, what: string): string {
  const match = DURATION.exec(value);
  const seconds = match ? Number(match[1]) * (SECONDS_PER_UNIT[match[2] as string] as number) : Number.NaN;
  if (!(seconds >= 0 && seconds <= 3600)) {
    throw new TuningError(`${what} must be a duration from 0s to 1h such as 90s, 5m or 1h, got "${value}"`);
  }
  return value;
}

function checkWhole(value: number, min: number, max: number, what: string): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new TuningError(`${what} must be a whole number ${range}, got ${value}`);
  }
  return value;
}

/** One function's knobs: what was given for it, else the deployment-wide value, else the default. */
export function resolveTuning(
  fn: "mutate-create" | "reschedule-delete",
  given: FunctionTuning | undefined,
  fallback: FunctionTuning,
): ResolvedTuning {
  const d = DEFAULT_TUNING[fn];
  const pick = <K extends keyof FunctionTuning>(key: K) => given?.[key] ?? fallback[key] ?? d[key];
  return {
    minScale: checkWhole(pick("minScale") as number, 0, Number.MAX_SAFE_INTEGER, `minScale of ${fn}`),
    timeoutSeconds: checkWhole(
      pick("timeoutSeconds") as number,
      1,
      30,
      `timeoutSeconds of ${fn} (seconds; the API server's limit)`,
    ),
    activationScale: checkWhole(
      pick("activationScale") as number,
      1,
      Number.MAX_SAFE_INTEGER,
      `activationScale of ${fn}`,
    ),
    scaleDownDelay: checkDelay(pick("scaleDownDelay") as string, `scaleDownDelay of ${fn}`),
  };
}
