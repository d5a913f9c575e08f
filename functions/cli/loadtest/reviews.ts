// Realistic pod DELETE reviews for a simulation teardown, as the API server sends them to reschedule-delete.
// Pure and deterministic: a seed and a clock value in, the same reviews out. No I/O, no Date.now().
//
// What a teardown looks like (kubernetes/kubernetes pkg/controller/namespace/deletion/
// namespaced_resources_deleter.go, pkg/controller/garbagecollector/operations.go, pkg/registry/core/pod/
// strategy.go CheckGracefulDelete; kubernetes-sigs/kwok pkg/kwok/controllers/pod_controller.go):
// - The namespace controller deletes every pod of a deleted virtual namespace through DeleteCollection: one
//   review per pod, request.name "" (read the pod from oldObject), graceful, no deletionTimestamp yet.
// - The garbage collector deletes each dependent of a deleted owner (bare pods of the SimulationRoot, pods of
//   a ReplicaSet): request.name set, DeleteOptions with a UID precondition and a propagation policy.
// - A Running pod deleted gracefully is then finished off by KWOK's final grace-0 DELETE; the API server
//   calls the webhook twice for it (shortening update, then the storage delete): deletionTimestamp set, first
//   with the pod's grace period, then with deletionGracePeriodSeconds 0.
// - A finished pod (Succeeded/Failed) gets grace 0 from the API server right away: the initiator's DELETE
//   itself produces the same update-then-delete pair, and KWOK sends nothing.
// None of these is an interruption, so a correct reschedule-delete creates no clone for any of them.
// Interruptions (a user's delete of a Running bare pod, a taint eviction marked DisruptionTarget) are only
// generated when asked for, and each one should create exactly one clone.
// This file orders the burst; the pods come from teardown-pod.ts, each deletion's reviews from
// teardown-deletion.ts.

import {
  type GeneratedReview,
  type Phase,
  type PodContext,
  type PodShape,
  REVIEW_KINDS,
  type ReviewKind,
  type TeardownOptions,
  type TeardownReviews,
} from "./review-types.js";
import { seededRandom } from "./seeded-random.js";
import { type Initiator, podDeletion } from "./teardown-deletion.js";
import { buildPod } from "./teardown-pod.js";

export const DEFAULT_NAMESPACES = ["default", "shop", "batch", "monitoring"];

// Deletions are emitted in waves: the namespace controller or GC deletes a batch of pods, then KWOK finishes
// them off. Within a burst this puts the three reviews of one pod apart, as in a cluster.
const WAVE = 32;

function emptyCounts(): Record<ReviewKind, number> {
  return Object.fromEntries(REVIEW_KINDS.map((kind) => [kind, 0])) as Record<ReviewKind, number>;
}

export function validateTeardownOptions(options: TeardownOptions): string | undefined {
  if (!Number.isInteger(options.count) || options.count < 1) return "count must be a positive whole number";
  const fractions: [string, number | undefined][] = [
    ["interruptions", options.interruptions],
    ["bareShare", options.bareShare],
    ["finishedShare", options.finishedShare],
  ];
  for (const [name, value] of fractions) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0 && value <= 1)) {
      return `${name} must be a fraction from 0 to 1, got ${value}`;
    }
  }
  if (!options.simName || !options.rootName || !options.rootUid)
    return "simName, rootName and rootUid are required";
  if (Number.isNaN(options.now.getTime())) return "now must be a valid date";
  return undefined;
}

/**
 * A teardown burst of `count` DELETE reviews. With interruptions 0 (the default) a correct reschedule-delete
 * creates no clone; otherwise expectedClones says how many it should create.
 */
export function buildTeardownReviews(options: TeardownOptions): TeardownReviews {
  const invalid = validateTeardownOptions(options);
  if (invalid) throw new RangeError(invalid);
  const random = seededRandom(options.seed ?? 1);
  const ctx: PodContext = {
    random,
    options,
    namespaces: options.namespaces && options.namespaces.length > 0 ? options.namespaces : DEFAULT_NAMESPACES,
    prefix: options.virtualNsPrefix ?? "virtual",
  };
  const interruptions = options.interruptions ?? 0;
  const bareShare = options.bareShare ?? 0.4;
  const finishedShare = options.finishedShare ?? 0.3;

  const reviews: GeneratedReview[] = [];
  const byKind = emptyCounts();
  let expectedClones = 0;
  let pods = 0;
  const add = (review: GeneratedReview): boolean => {
    if (reviews.length >= options.count) return false;
    reviews.push(review);
    byKind[review.kind] += 1;
    return true;
  };

  while (reviews.length < options.count) {
    const later: GeneratedReview[] = [];
    for (let i = 0; i < WAVE && reviews.length < options.count; i++) {
      const interrupted = random() < interruptions;
      let shape: PodShape;
      let initiator: Initiator;
      if (interrupted) {
        // A Running bare pod taken away while the simulation runs: half by a user, half by taint eviction.
        shape = buildPod(ctx, true, "Running", random() < 0.5);
        initiator = "interruption";
      } else {
        const finished = random() < finishedShare;
        const phase: Phase = finished ? (random() < 0.8 ? "Succeeded" : "Failed") : "Running";
        shape = buildPod(ctx, random() < bareShare, phase, false);
        initiator = random() < 0.5 ? "namespace-controller" : "garbage-collector";
      }
      const deletion = podDeletion(ctx, initiator, shape);
      pods += 1;
      for (const review of deletion.first) {
        if (add(review) && review.kind === "interruption") expectedClones += 1;
      }
      later.push(...deletion.later);
    }
    for (const review of later) add(review);
  }
  return { reviews, expectedClones, byKind, pods };
}
