// The shape both node-local programs beside Knative share (CoreDNS, Traefik): a namespace placed on the real
// node, a ServiceAccount bound to a ClusterRole, and a one-replica Deployment of a local image.

import { placedOnRealNode } from "../real-node/placement.js";
import type { ManifestObject } from "./apply-yaml.js";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface NodeApp {
  namespace: string;
  /** The Deployment's, the ServiceAccount's and the container's name. */
  name: string;
  /** The ClusterRole's and its binding's name. */
  roleName: string;
  rules: PolicyRule[];
  image: string;
  labels: Record<string, string>;
  /** Merged into the container (args, ports, probes, mounts). */
  container: Record<string, unknown>;
  /** Merged into the pod spec (volumes, dnsPolicy). */
  pod?: Record<string, unknown>;
}

function account(app: NodeApp): ManifestObject[] {
  const rbac = "rbac.authorization.k8s.io";
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: app.name, namespace: app.namespace } },
    { apiVersion: `${rbac}/v1`, kind: "ClusterRole", metadata: { name: app.roleName }, rules: app.rules },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: app.roleName },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: app.roleName },
      subjects: [{ kind: "ServiceAccount", name: app.name, namespace: app.namespace }],
    },
  ];
}

/** Namespace, account and RBAC, then the Deployment (never pulled: the image is in the node's store). */
export function nodeAppObjects(app: NodeApp): ManifestObject[] {
  const { labels } = app;
  const container = { name: app.name, image: app.image, imagePullPolicy: "Never", ...app.container };
  const deployment: ManifestObject = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: app.name, namespace: app.namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { serviceAccountName: app.name, containers: [container], ...app.pod },
      },
    },
  };
  return [
    placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name: app.namespace } }),
    ...account(app),
    deployment,
  ];
}
