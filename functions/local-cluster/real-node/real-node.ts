// A real kubelet node beside the KWOK nodes (`cluster up --real-node`): containerd and runc from the machine
// (Debian's packages; scripts/install-real-node.sh), kubelet and kube-proxy built with the control plane, the
// CNI bridge, all inside the node's own namespaces (namespaces.ts). Two steps, because the API server must
// listen where the node reaches it: prepareRealNode (namespaces, veth, certificates) before the control plane,
// startRealNode (containerd, the sandbox image, kubelet, kube-proxy) after it.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { writeKubeconfigFile } from "../kubeconfig.js";
import { type ClientCert, issueClientCert } from "../pki.js";
import type { ManagedProcess } from "../processes.js";
import { waitUntil } from "../readiness.js";
import type { RestClient } from "../rest.js";
import { createCgroupRoot, removeCgroupRoot } from "./cgroups.js";
import { cniConflist, containerdConfig, kubeletConfig, kubeProxyConfig, type NodePaths } from "./configs.js";
import { createNodeNamespaces, type NodeNamespaces } from "./namespaces.js";
import { PAUSE_IMAGE, writePauseImage } from "./pause-image.js";

const exec = promisify(execFile);

export const REAL_NODE_NAME = "real-node";
/** The machine's programs the node needs (Debian: containerd, runc, containernetworking-plugins, iptables). */
export const NODE_PROGRAMS = {
  containerd: "/usr/bin/containerd",
  ctr: "/usr/bin/ctr",
  runc: "/usr/sbin/runc",
  cniBridge: "/usr/lib/cni/bridge",
  iptables: "/usr/sbin/iptables",
  unshare: "/usr/bin/unshare",
  nsenter: "/usr/bin/nsenter",
} as const;
const CNI_BIN_DIR = "/usr/lib/cni";

export class RealNodeUnavailableError extends Error {
  override readonly name = "RealNodeUnavailableError";
}

export function missingNodePrograms(exists: (file: string) => boolean = existsSync): string[] {
  return Object.values(NODE_PROGRAMS).filter((file) => !exists(file));
}

export interface PreparedNode {
  readonly namespaces: NodeNamespaces;
  readonly dir: string;
  stop(): Promise<void>;
}

export interface NodeCertificates {
  /** The API server's identity towards kubelets (logs, exec). */
  readonly kubeletClient: ClientCert;
  readonly node: ClientCert;
  readonly proxy: ClientCert;
}

export interface RealNode {
  readonly name: string;
  readonly namespaces: NodeNamespaces;
  readonly containerdSocket: string;
  readonly podLogs: string;
  /** `ctr -n k8s.io images import` into this node's containerd. */
  importImage(archive: string): Promise<void>;
  /** Milliseconds from the kubelet's start until the node was Ready. */
  readonly readyMs: number;
}

function nodePaths(dir: string): NodePaths {
  return {
    containerdRoot: path.join(dir, "containerd", "root"),
    containerdState: path.join(dir, "containerd", "state"),
    containerdSocket: path.join(dir, "containerd", "containerd.sock"),
    cniConfDir: path.join(dir, "cni", "net.d"),
    cniDataDir: path.join(dir, "cni", "ipam"),
    kubeletRoot: path.join(dir, "kubelet"),
    podLogs: path.join(dir, "pod-logs"),
  };
}

export const cgroupRootName = (namespaces: NodeNamespaces) => `simkube-fn-node-${namespaces.addresses.index}`;

/** The node's namespaces and veth (the API server then listens on the host side). */
export async function prepareRealNode(runDir: string): Promise<PreparedNode> {
  const missing = missingNodePrograms();
  if (missing.length > 0)
    throw new RealNodeUnavailableError(
      `--real-node needs ${missing.join(", ")}: run scripts/install-real-node.sh`,
    );
  const dir = path.join(runDir, "node");
  await mkdir(path.join(dir, "sysctl"), { recursive: true });
  await mkdir(path.join(runDir, "logs"), { recursive: true });
  const namespaces = await createNodeNamespaces(
    path.join(dir, "sysctl"),
    path.join(runDir, "logs", "node-namespaces.log"),
  );
  const stop = async () => {
    await namespaces.stop();
    await removeCgroupTreeWhenEmpty(cgroupRootName(namespaces));
  };
  return { namespaces, dir, stop };
}

/** The certificates the API server and the node present to each other, signed by the run's CA (in pkiDir). */
export async function nodeCertificates(pkiDir: string): Promise<NodeCertificates> {
  return {
    kubeletClient: await issueClientCert(
      pkiDir,
      "apiserver-kubelet-client",
      "kube-apiserver-kubelet-client",
      "system:masters",
    ),
    node: await issueClientCert(pkiDir, "node", `system:node:${REAL_NODE_NAME}`, "system:nodes"),
    proxy: await issueClientCert(pkiDir, "kube-proxy", "system:kube-proxy"),
  };
}

