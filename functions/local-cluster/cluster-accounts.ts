// The accounts the cluster's callers act as: the functions' (what `manifests` renders for them), SimKube's
// driver's, each with a kubeconfig, and the cluster-admin bindings they and KWOK get.

import { resolveOptions } from "../../knative/deployment-options.js";
import { buildAllManifests, type DeploymentOptions } from "../../knative/manifests.js";
import { podCreatePolicyName } from "../../knative/pod-create-policy.js";
import {
  podReadBindingPolicyName,
  podReadSettingsOf,
  readsPodsPerNamespace,
} from "../../knative/pod-reads.js";
import { DEFAULT_DRIVER_USERS, FUNCTION_NAMES, type FunctionName } from "../../shared/base/index.js";
import { podReadBinding } from "../reschedule-delete/pod-read-grants.js";
import { buildNamespace } from "./cluster-objects.js";
import { accountTarget } from "./cluster-settings.js";
import { FUNCTIONS_NAMESPACE, type Setup } from "./cluster-types.js";
import {
  applyFunctionObjects,
  objectsToApply,
  serviceAccountCredentials,
  waitForPolicyEnforced,
} from "./deployment.js";
import type { RestClient } from "./rest.js";

export async function clusterAdminBinding(
  admin: RestClient,
  name: string,
  subject: Record<string, string>,
): Promise<void> {
  await admin.ensure("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [subject],
  });
}

/**
 * The functions' namespace, then what `manifests` renders for them (the policy in production mode, the RBAC),
 * and a kubeconfig per service account (the driver's and each function's).
 */
export async function applyAccounts(s: Setup, deployment: DeploymentOptions) {
  await s.admin.ensure("/api/v1/namespaces", buildNamespace(FUNCTIONS_NAMESPACE));
  const objects = objectsToApply(buildAllManifests(deployment), s.security);
  const accounts = await applyFunctionObjects(accountTarget(s), FUNCTIONS_NAMESPACE, objects);
  // The policy guards the pods the functions' accounts create. Without rescheduling none of them may create a
  // pod (RBAC refuses first), so there is no enforcement to wait for.
  if (s.security === "production" && deployment.rescheduleInterruptedBarePods) {
    const policy = podCreatePolicyName(resolveOptions(deployment));
    await waitForPolicyEnforced(accounts["reschedule-delete"].client, `${s.prefix}-default`, policy);
  }
  const resolved = resolveOptions(deployment);
  if (s.security === "production" && readsPodsPerNamespace(resolved)) {
    // A binding of the pod-read role in the functions' own namespace (not virtual): the fence refuses it.
    const probe = podReadBinding(podReadSettingsOf(resolved), FUNCTIONS_NAMESPACE);
    await waitForPolicyEnforced(
      accounts["reschedule-delete"].client,
      FUNCTIONS_NAMESPACE,
      podReadBindingPolicyName(resolved),
      {
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${FUNCTIONS_NAMESPACE}/rolebindings`,
        body: probe,
      },
    );
  }
  const driverKubeconfig = await driverAccount(s);
  const functionKubeconfigs = {} as Record<FunctionName, string>;
  for (const fn of FUNCTION_NAMES) functionKubeconfigs[fn] = accounts[fn].kubeconfig;
  return { driverKubeconfig, functionKubeconfigs };
}

/** SimKube's driver account (sk-ctrl-sa in the driver's namespace), so its deletes carry DRIVER_USERS. */
async function driverAccount(s: Setup): Promise<string> {
  const [namespace, name] = (DEFAULT_DRIVER_USERS[0] as string).split(":").slice(2) as [string, string];
  await s.admin.ensure(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace },
  });
  await clusterAdminBinding(s.admin, `simkube-fn-local-${name}`, { kind: "ServiceAccount", name, namespace });
  return (await serviceAccountCredentials(accountTarget(s), namespace, name)).kubeconfig;
}
