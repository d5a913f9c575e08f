// The real node's configuration files, rendered from plain inputs (no I/O here): containerd's TOML, the CNI
// bridge network, the KubeletConfiguration and the KubeProxyConfiguration. Every path they name is under the
// cluster's own run directory, so nothing here reads or writes the system's containerd or kubelet state.

import { stringify } from "yaml";
import type { NodeAddresses } from "./addresses.js";

export interface NodePaths {
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  cniConfDir: string;
  cniDataDir: string;
  kubeletRoot: string;
  podLogs: string;
}

/** The taint that keeps simulation pods off the real node: only workloads that tolerate it run there. */
export const REAL_NODE_TAINT = { key: "simkube-fn/real-node", value: "true", effect: "NoSchedule" } as const;
/** The label that lets the project's own workloads select the real node. */
export const REAL_NODE_LABEL = "simkube-fn/real-node";

const toml = (value: string) => JSON.stringify(value);

export interface ContainerdInputs {
  paths: NodePaths;
  runcPath: string;
  cniBinDir: string;
  sandboxImage: string;
}

/**
 * containerd 1.6 (config version 2). restrict_oom_score_adj: without CAP_SYS_RESOURCE runc cannot give the
 * sandbox the -998 the CRI plugin asks for, and every sandbox fails ("can't get final child's PID from pipe").
 * The opt plugin's path is moved too: its default (/opt/containerd) is outside the run directory.
 */
export function containerdConfig(c: ContainerdInputs): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    "version = 2",
    `root = ${toml(c.paths.containerdRoot)}`,
    `state = ${toml(c.paths.containerdState)}`,
    "[grpc]",
    `  address = ${toml(c.paths.containerdSocket)}`,
    "[ttrpc]",
    `  address = ${toml(`${c.paths.containerdSocket}.ttrpc`)}`,
    `[plugins."io.containerd.internal.v1.opt"]`,
    `  path = ${toml(`${c.paths.containerdRoot}/opt`)}`,
    `[${cri}]`,
    `  sandbox_image = ${toml(c.sandboxImage)}`,
    "  restrict_oom_score_adj = true",
    "  disable_hugetlb_controller = true",
    "  tolerate_missing_hugetlb_controller = true",
    `[${cri}.containerd]`,
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${cri}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${toml(c.runcPath)}`,
    "  SystemdCgroup = false",
    `[${cri}.cni]`,
    `  bin_dir = ${toml(c.cniBinDir)}`,
    `  conf_dir = ${toml(c.paths.cniConfDir)}`,
    "",
  ].join("\n");
}

/** One bridge, host-local IPAM; no portmap (so the CNI plugins write no iptables rules of their own). */
export function cniConflist(a: NodeAddresses, dataDir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "simkube-fn-real-node",
      plugins: [
        {
          type: "bridge",
          bridge: a.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir,
            ranges: [[{ subnet: a.podCidr, gateway: a.podGateway }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "loopback" },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletInputs {
  paths: NodePaths;
  addresses: NodeAddresses;
  caFile: string;
  /** The kubelet's pods go under this cgroup (one per node, so two clusters' kubelets never share one). */
  cgroupRoot: string;
  /** The cluster DNS Service's address written into pods' resolv.conf (none: pods get the node's own). */
  clusterDns?: string;
}

/**
 * cgroupfs driver on this cgroup v1 machine (1.35+ kubelets refuse v1 unless failCgroupV1 is false), swap
 * tolerated, no eviction and no image GC (a test node, not a production one). Requests from the API server
 * (logs, exec) are checked against the cluster: client certificates from the run's CA, webhook authorization.
 */
export function kubeletConfig(k: KubeletInputs): string {
  const endpoint = `unix://${k.paths.containerdSocket}`;
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    cgroupDriver: "cgroupfs",
    cgroupRoot: k.cgroupRoot,
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: endpoint,
    imageServiceEndpoint: endpoint,
    address: k.addresses.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    podLogsDir: k.paths.podLogs,
    evictionHard: {},
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    registerWithTaints: [REAL_NODE_TAINT],
    ...(k.clusterDns ? { clusterDNS: [k.clusterDns], clusterDomain: "cluster.local" } : {}),
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: k.caFile },
    },
    authorization: { mode: "Webhook" },
  });
}

/**
 * iptables mode inside the node's network namespace. The conntrack settings are zero so that kube-proxy leaves
 * the kernel's conntrack table (shared by every namespace) as it is.
 */
export function kubeProxyConfig(a: NodeAddresses, kubeconfig: string, nodeName: string): string {
  return stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    clientConnection: { kubeconfig },
    hostnameOverride: nodeName,
    mode: "iptables",
    clusterCIDR: a.podCidr,
    bindAddress: a.nodeIp,
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
  });
}