/** The PID namespace's processes may take a moment to leave their cgroups after its init dies. */
async function removeCgroupTreeWhenEmpty(name: string): Promise<void> {
  let left: string[] = [];
  await waitUntil(
    `cgroup ${name} removed`,
    async () => {
      left = removeCgroupRoot(name);
      return left.length === 0;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  ).catch(() => {
    throw new Error(`could not remove the real node's cgroups: ${left.join("; ")}`);
  });
}

async function ctr(socket: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await exec(NODE_PROGRAMS.ctr, ["--address", socket, ...args], { maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`ctr ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
  }
}

async function writeNodeFiles(o: StartRealNodeOptions, paths: NodePaths) {
  const { prepared: p, server, caFile } = o;
  const a = p.namespaces.addresses;
  for (const d of [
    paths.containerdRoot,
    paths.containerdState,
    paths.cniConfDir,
    paths.cniDataDir,
    paths.kubeletRoot,
    paths.podLogs,
  ])
    await mkdir(d, { recursive: true });
  const file = async (name: string, text: string) => {
    await writeFile(path.join(p.dir, name), text);
    return path.join(p.dir, name);
  };
  await writeFile(path.join(paths.cniConfDir, "10-simkube-fn.conflist"), cniConflist(a, paths.cniDataDir));
  const kubeconfig = (name: string, user: string, cert: ClientCert) =>
    writeKubeconfigFile(path.join(p.dir, `${name}.kubeconfig`), {
      server,
      caFile,
      user,
      clientCertificate: cert.certFile,
      clientKey: cert.keyFile,
    });
  return {
    containerd: await file(
      "containerd.toml",
      containerdConfig({
        paths,
        runcPath: NODE_PROGRAMS.runc,
        cniBinDir: CNI_BIN_DIR,
        sandboxImage: PAUSE_IMAGE,
      }),
    ),
    kubelet: await file(
      "kubelet.yaml",
      kubeletConfig({
        paths,
        addresses: a,
        caFile,
        cgroupRoot: `/${cgroupRootName(p.namespaces)}`,
        ...(o.clusterDns ? { clusterDns: o.clusterDns } : {}),
      }),
    ),
    kubeletKubeconfig: await kubeconfig("kubelet", `system:node:${REAL_NODE_NAME}`, o.certificates.node),
    proxyKubeconfig: await kubeconfig("kube-proxy", "system:kube-proxy", o.certificates.proxy),
  };
}

export interface StartRealNodeOptions {
  prepared: PreparedNode;
  certificates: NodeCertificates;
  binDir: string;
  server: string;
  caFile: string;
  admin: RestClient;
  logDir: string;
  /** The cluster DNS Service's address for pods' resolv.conf (--knative runs CoreDNS there). */
  clusterDns?: string;
}

async function startContainerd(
  o: StartRealNodeOptions,
  config: string,
  socket: string,
): Promise<ManagedProcess> {
  const containerd = o.prepared.namespaces.start(
    "containerd",
    NODE_PROGRAMS.containerd,
    ["--config", config],
    path.join(o.logDir, "containerd.log"),
  );
  await waitUntil("containerd", async () => (await ctr(socket, ["version"])).includes("Server"), {
    timeoutMs: 30_000,
    process: containerd,
  });
  return containerd;
}

async function waitForNodeReady(admin: RestClient, kubelet: ManagedProcess): Promise<void> {
  await waitUntil(
    `node ${REAL_NODE_NAME} Ready (kubelet)`,
    async () => {
      const node = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
        "GET",
        `/api/v1/nodes/${REAL_NODE_NAME}`,
      );
      return Boolean(node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    },
    { timeoutMs: 120_000, process: kubelet },
  );
}

/** Built by controlplane/build.sh beside the control plane. */
export const REAL_NODE_BINARIES = ["kubelet", "kube-proxy", "pause"] as const;

export async function startRealNode(o: StartRealNodeOptions): Promise<RealNode> {
  const { prepared } = o;
  const absent = REAL_NODE_BINARIES.filter((name) => !existsSync(path.join(o.binDir, name)));
  if (absent.length > 0)
    throw new RealNodeUnavailableError(`${o.binDir} lacks ${absent.join(", ")}: rerun controlplane/build.sh`);
  const paths = nodePaths(prepared.dir);
  const files = await writeNodeFiles(o, paths);
  await createCgroupRoot(cgroupRootName(prepared.namespaces));
  const socket = paths.containerdSocket;
  await startContainerd(o, files.containerd, socket);
  const importImage = async (archive: string) => {
    await ctr(socket, ["--namespace", "k8s.io", "images", "import", archive]);
  };
  await importImage(await writePauseImage(path.join(o.binDir, "pause"), prepared.dir));
  const a = prepared.namespaces.addresses;
  const t0 = Date.now();
  const kubelet = prepared.namespaces.start(
    "kubelet",
    path.join(o.binDir, "kubelet"),
    [
      `--config=${files.kubelet}`,
      `--kubeconfig=${files.kubeletKubeconfig}`,
      `--root-dir=${paths.kubeletRoot}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-ip=${a.nodeIp}`,
      "--node-labels=simkube-fn/real-node=true",
    ],
    path.join(o.logDir, "kubelet.log"),
  );
  prepared.namespaces.start(
    "kube-proxy",
    path.join(o.binDir, "kube-proxy"),
    [`--config=${await writeProxyConfig(prepared, files.proxyKubeconfig)}`],
    path.join(o.logDir, "kube-proxy.log"),
  );
  await waitForNodeReady(o.admin, kubelet);
  return {
    name: REAL_NODE_NAME,
    namespaces: prepared.namespaces,
    containerdSocket: socket,
    podLogs: paths.podLogs,
    importImage,
    readyMs: Date.now() - t0,
  };
}

async function writeProxyConfig(p: PreparedNode, kubeconfig: string): Promise<string> {
  const file = path.join(p.dir, "kube-proxy.yaml");
  await writeFile(file, kubeProxyConfig(p.namespaces.addresses, kubeconfig, REAL_NODE_NAME));
  return file;
}
