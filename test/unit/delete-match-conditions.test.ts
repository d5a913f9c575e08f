// The DELETE webhook's match conditions may only hide reviews that reschedule-delete would skip anyway: a
// review the API server does not send is a clone nobody can make. Every combination of the facts the
// handler judges by (user, phase, deletionTimestamp, conditions, owner, dry run), for a pod in a virtual
// namespace, goes through both: the conditions, evaluated as CEL with the variables the API server binds,
// and the handler's own triage (functions/reschedule-delete/plan.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluate } from "@marcbachmann/cel-js";
import { triageDelete } from "../../functions/reschedule-delete/plan.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { matchConditionsFor } from "../../knative/manifests.js";
import type { AdmissionRequest } from "../../shared/admission/index.js";
import {
  ADMIN_USER,
  CONTROLLER_MANAGER_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
  POD_GC_USER,
  SIMKUBE_DRIVER_USER,
} from "../../shared/base/identities.js";
import { SIMKUBE_API_VERSION, SIMULATION_ROOT_KIND } from "../../shared/base/index.js";

const DRIVER_USERS = [SIMKUBE_DRIVER_USER];
const OPTIONS = resolveOptions({
  simName: "test-sim",
  webhookUrlBase: "https://fn.example.com",
  image: "registry.example.com/simkube-fn:0.1.0",
  rescheduleInterruptedBarePods: true,
  driverUsers: DRIVER_USERS,
});
const CONDITIONS = matchConditionsFor(OPTIONS, "reschedule-delete");

const USERS = [
  ADMIN_USER,
  SIMKUBE_DRIVER_USER,
  GARBAGE_COLLECTOR_USER,
  NAMESPACE_CONTROLLER_USER,
  KWOK_USER,
  CONTROLLER_MANAGER_USER,
  NODE_CONTROLLER_USER,
  POD_GC_USER,
];
const PHASES = ["Running", "Failed", "Succeeded", "Pending", undefined];
const CONDITION_LISTS: Record<string, unknown[] | undefined> = {
  "no conditions": undefined,
  "empty conditions": [],
  "DisruptionTarget=True": [{ type: "DisruptionTarget", status: "True", reason: "EvictionByEvictionAPI" }],
  "DisruptionTarget=False": [{ type: "DisruptionTarget", status: "False" }],
  "DisruptionTarget without status": [{ type: "DisruptionTarget" }],
  "Ready=True only": [{ type: "Ready", status: "True" }],
  "Ready, then DisruptionTarget=True": [
    { type: "Ready", status: "True" },
    { type: "DisruptionTarget", status: "True", reason: "DeletionByTaintManager" },
  ],
};
const OWNERS = {
  "SimulationRoot (bare)": [
    { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, name: "sk-root", uid: "r" },
  ],
  ReplicaSet: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "s", controller: true }],
};

interface Case {
  label: string;
  request: AdmissionRequest;
  terminating: boolean;
  disrupted: boolean;
}

const isDisruptionTargetTrue = (c: unknown) =>
  (c as { type?: string }).type === "DisruptionTarget" && (c as { status?: string }).status === "True";

function* deleteReviews(): Generator<Case> {
  for (const username of USERS)
    for (const phase of PHASES)
      for (const terminating of [false, true])
        for (const [conditionsLabel, conditions] of Object.entries(CONDITION_LISTS))
          for (const [ownerLabel, ownerReferences] of Object.entries(OWNERS))
            for (const dryRun of [false, true]) {
              const status: Record<string, unknown> = {};
              if (phase !== undefined) status.phase = phase;
              if (conditions !== undefined) status.conditions = conditions;
              const oldObject = {
                metadata: {
                  name: "p",
                  namespace: "virtual-ns",
                  uid: "u",
                  ownerReferences,
                  ...(terminating ? { deletionTimestamp: "2024-01-01T00:00:30Z" } : {}),
                },
                status,
              };
              yield {
                label: `${username}, ${phase ?? "no phase"}, ${terminating ? "final" : "first"} phase, ${conditionsLabel}, ${ownerLabel}, dryRun ${dryRun}`,
                request: {
                  uid: "review",
                  kind: { group: "", version: "v1", kind: "Pod" },
                  operation: "DELETE",
                  name: "p",
                  namespace: "virtual-ns",
                  userInfo: { username },
                  dryRun,
                  object: null,
                  oldObject,
                },
                terminating,
                disrupted: (conditions ?? []).some(isDisruptionTargetTrue),
              };
            }
}

/** What the API server does: the webhook is called only when every condition evaluates to true. */
function sent(request: AdmissionRequest): boolean {
  const vars = { object: null, oldObject: request.oldObject, request };
  return CONDITIONS.every((mc) => evaluate(mc.expression, vars) === true);
}

describe("the DELETE webhook's match conditions", () => {
  it("hide no review reschedule-delete would act on", () => {
    let hidden = 0;
    let candidates = 0;
    for (const { label, request } of deleteReviews()) {
      const triage = triageDelete(request, DRIVER_USERS);
      if ("candidate" in triage) candidates++;
      if (sent(request)) continue;
      hidden++;
      assert.ok("skip" in triage, `hidden from the function, but it would act on: ${label}`);
    }
    // Both sides of the comparison happened: reviews hidden, and reviews the function acts on.
    assert.ok(hidden > 0 && candidates > 0, `hidden ${hidden}, candidates ${candidates}`);
  });

  it("send final-phase reviews only for a pod carrying DisruptionTarget=True", () => {
    for (const { label, request, terminating, disrupted } of deleteReviews()) {
      if (!terminating) continue;
      assert.equal(sent(request), disrupted, label);
    }
  });
});
