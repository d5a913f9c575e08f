// Cluster DNS for the real node (with --knative): CoreDNS (controlplane/knative/build-coredns.sh) as a pod
// on the real node, answering <service>.<namespace>.svc.cluster.local from the API with its kubernetes
// plugin, at a fixed ClusterIP that the kubelet writes into every pod's resolv.conf. Knative needs it: the
// activator dials the autoscaler by name, and the autoscaler probes each revision's Service by name before it
// scales the revision to zero. No forwarding: nothing outside the cluster is reachable anyway.

import type { ManifestObject } from "./apply-yaml.js";
import { nodeAppObjects } from "./node-app.js";

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

/** CoreDNS's namespace (placed on the real node), account, Corefile, Deployment and its fixed-IP Service. */
export function clusterDnsObjects(image: string): ManifestObject[] {
  const [namespace, ...rest] = nodeAppObjects({
    namespace: DNS_NAMESPACE,
    name: "coredns",
    roleName: "simkube-fn-coredns",
    rules: [
      { apiGroups: [""], resources: ["services", "pods", "namespaces"], verbs: ["list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ],
    image,
    labels,
    container: {
      args: ["-conf", "/etc/coredns/Corefile"],
      volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
      readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
    },
    // Its own lookups must not go to itself before it is up.
    pod: { dnsPolicy: "Default", volumes: [{ name: "config", configMap: { name: "coredns" } }] },
  });
  const config = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "coredns", namespace: DNS_NAMESPACE },
    data: { Corefile: corefile() },
  };
  const service = {
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
  };
  return [namespace as ManifestObject, config, ...rest, service];
}
