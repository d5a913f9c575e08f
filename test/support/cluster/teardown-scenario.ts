// The end of a simulation, as SimKube's driver ends it: its SimulationRoot deleted with foreground
// propagation. The garbage collector and the namespace controller remove every virtual namespace and pod;
// reschedule-delete is sent none of their reviews, nor KWOK's final ones (the DELETE webhook's match
// conditions: no pod carries DisruptionTarget), makes no clone, and the API server logs no webhook error.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { RescheduleStatsSnapshot } from "../../../functions/reschedule-delete/stats.js";
import { VIRTUAL_LABEL_KEY } from "../../../shared/base/keys.js";
import { eventually } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import { requestsTo, type WorldRef } from "./world.js";

/** Lines of the API server's log that report a failed webhook call. */
export function webhookErrors(logDir: string): string[] {
  const log = readFileSync(path.join(logDir, "kube-apiserver.log"), "utf8");
  return log.split("\n").filter((line) => /failed calling webhook/.test(line));
}

export function teardownCase(ref: WorldRef): ClusterCase {
  return {
    name: "teardown: the driver's SimulationRoot deleted in the foreground removes every virtual namespace and pod, sending reschedule-delete no review",
    timeoutMs: 180_000,
    run: async (t) => {
      const w = ref.get();
      const fn = w.cluster.functions["reschedule-delete"];
      const clonesBefore = (fn.stats() as RescheduleStatsSnapshot).clones;
      const from = w.cluster.reviews.length;
      const errorsBefore = webhookErrors(w.cluster.logDir).length;
      const t0 = Date.now();
      await w.admin.custom.deleteClusterCustomObject({
        group: "simkube.io",
        version: "v1",
        plural: "simulationroots",
        name: w.cluster.root.metadata?.name ?? "",
        propagationPolicy: "Foreground",
      });
      await eventually(
        "every virtual namespace gone",
        async () => {
          const list = await w.admin.core.listNamespace({ labelSelector: `${VIRTUAL_LABEL_KEY}=true` });
          return list.items.length === 0;
        },
        150_000,
      );
      const deletes = requestsTo(w, "reschedule-delete", from).filter((r) => r.operation === "DELETE");
      t.diagnostic(`teardown: ${Date.now() - t0} ms, ${deletes.length} DELETE reviews`);
      assert.equal(deletes.length, 0, "every teardown review is filtered by a match condition");
      assert.deepEqual((fn.stats() as RescheduleStatsSnapshot).clones, clonesBefore);
      assert.equal(webhookErrors(w.cluster.logDir).length - errorsBefore, 0);
    },
  };
}
