// The functions' own objects on the local cluster, taken from what `simkube-fn manifests` renders for it (url
// mode, the run's CA): in production mode the pod-create ValidatingAdmissionPolicy and its binding first, then
// the RBAC, in the rendered order; then a kubeconfig per function's ServiceAccount (a TokenRequest token), so
// each function calls the API as the account the manifests name; and, with the policy, a wait until the API
// server enforces it (a policy is picked up by an informer, not at once).

import path from "node:path";
import type { Manifest } from "../../knative/manifests.js";
import { FUNCTION_NAMES, type FunctionName } from "../../shared/base/index.js";
import { collectionPath } from "./cluster-objects.js";
import { writeKubeconfigFile } from "./kubeconfig.js";
import { waitUntil } from "./readiness.js";
import { createRestClient, type RestClient, RestError } from "./rest.js";
import type { SecurityMode } from "./security.js";

const POLICY_KINDS = new Set(["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);
const RBAC_KINDS = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

/** What the local cluster applies of the rendered manifests: the policy (production only) and the RBAC. */
export function objectsToApply(manifests: readonly Manifest[], mode: SecurityMode): Manifest[] {
  return manifests.filter(
    (m) => RBAC_KINDS.has(m.kind ?? "") || (mode === "production" && POLICY_KINDS.has(m.kind ?? "")),
  );
}

/** The account each function runs as, from the rendered RBAC (one per function when it names them so). */
export function serviceAccountOf(rbac: readonly Manifest[], fn: FunctionName): string {
  const accounts = rbac.filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata?.name ?? "");
  return accounts.find((name) => name.endsWith(fn)) ?? (accounts[0] as string);
}

export interface AccountTarget {
  admin: RestClient;
  dir: string;
  server: string;
  caCertFile: string;
  caCertPem: string;
}

export interface AccountCredentials {
  kubeconfig: string;
  client: RestClient;
}

/** A service account's token (TokenRequest API) in a kubeconfig file, and a client that uses it. */
export async function serviceAccountCredentials(
  t: AccountTarget,
  namespace: string,
  name: string,
): Promise<AccountCredentials> {
  const answer = await t.admin.request<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 172_800 } },
  );
  const kubeconfig = await writeKubeconfigFile(path.join(t.dir, `${namespace}-${name}.kubeconfig`), {
    server: t.server,
    caFile: t.caCertFile,
    token: answer.status.token,
    user: `system:serviceaccount:${namespace}:${name}`,
  });
  return { kubeconfig, client: createRestClient(t.server, t.caCertPem, answer.status.token) };
}

/** Applies the objects in order; returns each function's credentials. */
export async function applyFunctionObjects(
  t: AccountTarget,
  namespace: string,
  objects: readonly Manifest[],
): Promise<Record<FunctionName, AccountCredentials>> {
  for (const object of objects) await t.admin.ensure(collectionPath(object as never), object);
  const credentials = {} as Record<FunctionName, AccountCredentials>;
  for (const fn of FUNCTION_NAMES)
    credentials[fn] = await serviceAccountCredentials(t, namespace, serviceAccountOf(objects, fn));
  return credentials;
}

/** A dry-run create the policy refuses: by default an unpinned pod in `namespace`. */
export interface PolicyProbe {
  path: string;
  body: unknown;
}

/**
 * Until the API server enforces the policy: a dry-run create, as a function's account, of an object the
 * policy refuses (default: an unpinned pod in a virtual namespace). Refused naming the policy: enforced.
 * Accepted: not yet.
 */
export async function waitForPolicyEnforced(
  fn: RestClient,
  namespace: string,
  policyName: string,
  probe: PolicyProbe = {
    path: `/api/v1/namespaces/${namespace}/pods`,
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "policy-probe" },
      spec: { containers: [{ name: "c", image: "probe" }] },
    },
  },
): Promise<void> {
  await waitUntil(
    `ValidatingAdmissionPolicy ${policyName} enforced`,
    async () => {
      try {
        await fn.request("POST", `${probe.path}?dryRun=All`, probe.body);
        return false;
      } catch (err) {
        if (err instanceof RestError && err.status === 403 && err.body.includes(policyName)) return true;
        throw err;
      }
    },
    { timeoutMs: 30_000 },
  );
}
