// What the cluster's steps render from its setup and options, without I/O: the deployment options the manifests
// and the webhook configuration come from, and the functions' environment.

import type { DeploymentOptions } from "../../knative/manifests.js";
import { FUNCTION_NAMES } from "../../shared/base/index.js";
import { FUNCTIONS_NAMESPACE, type LocalClusterOptions, type Setup } from "./cluster-types.js";
import type { AccountTarget } from "./deployment.js";
import { WEBHOOK_CLIENT_CN } from "./pki.js";

export function accountTarget(s: Setup): AccountTarget {
  return {
    admin: s.admin,
    dir: s.dir,
    server: s.server,
    caCertFile: s.pki.caCertFile,
    caCertPem: s.pki.caCertPem,
  };
}

const functionUrl = (port: number) => `https://127.0.0.1:${port}/`;

export function deploymentOptions(s: Setup, o: LocalClusterOptions): DeploymentOptions {
  return {
    ...(o.everySimulation ? {} : { simName: s.simName }),
    namespace: FUNCTIONS_NAMESPACE,
    virtualNsPrefix: s.prefix,
    rescheduleInterruptedBarePods: o.serveReschedule ?? o.reschedule ?? false,
    webhookMode: "url",
    webhookUrls: Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, functionUrl(s.ports[fn])])),
    caBundle: Buffer.from(s.pki.caCertPem).toString("base64"),
    ...(o.tracePath ? { tracePath: o.tracePath } : {}),
    ...(s.pathSecret ? { pathSecret: s.pathSecret } : {}),
    ...(o.podReads ? { podReads: o.podReads } : {}),
  };
}

/** The functions' environment as the rendered manifests set it, less what each function adds. */
export function functionEnvironment(s: Setup, o: LocalClusterOptions): Record<string, string> {
  const env: Record<string, string> = {
    SEQUENCE_NAMESPACE: FUNCTIONS_NAMESPACE,
    TLS_CERT_FILE: s.pki.webhookCertFile,
    TLS_KEY_FILE: s.pki.webhookKeyFile,
  };
  if (!o.everySimulation) env.SIM_NAME = s.simName;
  if (o.tracePath) env.TRACE_PATH = o.tracePath;
  if (s.pathSecret) env.WEBHOOK_PATH_SECRET = s.pathSecret;
  if (s.security === "production") {
    env.CLIENT_CA_FILE = s.pki.webhookClientCaFile;
    env.CLIENT_CERT_SUBJECTS = `CN=${WEBHOOK_CLIENT_CN}`;
  }
  return env;
}
