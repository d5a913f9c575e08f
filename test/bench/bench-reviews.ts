// The review sets the profile and the instruction counts load a function with: the bench's 5,000 CREATE
// reviews (create-reviews.ts) or teardown DELETE reviews (the load test's), from seed 1 unless told.

import type { LoadRequest } from "../../functions/cli/loadtest/load.js";
import { buildTeardownReviews } from "../../functions/cli/loadtest/reviews.js";
import {
  BENCH_ROOT_NAME,
  BENCH_ROOT_UID,
  BENCH_SIM_NAME,
  BENCH_TRACED_NAMESPACES,
  BENCH_VIRTUAL_NAMESPACES,
} from "./bench-world.js";
import { buildCreateRequests } from "./create-reviews.js";

export type ReviewPath = "create" | "teardown";

/** How many distinct reviews a set has unless told: the bench cycles through them. */
export const BENCH_REVIEW_COUNT = 5000;

export interface BenchReviewOptions {
  count?: number;
  seed?: number;
  /** When the teardown's pods were deleted; default now. */
  now?: Date;
}

/** The teardown's reviews with what the load test knows of them (their kinds, for the bench's results). */
export function benchTeardown(options: BenchReviewOptions = {}): ReturnType<typeof buildTeardownReviews> {
  return buildTeardownReviews({
    count: options.count ?? BENCH_REVIEW_COUNT,
    simName: BENCH_SIM_NAME,
    rootName: BENCH_ROOT_NAME,
    rootUid: BENCH_ROOT_UID,
    namespaces: BENCH_TRACED_NAMESPACES,
    seed: options.seed ?? 1,
    now: options.now ?? new Date(),
  });
}

export function benchReviews(path: ReviewPath, options: BenchReviewOptions = {}): LoadRequest[] {
  if (path === "create") {
    return buildCreateRequests({
      count: options.count ?? BENCH_REVIEW_COUNT,
      rootName: BENCH_ROOT_NAME,
      rootUid: BENCH_ROOT_UID,
      namespaces: BENCH_VIRTUAL_NAMESPACES,
      seed: options.seed ?? 1,
    });
  }
  return benchTeardown(options).reviews.map((r) => ({
    uid: r.uid,
    body: Buffer.from(JSON.stringify(r.review)),
  }));
}
