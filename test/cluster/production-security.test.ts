// `cluster up`'s production security setup on a real API server, in a cluster of its own, with the narrowest
// pod reads (`--pod-reads virtual-namespaces`): the callers the functions accept and the accounts they act as
// (security-scenarios.ts); the pod-create policy, each rule refusing its way out of the fence while
// clone-shaped pods are admitted (policy-scenarios.ts); what reschedule-delete's account can no longer read
// or bind, the clones it still makes, and the metadata-only reads answered by the real server and the API
// double alike (pod-read-scenarios.ts). Every clone of the deletion table is made under the same pod-create
// policy, with the default pod reads, in real-cluster.test.ts (which also shows what those reads allow).

import { after } from "node:test";
import { createVirtualNamespace } from "../support/cluster/kube.js";
import { WORKLOAD_NAMESPACE } from "../support/cluster/mutation-scenarios.js";
import { podReadCases } from "../support/cluster/pod-read-scenarios.js";
import { policyCases } from "../support/cluster/policy-scenarios.js";
import { securityCases } from "../support/cluster/security-scenarios.js";
import { openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { lazyWorldRef } from "../support/cluster/world.js";

const suite = await openClusterSuite({ reschedule: true, podReads: "virtual-namespaces" });
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
  ...podReadCases(ref, "virtual-namespaces"),
]);

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});
