// Cluster DNS for the real node (with --knative): CoreDNS (controlplane/knative/build-coredns.sh) as a pod
// on the real node, answering <service>.<namespace>.svc.cluster.local from the API with its kubernetes
// plugin, at a fixed ClusterIP that the kubelet writes into every pod's resolv.conf. Knative needs it: the
// activator dials the autoscaler by name, and the autoscaler probes each revision's Service by name before it
// scales the revision to zero. No forwarding: nothing outside the cluster is reachable anyway.

import { placedOnRealNode } from "../real-node/placement.js";
import type { ManifestObject } from "./apply-yaml.js";

export const DNS_NAMESPACE = "simkube-fn-dns";
/** In SERVICE_CIDR (real-node/addresses.ts), clear of the `kubernetes` Service's first address. */
export const CLUSTER_DNS_IP = "198.19.255.10";
export const CLUSTER_DOMAIN = "cluster.local";
/** Unprivileged: the image runs as a non-root user; the Service maps 53 to it. */
const DNS_PORT = 1053;
const labels = { "app.kubernetes.io/name": "coredns" };

export function corefile(): string {
  return [
    `.:${DNS_PORT} {`,
    "    errors",
    "    health :8080",
    "    ready :8181",
    `    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {`,
    "        pods insecure",
    "        fallthrough in-addr.arpa ip6.arpa",
    "    }",
    "    cache 5",
    "}",
    "",
  ].join("\n");
}

function dnsRbac(): ManifestObject[] {
  const name = "simkube-fn-coredns";
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: DNS_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: [
        { apiGroups: [""], resources: ["services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: DNS_NAMESPACE }],
    },
  ];
}

function dnsDeployment(image: string): ManifestObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "coredns", namespace: DNS_NAMESPACE, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: "coredns",
          // Its own lookups must not go to itself before it is up.
          dnsPolicy: "Default",
          containers: [
            {
              name: "coredns",
              image,
              imagePullPolicy: "Never",
              args: ["-conf", "/etc/coredns/Corefile"],
              volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
            },
          ],
          volumes: [{ name: "config", configMap: { name: "coredns" } }],
        },
      },
    },
  };
}

/** CoreDNS's namespace (placed on the real node), account, Corefile, Deployment and its fixed-IP Service. */
export function clusterDnsObjects(image: string): ManifestObject[] {
  return [
    placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name: DNS_NAMESPACE } }),
    ...dnsRbac(),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: DNS_NAMESPACE },
      data: { Corefile: corefile() },
    },
    dnsDeployment(image),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "dns", namespace: DNS_NAMESPACE, labels },
      spec: {
        selector: labels,
        clusterIP: CLUSTER_DNS_IP,
        ports: [
          { name: "dns", port: 53, targetPort: DNS_PORT, protocol: "UDP" },
          { name: "dns-tcp", port: 53, targetPort: DNS_PORT, protocol: "TCP" },
        ],
      },
    },
  ];
}
