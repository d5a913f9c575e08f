// Where the API server reaches each function: the resource name a function is deployed under, the
// environment it is given, and the webhook's clientConfig (a URL, or a Service and path) with the path secret.

import { isDns1035Label } from "../shared/base/index.js";
import { DEFAULT_OPENFAAS_NAMESPACE } from "./defaults.js";
import {
  CLUSTER_PLATFORMS,
  type DeployedFunction,
  type Platform,
  type ResolvedOptions,
  rejectOption,
} from "./options.js";

/** <name>-<function>: the Knative Service, the OpenFaaS function. */
export function functionResourceName(baseName: string, fn: DeployedFunction): string {
  return `${baseName}-${fn}`;
}

/** The environment `simkube-fn serve` reads (shared/config/config.ts); PORT is left to the platform. */
export function functionEnvironment(o: ResolvedOptions): Record<string, string> {
  const env: Record<string, string> = o.simName ? { SIM_NAME: o.simName } : {};
  if (o.tracePath) env.TRACE_PATH = o.tracePath;
  if (o.traceAllowedLocations.length > 0) env.TRACE_ALLOWED_LOCATIONS = o.traceAllowedLocations.join(",");
  env.LOG_LEVEL = o.logLevel;
  if (o.logFormat) env.LOG_FORMAT = o.logFormat;
  env.DRIVER_USERS = o.driverUsers.join(",");
  env.SEQUENCE_STORE = o.sequenceStore;
  // A literal, not a fieldRef: Knative rejects valueFrom.fieldRef unless the non-default
  // kubernetes.podspec-fieldref feature flag is on, and OpenFaaS has no downward API in stack.yml.
  // The manifests pin the namespace anyway.
  env.POD_NAMESPACE = o.namespace;
  return env;
}

/**
 * mutate-create's RESCHEDULE_SERVED: whether this deployment registers reschedule-delete's DELETE webhook, so a
 * Simulation asking for rescheduling is served; when not, mutate-create says so on that Simulation.
 */
export function rescheduleServedEnvironment(
  o: ResolvedOptions,
  fn: DeployedFunction,
): Record<string, string> {
  return fn === "mutate-create" ? { RESCHEDULE_SERVED: String(o.reschedule) } : {};
}

function fillTemplate(template: string, o: ResolvedOptions, fn: DeployedFunction): string {
  return template
    .replaceAll("{name}", functionResourceName(o.name, fn))
    .replaceAll("{function}", fn)
    .replaceAll("{namespace}", o.namespace);
}

const PLACEHOLDER = /\{(name|function|namespace)\}/;

function defaultUrlTemplate(base: string, platform: Platform, namespace: string): string {
  if (PLACEHOLDER.test(base)) return base;
  if (platform === "knative") {
    // Knative's default domain-template is {{.Name}}.{{.Namespace}}.{{.Domain}}.
    return base.replace(/^(https?:\/\/)/i, "$1{name}.{namespace}.");
  }
  // The gateway routes /function/<name> to openfaas-fn and /function/<name>.<namespace> elsewhere.
  const suffix = namespace === DEFAULT_OPENFAAS_NAMESPACE ? "" : ".{namespace}";
  return `${base.replace(/\/+$/, "")}/function/{name}${suffix}`;
}

/** The URL the API server calls in url mode; https, no query, fragment or user info (admissionregistration/v1). */
export function webhookUrl(o: ResolvedOptions, fn: DeployedFunction): string {
  const explicit = o.webhookUrls[fn];
  let raw: string;
  if (explicit) raw = explicit;
  else if (o.webhookUrlBase)
    raw = fillTemplate(defaultUrlTemplate(o.webhookUrlBase, o.platform, o.namespace), o, fn);
  else {
    // Named by the CLI's flags: this is what a user of `manifests` without --platform sees first.
    const base =
      o.platform === "knative"
        ? "--webhook-url-base https://<knative domain> (URLs https://<service>.<namespace>.<domain>/)"
        : "--webhook-url-base https://<gateway with TLS> (URLs https://<gateway>/function/<name>)";
    rejectOption(
      `the webhooks need an address: add --platform ${CLUSTER_PLATFORMS.join("|")} (where the functions run), or ${base}, or --webhook-mode service`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    rejectOption(`webhook URL "${raw}" for ${fn} is not a URL`);
  }
  if (url.protocol !== "https:")
    rejectOption(`webhook URL "${raw}" for ${fn} must use https (the API server only calls https)`);
  if (url.search || url.hash || raw.includes("#"))
    rejectOption(`webhook URL "${raw}" for ${fn} must not have a query or fragment`);
  if (url.username || url.password) rejectOption(`webhook URL "${raw}" for ${fn} must not carry user info`);
  url.pathname = withPathSecret(url.pathname, o.pathSecret);
  return url.toString();
}

/** The endpoint path with the secret as its last segment: /x -> /x/<secret>, / -> /<secret>. */
function withPathSecret(path: string, secret: string | undefined): string {
  return secret === undefined ? path : `${path.replace(/\/+$/, "")}/${secret}`;
}

export interface ServiceClientConfig {
  service: { namespace: string; name: string; port: number; path: string };
  caBundle?: string;
}
export interface UrlClientConfig {
  url: string;
  caBundle?: string;
}

export function webhookClientConfig(
  o: ResolvedOptions,
  fn: DeployedFunction,
): ServiceClientConfig | UrlClientConfig {
  const ca = o.caBundle ? { caBundle: o.caBundle } : {};
  if (o.webhookMode === "url") return { url: webhookUrl(o, fn), ...ca };
  const s = o.webhookService;
  const name = fillTemplate(s.name, o, fn);
  if (!isDns1035Label(name)) rejectOption(`webhook Service name "${name}" is not a valid Service name`);
  const path = fillTemplate(s.path, o, fn);
  if (!path.startsWith("/")) rejectOption(`webhookService.path "${path}" must start with /`);
  return {
    service: { namespace: s.namespace, name, port: s.port, path: withPathSecret(path, o.pathSecret) },
    ...ca,
  };
}
