// Least privilege, per function: each function runs as its own ServiceAccount, with only the verbs its code
// calls (test/unit/rbac.test.ts derives those from the API calls the functions make and compares).
//   mutate-create     get: the Simulation, SimulationRoots, the owner kinds a pod's chain goes through,
//                     and (serving every Simulation, no SIM_NAME) namespaces, to tell a virtual one's;
//                     get/create/update: ConfigMaps in its own namespace (the cluster sequence store);
//                     without reschedule-delete (--no-reschedule), create: Events in "default" only, to say
//                     so on a Simulation that asks for rescheduling (a Simulation's Events must live there).
//   reschedule-delete get: the Simulation, SimulationRoots, namespaces, pods; create: pods (the clones),
//                     which the ValidatingAdmissionPolicy (pod-create-policy.ts) narrows further.
//                     With podReads "virtual-namespaces", no get on pods: create rolebindings and bind the
//                     one role that grants it, per virtual namespace (pod-reads.ts).
// Pure builders.

import type { IClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import type { IClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import type { IPolicyRule } from "kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule";
import type { IRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import type { IRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import type { IServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { groupOfApiVersion } from "../shared/kube/index.js";
import { SIMULATION_EVENTS_NAMESPACE } from "../shared/simulation/index.js";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { functionResourceName } from "./webhook-endpoints.js";

export type RbacObject = IServiceAccount | IClusterRole | IClusterRoleBinding | IRole | IRoleBinding;

/**
 * Owner kinds mutate-create follows up a pod's owner chain (SimKube's simulated workloads). A pod whose chain
 * goes through another kind is refused, naming the kind and the flag that grants it (shared/kube/owners.ts
 * OwnerReadForbidden), unless extraRules grant get on it (--owner-resource, --owner-kinds-from-trace).
 */
export const OWNER_KINDS: readonly { apiVersion: string; kind: string; resource: string }[] = [
  { apiVersion: "apps/v1", kind: "ReplicaSet", resource: "replicasets" },
  { apiVersion: "apps/v1", kind: "Deployment", resource: "deployments" },
  { apiVersion: "apps/v1", kind: "StatefulSet", resource: "statefulsets" },
  { apiVersion: "apps/v1", kind: "DaemonSet", resource: "daemonsets" },
  { apiVersion: "batch/v1", kind: "Job", resource: "jobs" },
  { apiVersion: "batch/v1", kind: "CronJob", resource: "cronjobs" },
];

/**
 * OpenFaaS Community Edition ignores com.openfaas.serviceaccount: every function there runs as the
 * namespace's `default` account, so that is the account the roles are bound to.
 */
export const CE_FUNCTION_ACCOUNT = "default";

export function runsAsDefaultAccount(o: ResolvedOptions): boolean {
  return o.platform === "openfaas" && o.openfaasEdition === "ce";
}

/** The account a function runs as: system:serviceaccount:<namespace>:<this>. */
export function serviceAccountName(o: ResolvedOptions, fn: DeployedFunction): string {
  return runsAsDefaultAccount(o) ? CE_FUNCTION_ACCOUNT : functionResourceName(o.name, fn);
}

export function serviceAccountUsername(o: ResolvedOptions, fn: DeployedFunction): string {
  return `system:serviceaccount:${o.namespace}:${serviceAccountName(o, fn)}`;
}

const RBAC_GROUP = "rbac.authorization.k8s.io";

const SIMKUBE_READS: IPolicyRule = {
  apiGroups: ["simkube.io"],
  resources: ["simulations", "simulationroots"],
  verbs: ["get"],
};

function ownerKindRules(): IPolicyRule[] {
  const byGroup = new Map<string, string[]>();
  for (const { apiVersion, resource } of OWNER_KINDS) {
    const group = groupOfApiVersion(apiVersion);
    byGroup.set(group, [...(byGroup.get(group) ?? []), resource]);
  }
  return [...byGroup].map(([group, resources]) => ({ apiGroups: [group], resources, verbs: ["get"] }));
}

/** Cluster-wide rules: the virtual namespaces are many and not known when the functions are deployed. */
export function clusterRulesFor(o: ResolvedOptions, fn: DeployedFunction): IPolicyRule[] {
  if (fn === "mutate-create") {
    // Without SIM_NAME an ownerless pod's Simulation is its virtual namespace's, read from the namespace.
    const namespaces: IPolicyRule[] = o.simName
      ? []
      : [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }];
    return [
      { ...SIMKUBE_READS },
      ...ownerKindRules(),
      ...namespaces,
      ...o.extraRules.map((rule) => ({ ...rule })),
    ];
  }
  const common: IPolicyRule[] = [
    { ...SIMKUBE_READS },
    // The teardown guard reads the namespace (terminating?); the live pod is read before cloning.
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
  ];
  if (o.podReads === "cluster") {
    return [...common, { apiGroups: [""], resources: ["pods"], verbs: ["get", "create"] }];
  }
  return [
    ...common,
    { apiGroups: [""], resources: ["pods"], verbs: ["create"] },
    // RBAC lets a binding name a role only when its creator holds the role's permissions or may `bind` it.
    { apiGroups: [RBAC_GROUP], resources: ["rolebindings"], verbs: ["create"] },
    {
      apiGroups: [RBAC_GROUP],
      resources: ["clusterroles"],
      verbs: ["bind"],
      resourceNames: [podReadRoleName(o)],
    },
  ];
}

/** The ClusterRole (get pods) reschedule-delete binds to itself per virtual namespace with podReads "virtual-namespaces". */
export function podReadRoleName(o: ResolvedOptions): string {
  return `${o.name}-virtual-pod-reads`;
}

/**
 * Rules in the functions' own namespace: the cluster sequence store (mutate-create only). Not narrowed by
 * resourceNames: a shard's name carries a hash of its run's SimulationRoot uid (shared/sequence
 * cluster-naming.ts), unknown when this is rendered, and `create` cannot be limited by name in RBAC at all.
 * The store checks what it reads instead (docs/safety.md, "The sequence ConfigMaps").
 */
export function namespaceRulesFor(o: ResolvedOptions, fn: DeployedFunction): IPolicyRule[] {
  if (fn !== "mutate-create" || o.sequenceStore !== "cluster") return [];
  return [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "update"] }];
}

/**
 * mutate-create's Events on Simulations, when the deployment cannot serve their rescheduling: create only, in
 * the one namespace a cluster-scoped object's Events may be in. None when reschedule-delete is deployed.
 */
export function simulationEventRulesFor(o: ResolvedOptions, fn: DeployedFunction): IPolicyRule[] {
  if (fn !== "mutate-create" || o.reschedule) return [];
  return [{ apiGroups: [""], resources: ["events"], verbs: ["create"] }];
}

function namespacedRole(
  metadata: { name: string; namespace: string; labels: Record<string, string> },
  rules: IPolicyRule[],
  subjects: { kind: string; name: string; namespace: string }[],
): RbacObject[] {
  return [
    { apiVersion: `${RBAC_GROUP}/v1`, kind: "Role", metadata, rules },
    {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "RoleBinding",
      metadata,
      roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: metadata.name },
      subjects,
    },
  ];
}

export function buildFunctionRbac(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): RbacObject[] {
  const name = functionResourceName(o.name, fn);
  const account = serviceAccountName(o, fn);
  const subjects = [{ kind: "ServiceAccount", name: account, namespace: o.namespace }];
  // The default account exists in every namespace; it is bound to, never created.
  const serviceAccount: RbacObject[] = runsAsDefaultAccount(o)
    ? []
    : [
        {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: account, namespace: o.namespace, labels },
        },
      ];
  const objects: RbacObject[] = [
    ...serviceAccount,
    {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "ClusterRole",
      metadata: { name, labels },
      rules: clusterRulesFor(o, fn),
    },
    {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name, labels },
      roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name },
      subjects,
    },
  ];
  const namespaced = namespaceRulesFor(o, fn);
  if (namespaced.length > 0) {
    const metadata = { name: `${name}-sequences`, namespace: o.namespace, labels };
    objects.push(...namespacedRole(metadata, namespaced, subjects));
  }
  const events = simulationEventRulesFor(o, fn);
  if (events.length > 0) {
    const metadata = { name: `${name}-simulation-events`, namespace: SIMULATION_EVENTS_NAMESPACE, labels };
    objects.push(...namespacedRole(metadata, events, subjects));
  }
  return objects;
}
