// The resource name of a kind, for RBAC rules and messages, where no discovery is at hand: apimachinery's
// guess (k8s.io/apimachinery pkg/api/meta/restmapper.go, UnsafeGuessKindToResource), which is how the API
// server names a CRD's plural unless the CRD says otherwise. A wrong guess only names the wrong resource in a
// rule or a hint; `--owner-resource` states it exactly.

/** "Deployment" -> "deployments", "Ingress" -> "ingresses", "Policy" -> "policies". */
export function guessResourceOfKind(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular === "") return singular;
  if (singular.endsWith("s")) return `${singular}es`;
  if (singular.endsWith("y")) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/** The API group of an apiVersion: "apps/v1" -> "apps", "v1" -> "" (the core group). */
export function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
