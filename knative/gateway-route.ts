// kind and k3s: how the API server reaches a scale-to-zero Knative Service with no load balancer and no DNS
// (knative/platforms.ts says why). Per function: a ClusterIP Service in Kourier's namespace selecting the
// gateway pods (443 -> 8443), a ClusterDomainClaim and a DomainMapping named after that Service's DNS name
// (<service>.<kourier namespace>.svc), and a cert-manager Certificate for that name whose Secret the
// DomainMapping serves. Unless the user names an issuer, a CA of our own: a self-signed ClusterIssuer, a CA
// Certificate in cert-manager's namespace (a ClusterIssuer reads its Secret there), and a CA ClusterIssuer.
// The webhook configuration then carries cert-manager.io/inject-ca-from, so the API server trusts that CA.
// With --ingress traefik the per-function route is Traefik's instead (knative/traefik-route.ts); the CA is the same.
// Pure builders.

import type { ICertificate } from "@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate";
import type { IClusterIssuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1/ClusterIssuer";
import type { IClusterDomainClaim } from "@kubernetes-models/knative/networking.internal.knative.dev/v1alpha1/ClusterDomainClaim";
import type { IDomainMapping } from "@kubernetes-models/knative/serving.knative.dev/v1beta1/DomainMapping";
import type { IService } from "kubernetes-models/v1/Service";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { KOURIER_GATEWAY_HTTPS_PORT, KOURIER_GATEWAY_SELECTOR, usesGatewayRoute } from "./platforms.js";
import { buildTraefikRoute, type TraefikRouteObject } from "./traefik-route.js";
import { functionResourceName, webhookClientConfig } from "./webhook-endpoints.js";

export type GatewayRouteObject =
  | IService
  | IClusterDomainClaim
  | IDomainMapping
  | ICertificate
  | IClusterIssuer
  | TraefikRouteObject;

const ISSUER_GROUP = "cert-manager.io";

/** The created CA: its ClusterIssuer, Certificate and Secret share this name. */
export function caName(o: ResolvedOptions): string {
  return `${o.name}-ca`;
}

/** The issuer of the functions' certificates: the user's (--issuer) or the created CA. */
export function issuerName(o: ResolvedOptions): string {
  return o.issuer ?? caName(o);
}

/** The host the API server calls for `fn`: the gateway Service's DNS name, which SNI and Host carry. */
export function gatewayHost(o: ResolvedOptions, fn: DeployedFunction): string {
  const config = webhookClientConfig(o, fn);
  if (!("service" in config)) throw new Error("gateway routes need service mode");
  return `${config.service.name}.${config.service.namespace}.svc`;
}

export function certificateName(o: ResolvedOptions, fn: DeployedFunction): string {
  return `${functionResourceName(o.name, fn)}-tls`;
}

function traefikNames(o: ResolvedOptions, fn: DeployedFunction) {
  const host = gatewayHost(o, fn);
  return {
    host,
    service: host.split(".")[0] as string,
    secretName: certificateName(o, fn),
    issuer: issuerName(o),
  };
}

function buildCa(o: ResolvedOptions, labels: Record<string, string>): GatewayRouteObject[] {
  const selfSigned = `${o.name}-selfsigned`;
  return [
    {
      apiVersion: "cert-manager.io/v1",
      kind: "ClusterIssuer",
      metadata: { name: selfSigned, labels },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: caName(o), namespace: o.certManagerNamespace, labels },
      spec: {
        isCA: true,
        commonName: `${o.name}-webhook-ca`,
        secretName: caName(o),
        privateKey: { algorithm: "ECDSA", size: 256 },
        issuerRef: { group: ISSUER_GROUP, kind: "ClusterIssuer", name: selfSigned },
      },
    },
    {
      apiVersion: "cert-manager.io/v1",
      kind: "ClusterIssuer",
      metadata: { name: caName(o), labels },
      spec: { ca: { secretName: caName(o) } },
    },
  ];
}

function buildFunctionRoute(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): GatewayRouteObject[] {
  const host = gatewayHost(o, fn);
  const [serviceName, serviceNamespace] = host.split(".") as [string, string];
  const secretName = certificateName(o, fn);
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: serviceName, namespace: serviceNamespace, labels },
      spec: {
        type: "ClusterIP",
        selector: { ...KOURIER_GATEWAY_SELECTOR },
        // Named: k3s and managed API servers dial the endpoint whose port name matches.
        ports: [{ name: "https", port: 443, targetPort: KOURIER_GATEWAY_HTTPS_PORT, protocol: "TCP" }],
      },
    },
    {
      // autocreate-cluster-domain-claims is off by default: the claim lets our namespace map this host.
      apiVersion: "networking.internal.knative.dev/v1alpha1",
      kind: "ClusterDomainClaim",
      metadata: { name: host, labels },
      spec: { namespace: o.namespace },
    },
    {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: secretName, namespace: o.namespace, labels },
      spec: {
        secretName,
        dnsNames: [host],
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
        issuerRef: { group: ISSUER_GROUP, kind: "ClusterIssuer", name: issuerName(o) },
      },
    },
    {
      apiVersion: "serving.knative.dev/v1beta1",
      kind: "DomainMapping",
      metadata: { name: host, namespace: o.namespace, labels },
      spec: {
        ref: {
          apiVersion: "serving.knative.dev/v1",
          kind: "Service",
          name: functionResourceName(o.name, fn),
        },
        tls: { secretName },
      },
    },
  ];
}

/** Everything kind/k3s need between the API server and the functions; nothing on other platforms. */
export function buildGatewayRoutes(o: ResolvedOptions, labels: Record<string, string>): GatewayRouteObject[] {
  if (!usesGatewayRoute(o.clusterPlatform)) return [];
  const ca = o.issuer === undefined ? buildCa(o, labels) : [];
  const route =
    o.ingress === "traefik"
      ? (fn: DeployedFunction) => buildTraefikRoute(o, fn, traefikNames(o, fn), labels)
      : (fn: DeployedFunction) => buildFunctionRoute(o, fn, labels);
  return [...ca, ...o.functions.flatMap(route)];
}
