// The cluster's own guard on the one dangerous thing the functions may do, creating pods: a
// ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) that lets the
// functions' service accounts create a pod only in a namespace labelled simkube.io/virtual=true and only
// pinned to virtual nodes (nodeSelector type=virtual). A function tricked into cloning a privileged pod into
// kube-system is refused by the API server whatever its code does. Pure builders.

import type { IValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import type { IValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import { VIRTUAL_LABEL_KEY, VIRTUAL_NODE_SELECTOR_KEY, VIRTUAL_NODE_SELECTOR_VALUE } from "../shared/keys.js";
import type { ResolvedOptions } from "./deployment-options.js";
import { serviceAccountUsername } from "./rbac.js";

/** CEL string literal. */
export function celString(value: string): string {
  return `'${value.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

export function podCreatePolicyName(o: ResolvedOptions): string {
  return `${o.name}-pod-creates`;
}

/** Which requests the policy judges: pod creates by the functions' accounts, nobody else's. */
export function podCreateMatchConditions(o: ResolvedOptions): { name: string; expression: string }[] {
  // Every function, not only the one RBAC lets create pods: the policy holds even if a Role grows.
  const users = [...new Set(o.functions.map((fn) => serviceAccountUsername(o, fn)))].map(celString);
  return [
    { name: "functions-service-accounts", expression: `request.userInfo.username in [${users.join(", ")}]` },
  ];
}

/** What such a create must satisfy. namespaceObject is the target Namespace (pods are namespaced). */
export function podCreateValidations(): { expression: string; message: string; reason: string }[] {
  const label = celString(VIRTUAL_LABEL_KEY);
  const key = celString(VIRTUAL_NODE_SELECTOR_KEY);
  return [
    {
      expression:
        `namespaceObject != null && has(namespaceObject.metadata.labels) && ` +
        `${label} in namespaceObject.metadata.labels && namespaceObject.metadata.labels[${label}] == 'true'`,
      message: `simkube-fn may create pods only in namespaces labelled ${VIRTUAL_LABEL_KEY}=true`,
      reason: "Forbidden",
    },
    {
      expression:
        `has(object.spec.nodeSelector) && ${key} in object.spec.nodeSelector && ` +
        `object.spec.nodeSelector[${key}] == ${celString(VIRTUAL_NODE_SELECTOR_VALUE)}`,
      message: `simkube-fn may create only pods with nodeSelector ${VIRTUAL_NODE_SELECTOR_KEY}=${VIRTUAL_NODE_SELECTOR_VALUE}`,
      reason: "Forbidden",
    },
  ];
}

export function buildPodCreatePolicy(
  o: ResolvedOptions,
  labels: Record<string, string>,
): [IValidatingAdmissionPolicy, IValidatingAdmissionPolicyBinding] {
  const name = podCreatePolicyName(o);
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata: { name, labels },
      spec: {
        // Fail: a policy that cannot be evaluated must not let the create through.
        failurePolicy: "Fail",
        matchConstraints: {
          resourceRules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
          ],
        },
        matchConditions: podCreateMatchConditions(o),
        validations: podCreateValidations(),
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
