// How the local cluster's functions are guarded: the production setup by default, as docs/safety.md's "Who may
// call the functions" and "Least privilege" describe it, or nothing at all for a developer who asks for that.
//   production    a path secret in every webhook URL; kube-apiserver presents a client certificate (its
//                 AdmissionConfiguration kubeConfigFile) that the functions verify (CLIENT_CA_FILE); the
//                 pod-create ValidatingAdmissionPolicy as `simkube-fn manifests` renders it.
//   insecure-dev  none of these (`cluster up --insecure-dev`): any local process may post a review.
// Either way each function calls the API as its own ServiceAccount with the rendered RBAC.
// Pure builders, and one function that writes the API server's files.

import { writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";

export type SecurityMode = "production" | "insecure-dev";

export { newPathSecret } from "../../knative/path-secret-options.js";

/**
 * The kubeconfig kube-apiserver reads its webhook credentials from. For a URL webhook it looks a user up by
 * the URL's host:port (k8s.io/apiserver pkg/util/webhook/authentication.go), so there is one entry per
 * function and no current-context: any other endpoint (a test's hung webhook) is called without credentials.
 */
export function webhookClientKubeconfig(
  hostPorts: readonly string[],
  cert: { certFile: string; keyFile: string },
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Config",
    users: hostPorts.map((name) => ({
      name,
      user: { "client-certificate": cert.certFile, "client-key": cert.keyFile },
    })),
  };
}

/** --admission-control-config-file: both webhook plugins take their credentials from `kubeconfigFile`. */
export function admissionConfiguration(kubeconfigFile: string): Record<string, unknown> {
  const plugin = (name: string) => ({
    name,
    configuration: {
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "WebhookAdmissionConfiguration",
      kubeConfigFile: kubeconfigFile,
    },
  });
  return {
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AdmissionConfiguration",
    plugins: [plugin("MutatingAdmissionWebhook"), plugin("ValidatingAdmissionWebhook")],
  };
}

/** Writes both files into `dir`; returns the admission configuration's path (for kube-apiserver's flag). */
export async function writeWebhookClientFiles(
  dir: string,
  hostPorts: readonly string[],
  cert: { certFile: string; keyFile: string },
): Promise<string> {
  const kubeconfig = path.join(dir, "webhook-client.kubeconfig");
  await writeFile(kubeconfig, stringify(webhookClientKubeconfig(hostPorts, cert)), { mode: 0o600 });
  const admission = path.join(dir, "admission-configuration.yaml");
  await writeFile(admission, stringify(admissionConfiguration(kubeconfig)));
  return admission;
}
