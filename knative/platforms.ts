// What each kind of cluster needs so the API server can reach and trust the webhooks (docs/deploying.md),
// as defaults laid over the user's options. Pure; an option the user set always wins, and a choice the
// platform cannot work with is refused with one line that says what to use instead.
//
// Why these paths (sources: kubernetes/apiserver pkg/util/webhook/client.go and pkg/util/proxy/proxy.go;
// knative/serving pkg/apis/serving/v1beta1/domainmapping_validation.go; net-kourier config/300-gateway.yaml):
// - The API server cannot resolve cluster DNS and k3s, EKS and GKE dial a Service's endpoint pod directly,
//   so a ksvc's own (ExternalName) Service can never be a webhook target. kind and k3s have no load balancer
//   or public DNS either. What works there: a plain ClusterIP Service in Kourier's namespace selecting the
//   gateway pods; the API server sends SNI and Host <service>.<namespace>.svc, and a DomainMapping of exactly
//   that name (Knative accepts any FQDN not under the cluster domain) routes it to the function.
// - Managed clusters: the API server resolves public names, so a Knative domain with a trusted certificate.
// - OpenFaaS: the gateway behind the user's TLS ingress, at /function/<name>.

import { type ClusterPlatform, type DeploymentOptions, INGRESSES } from "./options.js";

export const DEFAULT_KOURIER_NAMESPACE = "kourier-system";
export const DEFAULT_CERT_MANAGER_NAMESPACE = "cert-manager";
/** net-kourier config/300-gateway.yaml: the gateway pods' label and their external HTTPS port. */
export const KOURIER_GATEWAY_SELECTOR: Readonly<Record<string, string>> = { app: "3scale-kourier-gateway" };
export const KOURIER_GATEWAY_HTTPS_PORT = 8443;

/**
 * The ingress in front of Knative on kind/k3s. Kourier: the DomainMapping route above. Traefik: its Knative
 * provider cannot serve that route (it has no host rewrite and reaches only ClusterIP Services), so its own
 * CRDs carry the request to Knative's cluster-local route instead (knative/traefik-route.ts).
 */
export const DEFAULT_TRAEFIK_NAMESPACE = "traefik";
export const DEFAULT_TRAEFIK_INTERNAL_SERVICE = { name: "traefik-internal", port: 80 } as const;
/** The label Traefik's Helm chart (and k3s' bundled Traefik) put on its pods, and its TLS entry point. */
export const TRAEFIK_SELECTOR: Readonly<Record<string, string>> = { "app.kubernetes.io/name": "traefik" };
export const TRAEFIK_WEBSECURE = { entryPoint: "websecure", containerPort: "websecure" } as const;

export class PlatformError extends Error {}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/** kind and k3s route through the Kourier gateway; the functions are Knative Services. */
export function usesGatewayRoute(platform: ClusterPlatform | undefined): boolean {
  return platform === "kind" || platform === "k3s";
}

function requireTarget(options: DeploymentOptions, allowed: readonly string[]): void {
  if (options.target !== undefined && !allowed.includes(options.target)) {
    throw new PlatformError(
      `--platform ${options.clusterPlatform} renders --target ${allowed.join(" or ")}, not ${options.target}`,
    );
  }
}

function requireMode(options: DeploymentOptions, mode: "url" | "service", why: string): void {
  if (options.webhookMode !== undefined && options.webhookMode !== mode) {
    throw new PlatformError(`--platform ${options.clusterPlatform} uses --webhook-mode ${mode}: ${why}`);
  }
}

/** The namespace of the ingress the gateway Services go to. */
function ingressNamespace(options: DeploymentOptions): string {
  if (options.ingress === "traefik") return options.traefikNamespace ?? DEFAULT_TRAEFIK_NAMESPACE;
  return options.kourierNamespace ?? DEFAULT_KOURIER_NAMESPACE;
}

function gatewayRoutePreset(options: DeploymentOptions): DeploymentOptions {
  requireTarget(options, ["knative"]);
  requireMode(options, "service", "the API server there cannot resolve a public name");
  return {
    ...options,
    target: "knative",
    webhookMode: "service",
    webhookService: {
      namespace: ingressNamespace(options),
      name: "{name}",
      port: 443,
      path: "/",
      ...options.webhookService,
    },
  };
}

function managedPreset(options: DeploymentOptions): DeploymentOptions {
  requireTarget(options, ["knative"]);
  requireMode(options, "url", "the API server reaches the functions by their Knative domain");
  const domain = options.domain?.trim().toLowerCase();
  if (domain !== undefined && !HOSTNAME.test(domain)) {
    throw new PlatformError(`--domain "${options.domain}" is not a DNS name (e.g. fn.example.com)`);
  }
  if (domain === undefined && options.webhookUrlBase === undefined && options.webhookUrls === undefined) {
    throw new PlatformError(
      "--platform managed needs --domain DOMAIN: Knative's domain, so the webhooks call https://<service>.<namespace>.DOMAIN/",
    );
  }
  return {
    ...options,
    target: "knative",
    webhookMode: "url",
    ...(options.webhookUrlBase === undefined && domain !== undefined
      ? { webhookUrlBase: `https://${domain}` }
      : {}),
  };
}

/**
 * The gateway the webhooks call. Two callers reach an OpenFaaS gateway: faas-cli (--gateway-url, usually
 * http through a port-forward) and the API server (https, a name it resolves). --webhook-gateway-url names
 * the second; an https --gateway-url alone still serves both, as it always has.
 */
