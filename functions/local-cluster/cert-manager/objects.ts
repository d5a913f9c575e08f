// cert-manager on the real node (`cluster up --cert-manager`): which objects are created. From cert-manager's
// own chart, rendered at build time (controlplane/cert-manager/build.sh): its CRDs, its service accounts and
// RBAC, and its webhook's Mutating/ValidatingWebhookConfiguration (their caBundle left for the cainjector to
// fill from the webhook's own CA Secret, as the chart's inject-ca-from-secret annotation says). Ours: the
// namespace (placed on the real node), the three Deployments of the images built here, and the webhook's
// Service. The names are the chart's for release "cert-manager", so its RBAC binds our pods' accounts.

import { type ManifestObject, parseManifestStream } from "../knative/apply-yaml.js";
import { placedOnRealNode } from "../real-node/placement.js";
import { CERT_MANAGER_PROGRAMS, CERT_MANAGER_VERSION, type CertManagerProgram } from "./build.js";

export const CERT_MANAGER_NAMESPACE = "cert-manager";
/** The chart's names for release cert-manager: Deployment, ServiceAccount and RBAC subject alike. */
export const CERT_MANAGER_NAMES: Record<CertManagerProgram, string> = {
  controller: "cert-manager",
  webhook: "cert-manager-webhook",
  cainjector: "cert-manager-cainjector",
};
/** Where the chart's leader-election Roles are (global.leaderElection.namespace). */
const LEADER_ELECTION_NAMESPACE = "kube-system";
/** The webhook's TLS port (the chart's webhook.securePort) and its health port. */
const WEBHOOK_PORT = 10250;
const WEBHOOK_HEALTH_PORT = 6080;
const CONTROLLER_HEALTH_PORT = 9403;

/** The kinds taken from cert-manager's rendered chart; its Deployments, Services and the rest are not. */
const CHART_KINDS = new Set([
  "CustomResourceDefinition",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
]);

export function certManagerImage(program: CertManagerProgram): string {
  return `dev.local/cert-manager-${program}:${CERT_MANAGER_VERSION}`;
}

/** cert-manager's own objects from its rendered chart; fails when one this install relies on is missing. */
export function chartObjects(chartYaml: string): ManifestObject[] {
  const objects = parseManifestStream(chartYaml).filter((o) => CHART_KINDS.has(o.kind));
  const has = (kind: string, name: string) =>
    objects.some((o) => o.kind === kind && o.metadata.name === name);
  const needed: [string, string][] = [
    ["CustomResourceDefinition", "certificates.cert-manager.io"],
    ["CustomResourceDefinition", "clusterissuers.cert-manager.io"],
    ...CERT_MANAGER_PROGRAMS.map((p): [string, string] => ["ServiceAccount", CERT_MANAGER_NAMES[p]]),
    ["ValidatingWebhookConfiguration", CERT_MANAGER_NAMES.webhook],
    ["MutatingWebhookConfiguration", CERT_MANAGER_NAMES.webhook],
  ];
  const missing = needed.filter(([kind, name]) => !has(kind, name));
  if (missing.length > 0)
    throw new Error(`cert-manager's rendered chart lacks ${missing.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  return objects;
}

const podNamespaceEnv = [
  { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
];

/** Each program's arguments and ports, after the chart's defaults (what it passes for release cert-manager). */
function containers(): Record<CertManagerProgram, Record<string, unknown>> {
  const webhook = CERT_MANAGER_NAMES.webhook;
  return {
    controller: {
      args: [
        "--v=2",
        "--cluster-resource-namespace=$(POD_NAMESPACE)",
        `--leader-election-namespace=${LEADER_ELECTION_NAMESPACE}`,
        "--max-concurrent-challenges=60",
      ],
      ports: [{ name: "http-healthz", containerPort: CONTROLLER_HEALTH_PORT }],
      livenessProbe: {
        httpGet: { path: "/livez", port: CONTROLLER_HEALTH_PORT },
        initialDelaySeconds: 10,
        periodSeconds: 10,
        failureThreshold: 8,
      },
    },
    webhook: {
      args: [
        "--v=2",
        `--secure-port=${WEBHOOK_PORT}`,
        "--dynamic-serving-ca-secret-namespace=$(POD_NAMESPACE)",
        `--dynamic-serving-ca-secret-name=${webhook}-ca`,
        `--dynamic-serving-dns-names=${webhook},${webhook}.$(POD_NAMESPACE),${webhook}.$(POD_NAMESPACE).svc`,
      ],
      ports: [
        { name: "https", containerPort: WEBHOOK_PORT },
        { name: "healthcheck", containerPort: WEBHOOK_HEALTH_PORT },
      ],
      readinessProbe: { httpGet: { path: "/healthz", port: WEBHOOK_HEALTH_PORT }, periodSeconds: 2 },
      livenessProbe: { httpGet: { path: "/livez", port: WEBHOOK_HEALTH_PORT }, periodSeconds: 10 },
    },
    cainjector: { args: ["--v=2", `--leader-election-namespace=${LEADER_ELECTION_NAMESPACE}`] },
  };
}

function labelsOf(program: CertManagerProgram): Record<string, string> {
  return {
    "app.kubernetes.io/name": CERT_MANAGER_NAMES[program],
    "app.kubernetes.io/instance": "cert-manager",
  };
}

function deployment(program: CertManagerProgram, container: Record<string, unknown>): ManifestObject {
  const name = CERT_MANAGER_NAMES[program];
  const labels = labelsOf(program);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: CERT_MANAGER_NAMESPACE, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: name,
          securityContext: { runAsNonRoot: true },
          containers: [
            {
              name: `cert-manager-${program}`,
              image: certManagerImage(program),
              imagePullPolicy: "Never",
              env: podNamespaceEnv,
              ...container,
            },
          ],
        },
      },
    },
  };
}

/** Everything `cluster up --cert-manager` creates: the chart's objects, then ours. */
export function certManagerObjects(chartYaml: string): ManifestObject[] {
  const byProgram = containers();
  return [
    placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name: CERT_MANAGER_NAMESPACE } }),
    ...chartObjects(chartYaml),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: CERT_MANAGER_NAMES.webhook, namespace: CERT_MANAGER_NAMESPACE },
      spec: {
        selector: labelsOf("webhook"),
        ports: [{ name: "https", port: 443, targetPort: "https", protocol: "TCP" }],
      },
    },
    ...CERT_MANAGER_PROGRAMS.map((p) => deployment(p, byProgram[p])),
  ];
}
