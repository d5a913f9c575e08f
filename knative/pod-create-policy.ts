// The cluster's own guard on the one dangerous thing the functions may do, creating pods: a
// ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) that lets the
// functions' service accounts create a pod only as a clone can look (docs/safety.md, "Least privilege"):
//   - in a namespace labelled simkube.io/virtual=true (namespaceObject);
//   - pinned to virtual nodes: nodeSelector type=virtual, no spec.nodeName (which would skip the scheduler
//     and so the selector), and every required nodeAffinity term itself requiring type In [virtual];
//   - every toleration naming a taint key (an empty key with Exists tolerates every taint);
//   - running as `default`, or as another account without its token (no automount, no token volume).
// A function tricked into cloning a privileged pod into kube-system, or onto a real node, is refused by the
// API server whatever its code does. A policy sees only the new pod, its namespace and its params: it cannot
// compare a clone with the pod it replaces, nor read Nodes; docs/safety.md says what that leaves open.
// Pure builders.

import type { IValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import type { IValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import {
  VIRTUAL_LABEL_KEY,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
} from "../shared/base/index.js";
import { buildDenyingPolicy } from "./denying-policy.js";
import type { ResolvedOptions } from "./options.js";
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

export interface PodCreateValidation {
  expression: string;
  message: string;
  reason: string;
}

const forbidden = (expression: string, message: string): PodCreateValidation => ({
  expression,
  message: `simkube-fn may create only ${message}`,
  reason: "Forbidden",
});

/** namespaceObject is the target Namespace (pods are namespaced). */
function virtualNamespaceRule(): PodCreateValidation {
  const label = celString(VIRTUAL_LABEL_KEY);
  return forbidden(
    `namespaceObject != null && has(namespaceObject.metadata.labels) && ` +
      `${label} in namespaceObject.metadata.labels && namespaceObject.metadata.labels[${label}] == 'true'`,
    `pods in namespaces labelled ${VIRTUAL_LABEL_KEY}=true`,
  );
}

const key = celString(VIRTUAL_NODE_SELECTOR_KEY);
const value = celString(VIRTUAL_NODE_SELECTOR_VALUE);

/** The scheduler ANDs nodeSelector with required node affinity: this alone keeps a scheduled pod virtual. */
function nodeSelectorRule(): PodCreateValidation {
  return forbidden(
    `has(object.spec.nodeSelector) && ${key} in object.spec.nodeSelector && ` +
      `object.spec.nodeSelector[${key}] == ${value}`,
    `pods with nodeSelector ${VIRTUAL_NODE_SELECTOR_KEY}=${VIRTUAL_NODE_SELECTOR_VALUE}`,
  );
}

/** A pod created with nodeName is never scheduled, so nothing checks its nodeSelector against the node. */
function noNodeNameRule(): PodCreateValidation {
  return forbidden(
    "!has(object.spec.nodeName) || object.spec.nodeName == ''",
    "pods without spec.nodeName (a clone is scheduled, so its node selector holds)",
  );
}

/** Each required term on its own reaches only virtual nodes (terms are ORed with each other). */
function nodeAffinityRule(): PodCreateValidation {
  const required = "object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  return forbidden(
    `!has(object.spec.affinity) || !has(object.spec.affinity.nodeAffinity) || !has(${required}) || ` +
      `${required}.nodeSelectorTerms.all(t, has(t.matchExpressions) && t.matchExpressions.exists(e, ` +
      `e.key == ${key} && e.operator == 'In' && e.values == [${value}]))`,
    `pods whose every required nodeAffinity term requires ${VIRTUAL_NODE_SELECTOR_KEY} In [${VIRTUAL_NODE_SELECTOR_VALUE}]`,
  );
}

/** An empty key with operator Exists tolerates every taint, the taints of nodes kept for the platform too. */
function keyedTolerationsRule(): PodCreateValidation {
  return forbidden(
    "!has(object.spec.tolerations) || object.spec.tolerations.all(t, has(t.key) && t.key != '')",
    "pods whose tolerations each name a taint key",
  );
}

/**
 * The ServiceAccount admission plugin (a mutating step, so before this policy) defaults the account to
 * `default` and adds the token volume unless automount is off; the policy sees the result.
 */
function serviceAccountRule(): PodCreateValidation {
  const tokenVolume =
    "object.spec.volumes.exists(v, has(v.projected) && has(v.projected.sources) && " +
    "v.projected.sources.exists(s, has(s.serviceAccountToken)))";
  return forbidden(
    "!has(object.spec.serviceAccountName) || object.spec.serviceAccountName == 'default' || " +
      "(has(object.spec.automountServiceAccountToken) && object.spec.automountServiceAccountToken == false && " +
      `(!has(object.spec.volumes) || !${tokenVolume}))`,
    "pods that run as the default ServiceAccount, or as another one without its token",
  );
}

/** What such a create must satisfy, every rule on its own (each refusal names the rule it broke). */
export function podCreateValidations(): PodCreateValidation[] {
  return [
    virtualNamespaceRule(),
    nodeSelectorRule(),
    noNodeNameRule(),
    nodeAffinityRule(),
    keyedTolerationsRule(),
    serviceAccountRule(),
  ];
}

export function buildPodCreatePolicy(
  o: ResolvedOptions,
  labels: Record<string, string>,
): [IValidatingAdmissionPolicy, IValidatingAdmissionPolicyBinding] {
  return buildDenyingPolicy(podCreatePolicyName(o), labels, {
    matchConstraints: {
      resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
    },
    matchConditions: podCreateMatchConditions(o),
    validations: podCreateValidations(),
  });
}
