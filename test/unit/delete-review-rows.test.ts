// The real-cluster suite reduces reschedule-delete's DELETE reviews to rows (test/support/cluster/reviews.ts) and
// collapses the API server's repeated admission of one step, which must not hide a step of its own.

import assert from "node:assert/strict";
import { test } from "node:test";
import { collapseRepeats, type DeleteReviewRow } from "../support/cluster/reviews.js";

const row = (over: Partial<DeleteReviewRow>): DeleteReviewRow => ({
  user: "node-controller",
  name: "tainted",
  deletionTimestamp: false,
  dryRun: false,
  phase: "Running",
  ...over,
});

test("identical consecutive rows are one step reviewed twice", () => {
  const first = row({ disruptionTarget: "DeletionByTaintManager" });
  assert.deepEqual(collapseRepeats([first, { ...first }, row({ deletionTimestamp: true })]), [
    first,
    row({ deletionTimestamp: true }),
  ]);
});

test("a row the next one repeats with the controller's DisruptionTarget is a stale copy of that step", () => {
  const stale = row({});
  const patched = row({ disruptionTarget: "DeletionByTaintManager" });
  assert.deepEqual(collapseRepeats([stale, patched]), [patched]);
  // The pod GC's: Running without the condition, then Failed with it.
  const gc = row({ user: "pod-garbage-collector", phase: "Failed", disruptionTarget: "DeletionByPodGC" });
  assert.deepEqual(collapseRepeats([row({ user: "pod-garbage-collector" }), gc, { ...gc }]), [gc]);
});

test("rows of different steps or users stay, with or without a DisruptionTarget", () => {
  const user = row({ user: "admin" });
  const taint = row({ disruptionTarget: "DeletionByTaintManager" });
  assert.deepEqual(collapseRepeats([user, taint]), [user, taint]);
  const firstPhase = row({});
  const finalPhase = row({ deletionTimestamp: true, disruptionTarget: "DeletionByTaintManager" });
  assert.deepEqual(collapseRepeats([firstPhase, finalPhase]), [firstPhase, finalPhase]);
  const dryRun = row({ dryRun: true });
  assert.deepEqual(collapseRepeats([dryRun, taint]), [dryRun, taint]);
  // A condition that goes away is not a stale copy: both stay.
  assert.deepEqual(collapseRepeats([taint, firstPhase]), [taint, firstPhase]);
});
