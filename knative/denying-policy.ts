// A ValidatingAdmissionPolicy and the binding that makes it deny, the pair every fence of the functions'
// accounts is rendered as (knative/pod-create-policy.ts, knative/pod-reads.ts). Pure.

import type { IValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import type { IValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import type { IValidatingAdmissionPolicySpec } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicySpec";

/** What differs between the fences: which requests, for whom, and the rules they must pass. */
export type FenceSpec = Pick<
  IValidatingAdmissionPolicySpec,
  "matchConstraints" | "matchConditions" | "validations"
>;

export function buildDenyingPolicy(
  name: string,
  labels: Record<string, string>,
  fence: FenceSpec,
): [IValidatingAdmissionPolicy, IValidatingAdmissionPolicyBinding] {
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name, labels },
      spec: {
        // Fail: a policy that cannot be evaluated must not let the request through.
        failurePolicy: "Fail",
        matchConstraints: fence.matchConstraints,
        matchConditions: fence.matchConditions,
        validations: fence.validations,
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata: { name, labels },
      spec: { policyName: name, validationActions: ["Deny"] },
    },
  ];
}
