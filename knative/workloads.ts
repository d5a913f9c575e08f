// `manifests --platform kubernetes`: the functions without Knative, as a platform engineer runs a webhook on
// plain Kubernetes. Per function a Deployment of the same container the Knative Services run, serving TLS
// itself from the Secret <name>-<function>-tls (kubernetes.io/tls, for <name>-<function>.<namespace>.svc:
// the caller makes it, or cert-manager does), and a ClusterIP Service of the function's name that the webhook
// configuration names (service mode). Pure builders.

import type { IDeployment } from "kubernetes-models/apps/v1/Deployment";
import type { IService } from "kubernetes-models/v1/Service";
import {
  functionContainer,
  LIVENESS_PATH,
  LIVENESS_TIMING,
  pathSecretRevisionAnnotation,
  READINESS_PATH,
} from "./function-container.js";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { serviceAccountName } from "./rbac.js";
import { functionResourceName } from "./webhook-endpoints.js";

/** The port the pods serve HTTPS on; the Service's 443 forwards to it. */
export const TLS_CONTAINER_PORT = 8443;
const TLS_DIR = "/etc/simkube-fn/tls";
/** Where clientCaSecret is mounted; CLIENT_CA_FILE names its `ca.crt` (cert-manager's and kubeadm's key). */
const CLIENT_CA_DIR = "/etc/simkube-fn/client-ca";
export const CLIENT_CA_KEY = "ca.crt";

/** The Secret holding each function's serving certificate and key (tls.crt, tls.key). */
export function tlsSecretName(o: ResolvedOptions, fn: DeployedFunction): string {
  return `${functionResourceName(o.name, fn)}-tls`;
}

export function selectorOf(o: ResolvedOptions, fn: DeployedFunction): Record<string, string> {
  return { "app.kubernetes.io/instance": o.name, "app.kubernetes.io/component": fn };
}

/** The Knative container, on HTTPS with the Secret's certificate: the API server calls it directly. */
function tlsContainer(o: ResolvedOptions, fn: DeployedFunction) {
  const base = functionContainer(o, fn);
  return {
    ...base,
    ports: [{ name: "https", containerPort: TLS_CONTAINER_PORT }],
    env: [
      ...base.env,
      { name: "PORT", value: String(TLS_CONTAINER_PORT) },
      { name: "TLS_CERT_FILE", value: `${TLS_DIR}/tls.crt` },
      { name: "TLS_KEY_FILE", value: `${TLS_DIR}/tls.key` },
      ...(o.clientCaSecret ? [{ name: "CLIENT_CA_FILE", value: `${CLIENT_CA_DIR}/${CLIENT_CA_KEY}` }] : []),
      ...(o.clientCertSubjects.length > 0
        ? [{ name: "CLIENT_CERT_SUBJECTS", value: o.clientCertSubjects.join(",") }]
        : []),
    ],
    readinessProbe: {
      httpGet: { path: READINESS_PATH, port: "https", scheme: "HTTPS" as const },
      periodSeconds: 2,
    },
    livenessProbe: {
      httpGet: { path: LIVENESS_PATH, port: "https", scheme: "HTTPS" as const },
      ...LIVENESS_TIMING,
    },
    volumeMounts: [
      { name: "tls", mountPath: TLS_DIR, readOnly: true },
      ...(o.clientCaSecret ? [{ name: "client-ca", mountPath: CLIENT_CA_DIR, readOnly: true }] : []),
    ],
  };
}

export function buildDeployment(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): IDeployment {
  const selector = selectorOf(o, fn);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: functionResourceName(o.name, fn), namespace: o.namespace, labels },
    spec: {
      // No scale to zero without Knative: min-scale replicas, at least one (resolved with the options).
      replicas: o.replicas[fn],
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...labels, ...selector }, annotations: pathSecretRevisionAnnotation(o) },
        spec: {
          serviceAccountName: serviceAccountName(o, fn),
          containers: [tlsContainer(o, fn)],
          volumes: [
            { name: "tls", secret: { secretName: tlsSecretName(o, fn) } },
            ...(o.clientCaSecret
              ? [
                  {
                    name: "client-ca",
                    secret: {
                      secretName: o.clientCaSecret,
                      items: [{ key: CLIENT_CA_KEY, path: CLIENT_CA_KEY }],
                    },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}

export function buildFunctionService(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): IService {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: functionResourceName(o.name, fn), namespace: o.namespace, labels },
    spec: {
      type: "ClusterIP",
      selector: selectorOf(o, fn),
      ports: [{ name: "https", port: 443, targetPort: "https" }],
    },
  };
}
