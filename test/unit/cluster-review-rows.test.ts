// The reduction that lets the API double be held to the real API server's DELETE reviews
// (test/support/cluster/double-scenarios.ts): it must absorb the races seen on the real cluster, and nothing
// else. The "real" sequences below are ones the real-cluster suite recorded.

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

const FORCE = "force delete, grace 0 (user)";
const NAMESPACE = "namespace deletion (namespace controller)";

test("a grace-0 delete: whoever reviews the final step (the user, KWOK or both) compares equal", () => {
  const double = [row("admin", false), row("admin", true, { grace: 0 })];
  for (const real of [
    [row("admin", false), row("admin", true, { grace: 0 })],
    [row("admin", false), row("admin", true, { grace: 0 }), row("kwok", true, { grace: 0 })],
    [row("admin", false), row("kwok", true, { grace: 0 })],
    // The user's first review again after KWOK's (measured once under CPU load).
    [row("admin", false), row("kwok", true, { grace: 0 }), row("admin", false)],
  ]) {
    assert.deepEqual(comparableRows(FORCE, real), comparableRows(FORCE, double));
  }
});

test("a grace-0 delete still differs when the first phase or the final step's facts differ", () => {
  const double = [row("admin", false), row("admin", true, { grace: 0 })];
  assert.notDeepEqual(
    comparableRows(FORCE, [row("admin", true, { grace: 0 })]),
    comparableRows(FORCE, double),
  );
  assert.notDeepEqual(
    comparableRows(FORCE, [row("admin", false), row("kwok", true, { grace: 30 })]),
    comparableRows(FORCE, double),
  );
  assert.notDeepEqual(comparableRows(FORCE, [row("admin", false)]), comparableRows(FORCE, double));
});

test("namespace deletion: the controller's rows are absorbed (first phase filtered by the real server, repeats are timing); KWOK's are not", () => {
  const controller = (ts: boolean) =>
    row("namespace-controller", ts, { name: "", ...(ts ? { grace: 30 } : {}) });
  // The double ignores matchConditions, so it sends the first phase "not-teardown-controller-deletes" filters.
  const double = [controller(false), row("kwok", true, { grace: 30 }), row("kwok", true, { grace: 0 })];
  const real = [
    row("kwok", true, { grace: 30 }),
    controller(true),
    row("kwok", true, { grace: 30 }),
    row("kwok", true, { grace: 0 }),
    row("kwok", true, { grace: 0 }),
  ];
  assert.deepEqual(comparableRows(NAMESPACE, real), comparableRows(NAMESPACE, double));
  assert.notDeepEqual(comparableRows(NAMESPACE, real.slice(0, 3)), comparableRows(NAMESPACE, double));
});

test("elsewhere KWOK's rows count: a missing final review is a difference", () => {
  const path = "graceful delete (user)";
  const double = [row("admin", false), row("kwok", true, { grace: 30 }), row("kwok", true, { grace: 0 })];
  assert.deepEqual(
    comparableRows(path, [...double, double[2] as DeleteReviewRow]),
    comparableRows(path, double),
  );
  assert.notDeepEqual(comparableRows(path, double.slice(0, 2)), comparableRows(path, double));
});

test("KWOK's graceful review sent again after its final one (seen under load) is absorbed; a new step is not", () => {
  const path = "driver's delete";
  const double = [row("kwok", true, { grace: 30 }), row("kwok", true, { grace: 0 })];
  const real = [...double, row("kwok", true, { grace: 30 })];
  assert.deepEqual(comparableRows(path, real), comparableRows(path, double));
  // A review with facts no earlier review had still counts.
  assert.notDeepEqual(
    comparableRows(path, [...double, row("kwok", true, { grace: 30, phase: "Succeeded" })]),
    comparableRows(path, double),
  );
});
