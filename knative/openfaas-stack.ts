// The OpenFaaS stack file (stack.yml) for `faas-cli up`: one function per deployed function, built from the
// node20/node22 template with dist/openfaas/<function>/handler.js (npm run bundle:openfaas) as its handler.
// Pure builder. Field names follow faas-cli's stack schema (stack/schema.go).
//
// Notes that shape the values below:
// - The template parses JSON bodies with a 100kb limit by default; a pod review can be ~3 MiB, so
//   MAX_JSON_SIZE is raised (otherwise big pods get a 413 before our code runs).
// - The watchdog's exec/read/write timeouts (10/15/15 s in the template) are raised to the webhook timeout.
// - Community Edition's gateway refuses a deployment with com.openfaas.scale.zero=true, any of
//   scale.zero-duration, scale.target or scale.type, or scale.max/scale.min above 5 (faas-netes
//   pkg/handlers/validate.go), so CE output carries only scale.min and scale.max within that limit. CE also
//   takes no com.openfaas.serviceaccount: its functions run as the namespace's default account, which the
//   RBAC (rbac.ts) is then bound to.
// - Pro: scale to zero after scale.zero-duration, and com.openfaas.serviceaccount runs each function as its own
//   ServiceAccount.
// - Readiness: of-watchdog answers /_/health itself (its lock file: the process runs), and with ready_path
//   its /_/ready asks the function's GET /readyz (of-watchdog config.go ReadyEndpoint). Pro points the pod's
//   readiness probe at /_/ready (com.openfaas.ready.http.path); Community Edition's faas-netes probes
//   /_/health only (pkg/k8s/probes.go), so there a function is ready as soon as its watchdog is.

import { MAX_REVIEW_BYTES } from "./defaults.js";
import { resolveOptions } from "./deployment-options.js";
import { READINESS_PATH } from "./function-container.js";
import type { DeployedFunction, DeploymentOptions, ResolvedOptions } from "./options.js";
import { checksPathSecret, PATH_SECRET_KEY, pathSecretName } from "./path-secret-options.js";
import { podReadEnvironment } from "./pod-reads.js";
import { serviceAccountName } from "./rbac.js";
import {
  functionEnvironment,
  functionResourceName,
  rescheduleServedEnvironment,
} from "./webhook-endpoints.js";

export interface StackResources {
  memory?: string;
  cpu?: string;
}

export interface StackFunction {
  lang: string;
  handler: string;
  image: string;
  namespace: string;
  environment: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  limits?: StackResources;
  requests?: StackResources;
  /** Kubernetes Secrets (in the function's namespace) mounted as files under /var/openfaas/secrets/. */
  secrets?: string[];
  readonly_root_filesystem: boolean;
}

/** of-watchdog's readiness endpoint, which forwards to the function's ready_path. */
const WATCHDOG_READY_PATH = "/_/ready";

/** Where OpenFaaS mounts the keys of a function's secrets. */
const OPENFAAS_SECRETS_DIR = "/var/openfaas/secrets";

export interface StackFile {
  version: "1.0";
  provider: { name: "openfaas"; gateway: string };
  functions: Record<string, StackFunction>;
}

/** The image faas-cli builds and pushes for one function: {function} is replaced, else "-<function>" is added to the repository. */
export function openfaasImage(image: string, fn: DeployedFunction): string {
  if (image.includes("{function}")) return image.replaceAll("{function}", fn);
  const at = image.indexOf("@");
  if (at >= 0) return `${image.slice(0, at)}-${fn}`; // a digest names one image; drop it for the new one
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  if (colon > slash) return `${image.slice(0, colon)}-${fn}${image.slice(colon)}`;
  return `${image}-${fn}`;
}

function timeoutFor(o: ResolvedOptions, fn: DeployedFunction): number {
  return o.tuning[fn].timeoutSeconds;
}

/** Scaling labels the edition accepts. */
export function scalingLabels(o: ResolvedOptions, fn: DeployedFunction): Record<string, string> {
  const minScale = o.tuning[fn].minScale;
  const labels: Record<string, string> = {
    "com.openfaas.scale.min": String(Math.max(1, minScale)),
    "com.openfaas.scale.max": String(o.maxScale[fn]),
  };
  if (o.openfaasEdition === "pro" && minScale === 0) {
    // The Pro autoscaler idles the function after scale.zero-duration without calls.
    labels["com.openfaas.scale.zero"] = "true";
    labels["com.openfaas.scale.zero-duration"] = o.scaleToZeroDuration;
  }
  return labels;
}

function stackResources(r: { cpu?: string; memory?: string } | undefined): StackResources | undefined {
  if (!r) return undefined;
  const out: StackResources = {};
  if (r.memory) out.memory = r.memory;
  if (r.cpu) out.cpu = r.cpu;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function buildStackFunction(o: ResolvedOptions, fn: DeployedFunction): StackFunction {
  // The watchdog must not cut a review short before the API server gives up on it.
  const timeout = `${timeoutFor(o, fn) + 1}s`;
  const environment: Record<string, string> = {
    ...functionEnvironment(o),
    ...podReadEnvironment(o, fn),
    ...rescheduleServedEnvironment(o, fn),
    MAX_JSON_SIZE: String(MAX_REVIEW_BYTES),
    exec_timeout: timeout,
    read_timeout: timeout,
    write_timeout: timeout,
    ready_path: READINESS_PATH,
  };
  const labels: Record<string, string> = {
    "app.kubernetes.io/name": "simkube-fn",
    "app.kubernetes.io/component": fn,
    ...(o.simName ? { "simkube.io/simulation": o.simName } : {}),
    ...scalingLabels(o, fn),
  };
  // The path secret reaches the function as a mounted file, never as a literal in stack.yml.
  if (checksPathSecret(o))
    environment.WEBHOOK_PATH_SECRET_FILE = `${OPENFAAS_SECRETS_DIR}/${PATH_SECRET_KEY}`;
  const fnDef: StackFunction = {
    lang: o.openfaasLang,
    handler: `${o.openfaasHandlerDir}/${fn}`,
    image: openfaasImage(o.image, fn),
    namespace: o.namespace,
    environment,
    labels,
    annotations:
      o.openfaasEdition === "pro"
        ? {
            "com.openfaas.serviceaccount": serviceAccountName(o, fn),
            "com.openfaas.ready.http.path": WATCHDOG_READY_PATH,
          }
        : {},
    readonly_root_filesystem: true,
  };
  const limits = stackResources(o.resources.limits);
  const requests = stackResources(o.resources.requests);
  if (checksPathSecret(o)) fnDef.secrets = [pathSecretName(o)];
  if (limits) fnDef.limits = limits;
  if (requests) fnDef.requests = requests;
  return fnDef;
}

export function buildStack(options: DeploymentOptions): StackFile {
  const o = resolveOptions({ ...options, target: "openfaas-stack" });
  const functions: Record<string, StackFunction> = {};
  for (const fn of o.functions) functions[functionResourceName(o.name, fn)] = buildStackFunction(o, fn);
  return { version: "1.0", provider: { name: "openfaas", gateway: o.gateway }, functions };
}
