// Replica bounds per function: max-scale, and Knative's activation-scale fitted between min-scale and
// max-scale. Pure: resolved knobs in, checked bounds out; a combination the platform would refuse throws a
// TuningError that names the flags to change.
//
// Knative's webhook refuses an activation-scale annotation unless min-scale <= activation-scale <= max-scale
// (max 0 = unbounded) and activation-scale >= 2 (knative/serving pkg/apis/autoscaling/annotation_validation.go,
// validateMinMaxScale), and refuses max-scale below min-scale. An activation scale of 1 is Knative's own
// default, so 1 renders no annotation at all (knative/manifests.ts).

import type { FunctionName } from "../shared/base/index.js";
import { DEFAULT_TUNING, TuningError } from "./tuning.js";

/** Knative's activation scale when the annotation is absent. */
export const KNATIVE_DEFAULT_ACTIVATION_SCALE = 1;

/** Where each bound of one function came from: the flag that set it, or undefined for the default. */
export interface BoundSources {
  minScaleFlag: string | undefined;
  maxScaleFlag: string | undefined;
  activationScaleFlag: string | undefined;
}

export interface FunctionBounds {
  minScale: number;
  maxScale: number;
  activationScale: number;
}

function describeMin(fn: FunctionName, min: number, flag: string | undefined): string {
  return flag ? `${flag} ${min}` : `${fn}'s min-scale ${min} (the default)`;
}

function describeMax(fn: FunctionName, max: number, flag: string | undefined): string {
  return flag ? `${flag} ${max}` : `${fn}'s max-scale ${max} (the default; set --max-scale-${fn})`;
}

/** min-scale <= max-scale, where max 0 means unbounded. */
export function checkMinMax(fn: FunctionName, bounds: FunctionBounds, sources: BoundSources): void {
  const { minScale, maxScale } = bounds;
  if (maxScale !== 0 && maxScale < Math.max(minScale, 1)) {
    throw new TuningError(
      `${describeMax(fn, maxScale, sources.maxScaleFlag)} is below ${describeMin(fn, minScale, sources.minScaleFlag)}: ` +
        "the replicas kept warm must fit under the upper bound",
    );
  }
}

/**
 * The activation scale Knative will accept. A given value must lie in [min-scale, max-scale]; the default
 * (knative/tuning.ts) is lowered to max-scale, and dropped to Knative's own 1 when min-scale already keeps
 * at least that many replicas warm (a revision that never reaches zero is never activated).
 */
export function fitActivationScale(fn: FunctionName, bounds: FunctionBounds, sources: BoundSources): number {
  const { minScale, maxScale, activationScale } = bounds;
  const bounded = maxScale === 0 ? activationScale : Math.min(activationScale, maxScale);
  const flag = sources.activationScaleFlag;
  if (flag === undefined) {
    const derived = Math.min(DEFAULT_TUNING[fn].activationScale, bounded);
    return derived < 2 || derived < minScale ? KNATIVE_DEFAULT_ACTIVATION_SCALE : derived;
  }
  const rule = "Knative requires min-scale <= activation-scale <= max-scale";
  if (activationScale < minScale) {
    throw new TuningError(
      `${flag} ${activationScale} is below ${describeMin(fn, minScale, sources.minScaleFlag)}: ${rule}`,
    );
  }
  if (bounded !== activationScale) {
    throw new TuningError(
      `${flag} ${activationScale} is above ${describeMax(fn, maxScale, sources.maxScaleFlag)}: ${rule}`,
    );
  }
  return activationScale;
}
