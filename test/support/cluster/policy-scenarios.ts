// Least privilege enforced by the cluster: the ValidatingAdmissionPolicy (GA since 1.30) `simkube-fn manifests`
// renders, which lets the functions' service accounts create pods only in namespaces labelled
// simkube.io/virtual=true and only pinned to virtual nodes. On the real API server it refuses a clone aimed at kube-system made as reschedule-delete's account,
// which RBAC alone allows, while the same account still creates a clone-shaped pod in a virtual namespace.

import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { buildAllManifests, type DeploymentOptions, type Manifest } from "../../../knative/manifests.js";
import { podCreatePolicyName } from "../../../knative/pod-create-policy.js";
import { clientsFor, eventually } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import type { WorldRef } from "./world.js";

/**
 * The policy and its binding exactly as `simkube-fn manifests` renders them for this cluster's deployment
 * (knative/pod-create-policy.ts): the functions' own service accounts, virtual namespaces, virtual nodes.
 */
export function renderedPodPolicy(deployment: DeploymentOptions): Manifest[] {
  return buildAllManifests(deployment).filter(
    (o) => o.kind === "ValidatingAdmissionPolicy" || o.kind === "ValidatingAdmissionPolicyBinding",
  );
}

/** The privileged, unpinned pod a tricked function would clone into kube-system. */
function escalatedClone(): V1Pod {
  return {
    metadata: { name: "priv-debug-clone-1" },
    spec: {
      hostNetwork: true,
      hostPID: true,
      containers: [
        { name: "shell", image: "registry.example/debug:1", securityContext: { privileged: true } },
      ],
    },
  };
}

export function policyCases(ref: WorldRef, virtualNamespace: string): ClusterCase[] {
  return [
    {
      name: "policy: a ValidatingAdmissionPolicy refuses reschedule-delete's account a pod in kube-system that RBAC allows",
      run: async () => {
        const w = ref.get();
        const fn = clientsFor(w.cluster.functionKubeconfigs["reschedule-delete"]).core;
        // RBAC alone lets the account do it (dry run: nothing is stored).
        await fn.createNamespacedPod({ namespace: "kube-system", body: escalatedClone(), dryRun: "All" });
        const [policy, binding] = renderedPodPolicy(w.cluster.deployment);
        assert.equal(policy?.kind, "ValidatingAdmissionPolicy");
        assert.equal(binding?.kind, "ValidatingAdmissionPolicyBinding");
        await w.admin.admission.createValidatingAdmissionPolicy({ body: policy as never });
        await w.admin.admission.createValidatingAdmissionPolicyBinding({ body: binding as never });
        const name = podCreatePolicyName(resolveOptions(w.cluster.deployment));
        const refusal = await eventually("the policy to refuse the kube-system clone", async () => {
          try {
            await fn.createNamespacedPod({ namespace: "kube-system", body: escalatedClone(), dryRun: "All" });
            return undefined;
          } catch (err) {
            return err as { code?: number; body?: string };
          }
        });
        // The rendered validations give reason Forbidden, so the API server answers 403 (without a reason a
        // denying policy answers 422 Invalid).
        assert.equal(refusal.code, 403);
        assert.match(
          String(refusal.body),
          new RegExp(`ValidatingAdmissionPolicy .*${name}.* denied request`),
        );
        assert.match(String(refusal.body), /only in namespaces labelled simkube.io\/virtual=true/);
        // The same account still creates a clone in a virtual namespace (pinned, as every clone is).
        const created = await fn.createNamespacedPod({
          namespace: virtualNamespace,
          body: {
            metadata: { name: "policy-allowed-clone" },
            spec: {
              nodeSelector: { type: "virtual" },
              tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
              containers: [{ name: "app", image: "registry.example/app:1" }],
            },
          },
          dryRun: "All",
        });
        assert.equal(created.metadata?.name, "policy-allowed-clone");
      },
    },
  ];
}
