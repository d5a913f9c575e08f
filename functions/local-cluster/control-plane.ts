// etcd -> kube-apiserver -> kube-controller-manager -> kube-scheduler -> KWOK, as plain processes on
// 127.0.0.1, each started once the one before it answers. Flags are the smallest set that gives a cluster
// behaving as production does for pod deletion: RBAC, service-account tokens, controllers acting as their own
// service accounts (--use-service-account-credentials), and node-lifecycle timings short enough for tests.

import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { writeKubeconfigFile } from "./kubeconfig.js";
import type { ClientCert, Pki } from "./pki.js";
import { freePorts } from "./ports.js";
import { type ManagedProcess, startProcess } from "./processes.js";
import { httpGet, waitUntil } from "./readiness.js";
import { SERVICE_CIDR } from "./real-node/addresses.js";
import { PLACEMENT_ADMISSION_PLUGINS } from "./real-node/placement.js";

export interface ControlPlaneBinaries {
  /** Holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and (when it could be built) kwok. */
  binDir: string;
  /** KWOK's Stage configuration (SimKube's pod stages, node heartbeats). */
  kwokStagesFile: string;
}

/** Identities with a static token: the admin and the control-plane components. */
export const ADMIN_USER = "simkube-fn-admin";
export const KWOK_USER = "kwok-controller";

export interface ControlPlane {
  server: string;
  adminToken: string;
  adminKubeconfig: string;
  kwokKubeconfig: string;
  processes: ManagedProcess[];
  /** Milliseconds from the first spawn until each component answered. */
  timings: Record<string, number>;
}

const token = () => randomBytes(24).toString("hex");

/** Taint-based eviction and pod GC in seconds, not minutes (the defaults are 300 s tolerations, 50 s grace). */
const NODE_TOLERATION_SECONDS = 30;

/** What the API server needs when a real node (real-node/) joins: where the node reaches it, how it reaches kubelets. */
export interface RealNodeAccess {
  /** The host side of the node's veth: the API server listens (only) there. */
  address: string;
  kubeletClient: ClientCert;
}

function listenArgs(realNode: RealNodeAccess | undefined): string[] {
  if (!realNode) {
    return [
      "--bind-address=127.0.0.1",
      // No default route in a sandbox: the API server would fail to pick an address.
      "--advertise-address=127.0.0.1",
      // Endpoints may not hold loopback addresses; the lease reconciler would fail forever.
      "--endpoint-reconciler-type=none",
    ];
  }
  return [
    `--bind-address=${realNode.address}`,
    // The `kubernetes` Service's endpoint, which pods reach through kube-proxy.
    `--advertise-address=${realNode.address}`,
    // Webhook Services are called at their endpoints (pod IPs, routed to the node), not their ClusterIPs, which
    // exist only in the node's own iptables.
    "--enable-aggregator-routing=true",
    `--kubelet-client-certificate=${realNode.kubeletClient.certFile}`,
    `--kubelet-client-key=${realNode.kubeletClient.keyFile}`,
    // The node's name resolves nowhere; its InternalIP does.
    "--kubelet-preferred-address-types=InternalIP",
    // A namespace annotated so places its pods on the real node (real-node/placement.ts).
    `--enable-admission-plugins=${PLACEMENT_ADMISSION_PLUGINS.join(",")}`,
  ];
}

