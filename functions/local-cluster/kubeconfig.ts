// Kubeconfig files for the run: one per identity (admin, controller-manager, scheduler, KWOK, the functions'
// and the driver's service accounts), each a bearer token against the run's API server and CA.

import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";

export interface KubeconfigSpec {
  server: string;
  caFile: string;
  /** A bearer token, or else a client certificate (kubelet, kube-proxy). */
  token?: string;
  clientCertificate?: string;
  clientKey?: string;
  /** The user entry's name, as kubectl shows it. */
  user: string;
}

function credentials(spec: KubeconfigSpec): Record<string, string> {
  if (spec.token !== undefined) return { token: spec.token };
  if (spec.clientCertificate && spec.clientKey)
    return { "client-certificate": spec.clientCertificate, "client-key": spec.clientKey };
  throw new Error(`kubeconfig for ${spec.user}: neither a token nor a client certificate`);
}

export function renderKubeconfig(spec: KubeconfigSpec): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "simkube-fn-local", cluster: { server: spec.server, "certificate-authority": spec.caFile } },
    ],
    users: [{ name: spec.user, user: credentials(spec) }],
    contexts: [{ name: "simkube-fn-local", context: { cluster: "simkube-fn-local", user: spec.user } }],
    "current-context": "simkube-fn-local",
  });
}

export async function writeKubeconfigFile(file: string, spec: KubeconfigSpec): Promise<string> {
  await writeFile(file, renderKubeconfig(spec), { mode: 0o600 });
  return file;
}
