// Knative's ingress on the real node: Traefik v3.6.12 (controlplane/knative/build-node-tools.sh) with its
// experimental Knative provider, which reconciles KIngresses of class traefik.ingress.networking.knative.dev
// into its own routers and marks them Ready. Its CRD provider runs too, on a TLS entry point (websecure), for
// the routes `manifests --ingress traefik` renders (IngressRoute, Middleware; knative/traefik-route.ts). Traefik runs as a pod on the real node, so the revision
// Services' ClusterIPs it forwards to are reachable there (kube-proxy's rules live in the node's namespace).
// The objects (namespace, account, RBAC, Deployment, Services) are ours; config-network is patched to the class.

import { withRetry } from "../../../shared/base/index.js";
import { type RestClient, RestError } from "../rest.js";
import type { ManifestObject } from "./apply-yaml.js";
import { nodeAppObjects } from "./node-app.js";
import { KNATIVE_NAMESPACE } from "./serving-build.js";

export const TRAEFIK_NAMESPACE = "traefik";
export const TRAEFIK_INGRESS_CLASS = "traefik.ingress.networking.knative.dev";
/** Entry points: external routes (Knative's ExternalIP visibility) and cluster-local ones. */
export const TRAEFIK_PORTS = { web: 8080, internal: 8081, ping: 8082, websecure: 8443 } as const;
/** The Services Traefik reports as the KIngresses' load balancers. */
export const TRAEFIK_SERVICES = { public: "traefik", private: "traefik-internal" } as const;

const labels = { "app.kubernetes.io/name": "traefik" };

/** What Traefik's CRD provider watches (its kubernetes-crd-rbac.yml). */
const TRAEFIK_CRD_RESOURCES = [
  "middlewares",
  "middlewaretcps",
  "ingressroutes",
  "traefikservices",
  "ingressroutetcps",
  "ingressrouteudps",
  "tlsoptions",
  "tlsstores",
  "serverstransports",
  "serverstransporttcps",
];

function traefikArgs(): string[] {
  const ns = TRAEFIK_NAMESPACE;
  return [
    "--experimental.knative=true",
    "--providers.knative=true",
    "--providers.kubernetescrd=true",
    `--entrypoints.websecure.address=:${TRAEFIK_PORTS.websecure}`,
    `--entrypoints.web.address=:${TRAEFIK_PORTS.web}`,
    `--entrypoints.internal.address=:${TRAEFIK_PORTS.internal}`,
    `--entrypoints.traefik.address=:${TRAEFIK_PORTS.ping}`,
    "--ping=true",
    "--providers.knative.publicEntrypoints=web",
    "--providers.knative.privateEntrypoints=internal",
    `--providers.knative.publicService.name=${TRAEFIK_SERVICES.public}`,
    `--providers.knative.publicService.namespace=${ns}`,
    `--providers.knative.privateService.name=${TRAEFIK_SERVICES.private}`,
    `--providers.knative.privateService.namespace=${ns}`,
    "--log.level=INFO",
  ];
}

function traefikService(name: string, port: number): ManifestObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: TRAEFIK_NAMESPACE, labels },
    spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: port }] },
  };
}

/** Everything Traefik needs, its namespace placed on the real node. */
export function traefikObjects(image: string): ManifestObject[] {
  const knative = "networking.internal.knative.dev";
  return [
    ...nodeAppObjects({
      namespace: TRAEFIK_NAMESPACE,
      name: "traefik",
      roleName: "traefik-knative",
      rules: [
        { apiGroups: [knative], resources: ["ingresses"], verbs: ["get", "list", "watch"] },
        { apiGroups: [knative], resources: ["ingresses/status"], verbs: ["update"] },
        // The CRD provider waits for its informers on all of these (nodes cluster-wide, configmaps too; its
        // pkg/provider/kubernetes/crd/client.go) and never starts while one cannot list.
        {
          apiGroups: [""],
          resources: ["services", "secrets", "configmaps", "nodes"],
          verbs: ["get", "list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
        { apiGroups: ["traefik.io"], resources: TRAEFIK_CRD_RESOURCES, verbs: ["get", "list", "watch"] },
      ],
      image,
      labels,
      container: {
        args: traefikArgs(),
        ports: Object.entries(TRAEFIK_PORTS).map(([name, containerPort]) => ({ name, containerPort })),
        readinessProbe: { httpGet: { path: "/ping", port: TRAEFIK_PORTS.ping }, periodSeconds: 2 },
      },
    }),
    traefikService(TRAEFIK_SERVICES.public, TRAEFIK_PORTS.web),
    traefikService(TRAEFIK_SERVICES.private, TRAEFIK_PORTS.internal),
  ];
}

/** How long Knative's webhook may take to answer for its ConfigMaps once it has registered itself. */
const CONFIG_PATCH_TIMEOUT_MS = 300_000;

/**
 * The API server could not reach a webhook the request matched (HTTP 500 "failed calling webhook", e.g. "no
 * endpoints available"). Knative's webhook registers its ConfigMap validation before its pod is ready, so a
 * write to config-network in between fails this way (seen once in CI); it passes once the pod is ready.
 */
export function isWebhookUnreachable(err: unknown): boolean {
  return err instanceof RestError && err.status === 500 && err.body.includes("failed calling webhook");
}

/**
 * Knative's config-network switched to Traefik's ingress class (a merge patch: Knative's other keys stay),
 * retried (shared/base/retry.ts) while Knative's own webhook cannot be reached yet; any other failure, or
 * the last one at the deadline, is thrown as it came.
 */
export async function selectTraefikIngress(admin: RestClient): Promise<void> {
  await withRetry(
    () =>
      admin.request(
        "PATCH",
        `/api/v1/namespaces/${KNATIVE_NAMESPACE}/configmaps/config-network`,
        { data: { "ingress-class": TRAEFIK_INGRESS_CLASS } },
        "application/merge-patch+json",
      ),
    { deadlineMs: CONFIG_PATCH_TIMEOUT_MS, isRetryable: isWebhookUnreachable },
  );
}