function webhookGatewayOf(options: DeploymentOptions): string | undefined {
  if (options.webhookUrlBase !== undefined) return options.webhookUrlBase;
  if (options.webhookGateway !== undefined) return options.webhookGateway;
  if (options.gateway?.startsWith("https://")) return options.gateway;
  return undefined;
}

function openfaasPreset(options: DeploymentOptions): DeploymentOptions {
  requireTarget(options, ["openfaas", "openfaas-stack"]);
  requireMode(options, "url", "the API server calls the gateway behind your TLS ingress");
  const target = options.target ?? "openfaas";
  const base = webhookGatewayOf(options);
  if (target === "openfaas" && base === undefined && options.webhookUrls === undefined) {
    const given = options.gateway
      ? ` (--gateway-url ${options.gateway} is faas-cli's; the API server needs https)`
      : "";
    throw new PlatformError(
      `--platform openfaas needs --webhook-gateway-url https://GATEWAY: the gateway behind your TLS ingress, as the API server reaches it${given}`,
    );
  }
  return {
    ...options,
    target,
    webhookMode: "url",
    ...(options.webhookUrlBase === undefined && base !== undefined ? { webhookUrlBase: base } : {}),
  };
}

/**
 * Plain Kubernetes: the functions as Deployments (the Knative target's functions, rendered without Knative:
 * knative/workloads.ts), each behind a ClusterIP Service of its own name that the webhook names. The pods
 * serve TLS themselves, so the API server must be told which CA signed their certificates.
 */
function kubernetesPreset(options: DeploymentOptions): DeploymentOptions {
  requireTarget(options, ["knative"]);
  requireMode(options, "service", "the API server reaches each function through its ClusterIP Service");
  if (options.caBundle === undefined && options.caInjectFrom === undefined) {
    throw new PlatformError(
      "--platform kubernetes needs --ca-bundle FILE (the CA that signed each function's TLS Secret <name>-<function>-tls) or --ca-inject-from NS/CERTIFICATE",
    );
  }
  return {
    ...options,
    target: "knative",
    webhookMode: "service",
    webhookService: { name: "{name}", port: 443, path: "/", ...options.webhookService },
  };
}

/** The ingress flags belong to kind/k3s, and the Traefik ones to --ingress traefik. */
function checkIngressOptions(options: DeploymentOptions): void {
  const traefikSet = options.traefikNamespace !== undefined || options.traefikInternalService !== undefined;
  if ((options.ingress !== undefined || traefikSet) && !usesGatewayRoute(options.clusterPlatform)) {
    throw new PlatformError("--ingress and --traefik-* apply to --platform kind or k3s");
  }
  if (options.ingress !== undefined && !(INGRESSES as readonly string[]).includes(options.ingress)) {
    throw new PlatformError(`--ingress must be kourier or traefik, got "${String(options.ingress)}"`);
  }
  if (traefikSet && options.ingress !== "traefik") {
    throw new PlatformError("--traefik-namespace and --traefik-internal-service need --ingress traefik");
  }
}

/** --traefik-internal-service NAME[:PORT]; the port defaults to 80. */
export function parseTraefikInternalService(value: string | undefined): { name: string; port: number } {
  if (value === undefined) return { ...DEFAULT_TRAEFIK_INTERNAL_SERVICE };
  const match = /^([a-z]([-a-z0-9]{0,61}[a-z0-9])?)(?::(\d{1,5}))?$/.exec(value);
  const port = match?.[3] === undefined ? DEFAULT_TRAEFIK_INTERNAL_SERVICE.port : Number(match[3]);
  if (!match || port < 1 || port > 65535) {
    throw new PlatformError(`--traefik-internal-service takes NAME[:PORT] (a Service name), got "${value}"`);
  }
  return { name: match[1] as string, port };
}

/** The options with the platform's defaults laid under them; unchanged without a clusterPlatform. */
export function applyClusterPlatform(options: DeploymentOptions): DeploymentOptions {
  checkIngressOptions(options);
  switch (options.clusterPlatform) {
    case undefined:
      return options;
    case "kind":
    case "k3s":
      return gatewayRoutePreset(options);
    case "managed":
      return managedPreset(options);
    case "openfaas":
      return openfaasPreset(options);
    case "kubernetes":
      return kubernetesPreset(options);
    default:
      throw new PlatformError(
        `--platform must be kind, k3s, managed, openfaas or kubernetes, got "${String(options.clusterPlatform)}"`,
      );
  }
}

/**
 * kind/k3s without a caBundle: cert-manager's cainjector fills it in. From the CA Certificate the output
 * creates, or, with the user's issuer, from mutate-create's own Certificate (its Secret's ca.crt is the
 * issuing CA for CA issuers; cert-manager pkg/controller/cainjector reads it from there).
 */
export function defaultCaInjectFrom(
  options: DeploymentOptions,
  resolved: { namespace: string; name: string; certManagerNamespace: string },
): string | undefined {
  if (!usesGatewayRoute(options.clusterPlatform) || options.caBundle !== undefined) return undefined;
  // With Traefik, the functions' Certificates live beside the routes that serve them, in Traefik's namespace.
  const certificates = options.ingress === "traefik" ? ingressNamespace(options) : resolved.namespace;
  if (options.issuer !== undefined) return `${certificates}/${resolved.name}-mutate-create-tls`;
  return `${resolved.certManagerNamespace}/${resolved.name}-ca`;
}