function apiserverArgs(
  dir: string,
  pki: Pki,
  ports: Record<string, number>,
  admissionConfigFile: string | undefined,
  realNode: RealNodeAccess | undefined,
): string[] {
  // Where kube-apiserver finds the client certificate it presents to webhooks (security.ts).
  const admission = admissionConfigFile ? [`--admission-control-config-file=${admissionConfigFile}`] : [];
  return [
    ...admission,
    `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
    `--secure-port=${ports.apiserver}`,
    ...listenArgs(realNode),
    `--tls-cert-file=${pki.apiserverCertFile}`,
    `--tls-private-key-file=${pki.apiserverKeyFile}`,
    `--client-ca-file=${pki.caCertFile}`,
    `--token-auth-file=${path.join(dir, "tokens.csv")}`,
    "--authorization-mode=Node,RBAC",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.saPubFile}`,
    `--service-account-signing-key-file=${pki.saKeyFile}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    "--allow-privileged=true",
    `--default-not-ready-toleration-seconds=${NODE_TOLERATION_SECONDS}`,
    `--default-unreachable-toleration-seconds=${NODE_TOLERATION_SECONDS}`,
  ];
}

function controllerManagerArgs(pki: Pki, kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    // Each controller (namespace, garbage collector, pod GC, node lifecycle...) deletes as its own account.
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${pki.saKeyFile}`,
    `--root-ca-file=${pki.caCertFile}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    "--leader-elect=false",
    "--controllers=*",
    // Not shorter: KWOK renews node Leases every ~10 s and falls behind under load (2,000 pods); a 10 s grace
    // then marked nodes NotReady and the taint manager evicted their pods in the middle of a benchmark.
    "--node-monitor-period=2s",
    "--node-monitor-grace-period=40s",
    "--node-startup-grace-period=20s",
  ];
}

async function writeTokens(dir: string, tokens: Record<string, string>): Promise<void> {
  // token,user,uid,"groups"
  const lines = [
    `${tokens.admin},${ADMIN_USER},${ADMIN_USER},"system:masters"`,
    `${tokens.kcm},system:kube-controller-manager,kcm`,
    `${tokens.scheduler},system:kube-scheduler,scheduler`,
    `${tokens.kwok},${KWOK_USER},kwok`,
  ];
  await writeFile(path.join(dir, "tokens.csv"), `${lines.join("\n")}\n`, { mode: 0o600 });
}

export interface StartControlPlaneOptions {
  dir: string;
  pki: Pki;
  binaries: ControlPlaneBinaries;
  /** Started processes are pushed here at once, so a failed start can still stop them. */
  processes: ManagedProcess[];
  /** kube-apiserver's --admission-control-config-file (the webhooks' client certificate); none: no credentials. */
  admissionConfigFile?: string;
  realNode?: RealNodeAccess;
}

function etcdArgs(dir: string, etcdUrl: string, peerUrl: string): string[] {
  return [
    "--name=default",
    `--data-dir=${path.join(dir, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    "--unsafe-no-fsync",
    "--listen-metrics-urls=",
    "--log-level=warn",
  ];
}

function schedulerArgs(kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    "--leader-elect=false",
  ];
}

type Tokens = { admin: string; kcm: string; scheduler: string; kwok: string };

/** One kubeconfig per client of the API server, each with its own identity. */
async function writeKubeconfigs(dir: string, server: string, pki: Pki, tokens: Tokens) {
  const kubeconfig = (name: string, user: string, t: string) =>
    writeKubeconfigFile(path.join(dir, `${name}.kubeconfig`), {
      server,
      caFile: pki.caCertFile,
      token: t,
      user,
    });
  return {
    admin: await kubeconfig("admin", ADMIN_USER, tokens.admin),
    kcm: await kubeconfig("kcm", "system:kube-controller-manager", tokens.kcm),
    scheduler: await kubeconfig("scheduler", "system:kube-scheduler", tokens.scheduler),
    kwok: await kubeconfig("kwok", KWOK_USER, tokens.kwok),
  };
}

function waitForHealthz(p: ManagedProcess, port: number): Promise<void> {
  return waitUntil(
    `${p.name} /healthz`,
    async () => (await httpGet(`https://127.0.0.1:${port}/healthz`, { insecure: true }))[0] === 200,
    {
      timeoutMs: 60_000,
      process: p,
    },
  );
}

async function waitForApiserver(apiserver: ManagedProcess, server: string, pki: Pki, adminToken: string) {
  const readyz = async () => {
    const [status, body] = await httpGet(`${server}/readyz`, { ca: pki.caCertPem, token: adminToken });
    return status === 200 && body.trim() === "ok";
  };
  await waitUntil("kube-apiserver /readyz", readyz, { timeoutMs: 120_000, process: apiserver });
}

export async function startControlPlane(options: StartControlPlaneOptions): Promise<ControlPlane> {
  const { dir, pki, binaries, processes } = options;
  const ports = await freePorts(["etcd", "etcdPeer", "apiserver", "kcm", "scheduler"] as const);
  const tokens: Tokens = { admin: token(), kcm: token(), scheduler: token(), kwok: token() };
  await writeTokens(dir, tokens);
  const server = `https://${options.realNode?.address ?? "127.0.0.1"}:${ports.apiserver}`;
  const kubeconfigs = await writeKubeconfigs(dir, server, pki, tokens);
  const logs = path.join(dir, "logs");
  await mkdir(logs, { recursive: true });
  const start = (name: string, args: string[]) => {
    const p = startProcess(name, path.join(binaries.binDir, name), args, path.join(logs, `${name}.log`));
    processes.push(p);
    return p;
  };
  const t0 = Date.now();
  const timings: Record<string, number> = {};

  const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
  const etcd = start("etcd", etcdArgs(dir, etcdUrl, `http://127.0.0.1:${ports.etcdPeer}`));
  await waitUntil("etcd /health", async () => (await httpGet(`${etcdUrl}/health`))[0] === 200, {
    timeoutMs: 30_000,
    process: etcd,
  });
  timings.etcd = Date.now() - t0;

  const apiserver = start(
    "kube-apiserver",
    apiserverArgs(dir, pki, ports, options.admissionConfigFile, options.realNode),
  );
  await waitForApiserver(apiserver, server, pki, tokens.admin);
  timings.apiserver = Date.now() - t0;

  // Both start at once; each waits for the API server, not for the other.
  const kcm = start("kube-controller-manager", controllerManagerArgs(pki, kubeconfigs.kcm, ports.kcm));
  const scheduler = start("kube-scheduler", schedulerArgs(kubeconfigs.scheduler, ports.scheduler));
  await waitForHealthz(kcm, ports.kcm);
  timings.controllerManager = Date.now() - t0;
  await waitForHealthz(scheduler, ports.scheduler);
  timings.scheduler = Date.now() - t0;

  const { admin: adminKubeconfig, kwok: kwokKubeconfig } = kubeconfigs;
  return { server, adminToken: tokens.admin, adminKubeconfig, kwokKubeconfig, processes, timings };
}
