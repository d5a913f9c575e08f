// The reduction that lets the API double be held to the real API server's DELETE reviews
// (test/support/cluster/double-scenarios.ts): it must absorb what the real server's match conditions filter
// and the races seen on the real cluster, and nothing else. The "real" sequences below are ones the
// real-cluster suite recorded.

import assert from "node:assert/strict";
import { test } from "node:test";
import { comparableRows } from "../support/cluster/double-scenarios.js";
import type { DeleteReviewRow } from "../support/cluster/reviews.js";

const row = (user: string, ts: boolean, extra: Partial<DeleteReviewRow> = {}): DeleteReviewRow => ({
  user,
  name: "set",
  deletionTimestamp: ts,
  phase: "Running",
  dryRun: false,
  ...extra,
});
const evicted = { disruptionTarget: "EvictionByEvictionAPI" };

test("final-phase rows of an undisrupted pod are what the real server no longer sends: dropped on both sides", () => {
  // What the double sends for a user's graceful delete (it ignores matchConditions), and what the real server does.
  const double = [row("admin", false), row("kwok", true, { grace: 30 }), row("kwok", true, { grace: 0 })];
  assert.deepEqual(comparableRows(double), comparableRows([row("admin", false)]));
  // A grace-0 delete: whoever reviewed the storage delete (the user, KWOK or both), only the first phase counts.
  assert.deepEqual(
    comparableRows([row("admin", false), row("admin", true, { grace: 0 }), row("kwok", true, { grace: 0 })]),
    [row("admin", false)],
  );
  // The user's first review again after KWOK's (measured once under CPU load).
  assert.deepEqual(
    comparableRows([row("admin", false), row("kwok", true, { grace: 0 }), row("admin", false)]),
    [row("admin", false)],
  );
});

test("the driver's rows and the teardown controllers' first-phase rows are dropped", () => {
  const namespaceController = row("namespace-controller", false, { name: "" });
  const gc = row("generic-garbage-collector", false);
  assert.deepEqual(comparableRows([row("driver", false), namespaceController, gc]), []);
  // A teardown controller's final-phase review of a disrupted pod would still count.
  const disrupted = row("namespace-controller", true, { name: "", ...evicted });
  assert.deepEqual(comparableRows([namespaceController, disrupted]), [disrupted]);
});

test("a missing or different first phase is a difference", () => {
  const double = [row("admin", false), row("kwok", true, { grace: 0 })];
  assert.notDeepEqual(comparableRows([row("kwok", true, { grace: 0 })]), comparableRows(double));
  assert.notDeepEqual(comparableRows([row("admin", false, { phase: "Pending" })]), comparableRows(double));
  assert.notDeepEqual(comparableRows([row("admin", false, { dryRun: true })]), comparableRows(double));
});

test("a disrupted pod's final rows count: a missing one is a difference, a repeat is not", () => {
  const double = [row("kwok", true, { grace: 30, ...evicted }), row("kwok", true, { grace: 0, ...evicted })];
  assert.notDeepEqual(comparableRows(double.slice(0, 1)), comparableRows(double));
  // KWOK's graceful review sent again after its final one (seen under load) is absorbed...
  assert.deepEqual(
    comparableRows([...double, row("kwok", true, { grace: 30, ...evicted })]),
    comparableRows(double),
  );
  // ...but a review with facts no earlier review had still counts.
  assert.notDeepEqual(
    comparableRows([...double, row("kwok", true, { grace: 30, ...evicted, phase: "Failed" })]),
    comparableRows(double),
  );
});
