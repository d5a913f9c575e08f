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

export interface BenchReviewOptions {
  count?: number;
  seed?: number;
  /** When the teardown's pods were deleted; default now. */
  now?: Date;
}

export function benchReviews(path: ReviewPath, options: BenchReviewOptions = {}): LoadRequest[] {
  const count = options.count ?? 5000;
  const seed = options.seed ?? 1;
  if (path === "create") {
    return buildCreateRequests({
      count,
      rootName: BENCH_ROOT_NAME,
      rootUid: BENCH_ROOT_UID,
      namespaces: BENCH_VIRTUAL_NAMESPACES,
      seed,
    });
  }
  const teardown = buildTeardownReviews({
    count,
    simName: BENCH_SIM_NAME,
    rootName: BENCH_ROOT_NAME,
    rootUid: BENCH_ROOT_UID,
    namespaces: BENCH_TRACED_NAMESPACES,
    seed,
    now: options.now ?? new Date(),
  });
  return teardown.reviews.map((r) => ({ uid: r.uid, body: Buffer.from(JSON.stringify(r.review)) }));
}
