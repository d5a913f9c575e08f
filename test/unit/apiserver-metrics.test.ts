// Reading a webhook's calls and match-condition exclusions out of kube-apiserver's /metrics text.

import assert from "node:assert/strict";
import { test } from "node:test";
import { countersBetween, webhookCounters } from "../support/cluster/apiserver-metrics.js";

// Lines in the shape kube-apiserver v1.36 writes them (HELP/TYPE comments, histogram buckets, other webhooks).
const METRICS = `# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="reschedule-delete.simkube-fn.simkube.io",operation="DELETE",rejected="false",type="admit",le="0.005"} 2
apiserver_admission_webhook_admission_duration_seconds_count{name="reschedule-delete.simkube-fn.simkube.io",operation="DELETE",rejected="false",type="admit"} 5
apiserver_admission_webhook_admission_duration_seconds_count{name="reschedule-delete.simkube-fn.simkube.io",operation="DELETE",rejected="true",type="admit"} 1
apiserver_admission_webhook_admission_duration_seconds_count{name="mutate-create.simkube-fn.simkube.io",operation="CREATE",rejected="false",type="admit"} 70
# TYPE apiserver_admission_match_condition_exclusions_total counter
apiserver_admission_match_condition_exclusions_total{kind="webhook",name="reschedule-delete.simkube-fn.simkube.io",operation="DELETE",type="admit"} 4000
apiserver_admission_match_condition_exclusions_total{kind="webhook",name="mutate-create.simkube-fn.simkube.io",operation="CREATE",type="admit"} 12
apiserver_admission_match_condition_exclusions_total{kind="webhook",hostname="reschedule-delete.x",name="other",operation="DELETE",type="admit"} 9
`;

test("a webhook's calls (every count series, rejected or not) and exclusions; other webhooks and labels ignored", () => {
  assert.deepEqual(webhookCounters(METRICS, "reschedule-delete."), {
    calls: 6,
    matchConditionExclusions: 4000,
  });
  assert.deepEqual(webhookCounters(METRICS, "mutate-create."), { calls: 70, matchConditionExclusions: 12 });
  assert.deepEqual(webhookCounters("", "reschedule-delete."), { calls: 0, matchConditionExclusions: 0 });
});

test("the change between two readings", () => {
  assert.deepEqual(
    countersBetween(
      { calls: 6, matchConditionExclusions: 4000 },
      { calls: 6, matchConditionExclusions: 8000 },
    ),
    { calls: 0, matchConditionExclusions: 4000 },
  );
});
