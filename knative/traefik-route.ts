// kind and k3s with --ingress traefik: how the API server reaches a scale-to-zero Knative Service through
// Traefik. Traefik's Knative provider serves Knative's own routes but cannot serve the DomainMapping route
// the Kourier variant uses (no host rewrite; it forwards only to ClusterIP Services), so Traefik's CRD
// provider carries the request to Knative's cluster-local route instead. Per function, in Traefik's namespace:
// - a ClusterIP Service <name>-<function> selecting Traefik's pods on its websecure entry point, the Service
//   the webhook names (the API server sends SNI and Host <service>.<traefik namespace>.svc);
// - a cert-manager Certificate for that name (an IngressRoute's TLS Secret must be in its own namespace);
// - a Middleware that rewrites Host to the Knative Service's cluster-local name, <ksvc>.<namespace>.svc;
// - an IngressRoute on websecure for that host, through the Middleware, to the Service in front of Traefik's
//   entry point for cluster-local routes (--traefik-internal-service), where the Knative provider routes it to
//   the revision or, at zero, the activator.
// Pure builders.

import type { ICertificate } from "@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate";
import type { IService } from "kubernetes-models/v1/Service";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { TRAEFIK_SELECTOR, TRAEFIK_WEBSECURE } from "./platforms.js";
import { functionResourceName } from "./webhook-endpoints.js";

const TRAEFIK_API = "traefik.io/v1alpha1";

/** traefik.io/v1alpha1 Middleware, only the field used here. */
export interface TraefikMiddleware {
  apiVersion: typeof TRAEFIK_API;
  kind: "Middleware";
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: { headers: { customRequestHeaders: Record<string, string> } };
}

/** traefik.io/v1alpha1 IngressRoute, only the fields used here. */
export interface TraefikIngressRoute {
  apiVersion: typeof TRAEFIK_API;
  kind: "IngressRoute";
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    entryPoints: string[];
    routes: {
      kind: "Rule";
      match: string;
      middlewares: { name: string }[];
      services: { name: string; port: number }[];
    }[];
    tls: { secretName: string };
  };
}

export type TraefikRouteObject = IService | ICertificate | TraefikMiddleware | TraefikIngressRoute;

/** Knative's cluster-local host for the function's Service, which Traefik's Knative provider routes. */
export function knativeLocalHost(o: ResolvedOptions, fn: DeployedFunction): string {
  return `${functionResourceName(o.name, fn)}.${o.namespace}.svc`;
}

export interface TraefikRouteNames {
  /** <service>.<traefik namespace>.svc: what the API server calls, and the certificate's name. */
  host: string;
  service: string;
  secretName: string;
  issuer: string;
}

export function buildTraefikRoute(
  o: ResolvedOptions,
  fn: DeployedFunction,
  names: TraefikRouteNames,
  labels: Record<string, string>,
): TraefikRouteObject[] {
  const namespace = o.traefikNamespace;
  const meta = (name: string) => ({ name, namespace, labels });
  const middleware = `${names.service}-host`;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(names.service),
      spec: {
        type: "ClusterIP",
        selector: { ...TRAEFIK_SELECTOR },
        // Named: k3s and managed API servers dial the endpoint whose port name matches.
        ports: [{ name: "https", port: 443, targetPort: TRAEFIK_WEBSECURE.containerPort, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: meta(names.secretName),
      spec: {
        secretName: names.secretName,
        dnsNames: [names.host],
        privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
        issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: names.issuer },
      },
    },
    {
      apiVersion: TRAEFIK_API,
      kind: "Middleware",
      metadata: meta(middleware),
      spec: { headers: { customRequestHeaders: { Host: knativeLocalHost(o, fn) } } },
    },
    {
      apiVersion: TRAEFIK_API,
      kind: "IngressRoute",
      metadata: meta(names.service),
      spec: {
        entryPoints: [TRAEFIK_WEBSECURE.entryPoint],
        routes: [
          {
            kind: "Rule",
            match: `Host(\`${names.host}\`)`,
            middlewares: [{ name: middleware }],
            services: [{ name: o.traefikInternalService.name, port: o.traefikInternalService.port }],
          },
        ],
        tls: { secretName: names.secretName },
      },
    },
  ];
}
