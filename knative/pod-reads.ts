// `--pod-reads virtual-namespaces`: reschedule-delete reads pods only in virtual namespaces. RBAC cannot say
// "get pods in namespaces labelled simkube.io/virtual=true", and the virtual namespaces do not exist when the
// functions are deployed, so the function grants itself the read per namespace, after its own checks
// (functions/reschedule-delete/pod-read-grants.ts), and the cluster fences what it may grant:
//   - ClusterRole `<name>-virtual-pod-reads`: get pods, bound nowhere by the manifests;
//   - reschedule-delete's ClusterRole: create rolebindings, and bind on that one role (rbac.ts);
//   - ValidatingAdmissionPolicy `<name>-pod-read-bindings`: a RoleBinding written by reschedule-delete's account
//     must sit in a namespace labelled simkube.io/virtual=true, refer to that ClusterRole, and name that
//     account as its only subject. Without the policy the account could bind its own ClusterRole (whose
//     permissions it holds, which is all RBAC asks) to anyone, in any namespace.
// Pure builders.

import type { IValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import type { IValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import type { IClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { VIRTUAL_LABEL_KEY } from "../shared/base/index.js";
import { buildDenyingPolicy } from "./denying-policy.js";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { celString } from "./pod-create-policy.js";
import { podReadRoleName, serviceAccountName, serviceAccountUsername } from "./rbac.js";

/** Narrow pod reads apply only where reschedule-delete is deployed. */
export function readsPodsPerNamespace(o: ResolvedOptions): boolean {
  return o.podReads === "virtual-namespaces" && o.functions.includes("reschedule-delete");
}

export function podReadBindingPolicyName(o: ResolvedOptions): string {
  return `${o.name}-pod-read-bindings`;
}

/** What reschedule-delete binds, and to whom (what POD_READ_ROLE and POD_READ_ACCOUNT say). */
export function podReadSettingsOf(o: ResolvedOptions): {
  role: string;
  account: { namespace: string; name: string };
} {
  return {
    role: podReadRoleName(o),
    account: { namespace: o.namespace, name: serviceAccountName(o, "reschedule-delete") },
  };
}

/** POD_READ_ROLE and POD_READ_ACCOUNT for reschedule-delete in narrow mode (shared/config/config.ts parses them). */
export function podReadEnvironment(o: ResolvedOptions, fn: DeployedFunction): Record<string, string> {
  if (fn !== "reschedule-delete" || !readsPodsPerNamespace(o)) return {};
  return { POD_READ_ROLE: podReadRoleName(o), POD_READ_ACCOUNT: serviceAccountUsername(o, fn) };
}

function podReadRole(o: ResolvedOptions, labels: Record<string, string>): IClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: podReadRoleName(o), labels },
    rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }],
  };
}

/** Each rule on its own, so a refusal names what was wrong. */
export function podReadBindingValidations(
  o: ResolvedOptions,
): { expression: string; message: string; reason: string }[] {
  const label = celString(VIRTUAL_LABEL_KEY);
  const role = celString(podReadRoleName(o));
  const account = celString(serviceAccountName(o, "reschedule-delete"));
  const namespace = celString(o.namespace);
  const only = (message: string) => `simkube-fn's reschedule-delete may create only RoleBindings ${message}`;
  return [
    {
      expression:
        `namespaceObject != null && has(namespaceObject.metadata.labels) && ` +
        `${label} in namespaceObject.metadata.labels && namespaceObject.metadata.labels[${label}] == 'true'`,
      message: only(`in namespaces labelled ${VIRTUAL_LABEL_KEY}=true`),
      reason: "Forbidden",
    },
    {
      expression: `object.roleRef.apiGroup == 'rbac.authorization.k8s.io' && object.roleRef.kind == 'ClusterRole' && object.roleRef.name == ${role}`,
      message: only(`of the ClusterRole ${podReadRoleName(o)}`),
      reason: "Forbidden",
    },
    {
      expression:
        `has(object.subjects) && size(object.subjects) == 1 && object.subjects[0].kind == 'ServiceAccount' && ` +
        `object.subjects[0].name == ${account} && has(object.subjects[0].namespace) && object.subjects[0].namespace == ${namespace}`,
      message: only(`naming its own ServiceAccount as the one subject`),
      reason: "Forbidden",
    },
  ];
}

function bindingPolicy(
  o: ResolvedOptions,
  labels: Record<string, string>,
): [IValidatingAdmissionPolicy, IValidatingAdmissionPolicyBinding] {
  const user = celString(serviceAccountUsername(o, "reschedule-delete"));
  return buildDenyingPolicy(podReadBindingPolicyName(o), labels, {
    matchConstraints: {
      resourceRules: [
        {
          apiGroups: ["rbac.authorization.k8s.io"],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE"],
          resources: ["rolebindings"],
        },
      ],
    },
    matchConditions: [
      { name: "reschedule-delete-account", expression: `request.userInfo.username == ${user}` },
    ],
    validations: podReadBindingValidations(o),
  });
}

/** The role and its fence, in narrow mode; nothing otherwise. */
export function buildPodReadObjects(
  o: ResolvedOptions,
  labels: Record<string, string>,
): (IClusterRole | IValidatingAdmissionPolicy | IValidatingAdmissionPolicyBinding)[] {
  if (!readsPodsPerNamespace(o)) return [];
  return [...bindingPolicy(o, labels), podReadRole(o, labels)];
}
