// Least privilege enforced by the cluster: a ValidatingAdmissionPolicy (GA since 1.30) that lets the functions'
// service accounts create pods only in namespaces labelled simkube.io/virtual=true and only pinned to virtual
// nodes. On the real API server it refuses a clone aimed at kube-system made as reschedule-delete's account,
// which RBAC alone allows, while the same account still creates a clone-shaped pod in a virtual namespace.

import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { FUNCTIONS_NAMESPACE } from "../../../functions/local-cluster/cluster.js";
import { clientsFor, eventually } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import type { WorldRef } from "./world.js";

const POLICY = "simkube-fn-pods-in-virtual-namespaces";

/** The policy and its binding; `accountPrefix` selects the functions' service accounts. */
export function functionsPodPolicy(
  accountPrefix: string,
): [Record<string, unknown>, Record<string, unknown>] {
  const policy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: POLICY },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
        ],
      },
      matchConditions: [
        {
          name: "functions-accounts-only",
          expression: `request.userInfo.username.startsWith('${accountPrefix}')`,
        },
      ],
      validations: [
        {
          expression:
            "namespaceObject != null && has(namespaceObject.metadata.labels) && 'simkube.io/virtual' in namespaceObject.metadata.labels && namespaceObject.metadata.labels['simkube.io/virtual'] == 'true'",
          message:
            "the simkube-fn functions may create pods only in virtual namespaces (label simkube.io/virtual=true)",
        },
        {
          expression:
            "has(object.spec.nodeSelector) && 'type' in object.spec.nodeSelector && object.spec.nodeSelector['type'] == 'virtual'",
          message: "the simkube-fn functions may create pods only with nodeSelector type=virtual",
        },
      ],
    },
  };
  const binding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: POLICY },
    spec: { policyName: POLICY, validationActions: ["Deny"] },
  };
  return [policy, binding];
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
        const [policy, binding] = functionsPodPolicy(`system:serviceaccount:${FUNCTIONS_NAMESPACE}:`);
        await w.admin.admission.createValidatingAdmissionPolicy({ body: policy as never });
        await w.admin.admission.createValidatingAdmissionPolicyBinding({ body: binding as never });
        const refusal = await eventually("the policy to refuse the kube-system clone", async () => {
          try {
            await fn.createNamespacedPod({ namespace: "kube-system", body: escalatedClone(), dryRun: "All" });
            return undefined;
          } catch (err) {
            return err as { code?: number; body?: string };
          }
        });
        // A denying policy answers 422 Invalid (its validations set no reason), not 403.
        assert.equal(refusal.code, 422);
        assert.match(
          String(refusal.body),
          /ValidatingAdmissionPolicy .*simkube-fn-pods-in-virtual-namespaces.* denied request/,
        );
        assert.match(String(refusal.body), /only in virtual namespaces/);
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
