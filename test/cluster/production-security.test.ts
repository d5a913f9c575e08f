// `cluster up`'s production security setup on a real API server, in a cluster of its own: the callers the
// functions accept and the accounts they act as (security-scenarios.ts); the pod-create policy, each rule
// refusing its way out of the fence while clone-shaped pods are admitted (policy-scenarios.ts). Every clone of the deletion table is made under the same policy
// in real-cluster.test.ts.

import { after } from "node:test";
import { createVirtualNamespace } from "../support/cluster/kube.js";
import { WORKLOAD_NAMESPACE } from "../support/cluster/mutation-scenarios.js";
import { policyCases } from "../support/cluster/policy-scenarios.js";
import { securityCases } from "../support/cluster/security-scenarios.js";
import { openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { lazyWorldRef } from "../support/cluster/world.js";

const suite = await openClusterSuite({ reschedule: true });
const ref = lazyWorldRef(suite);

registerClusterCases("test/cluster/production-security.test.ts", suite, [
  ...securityCases(ref),
  {
    name: "policy: the virtual namespace the cases use",
    run: async () => {
      const w = ref.get();
      await createVirtualNamespace(w.cluster, w.admin.core, WORKLOAD_NAMESPACE);
    },
  },
  ...policyCases(ref, WORKLOAD_NAMESPACE),
]);

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});
