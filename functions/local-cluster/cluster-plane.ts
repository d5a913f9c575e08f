// The cluster's processes before any object exists: the PKI, how the functions are guarded, the control plane
// started with them, and the real node with Knative Serving on it when asked for.

import path from "node:path";
import { FUNCTION_NAMES, type FunctionName } from "../../shared/base/index.js";
import { DEFAULT_VIRTUAL_NS_PREFIX } from "../../shared/simulation/index.js";
import { type CertManager, installCertManager } from "./cert-manager/install.js";
import {
  DEFAULT_SIM_NAME,
  FUNCTIONS_NAMESPACE,
  type LocalClusterOptions,
  type Run,
  type Setup,
} from "./cluster-types.js";
import { startControlPlane } from "./control-plane.js";
import { CLUSTER_DNS_IP } from "./knative/cluster-dns.js";
import { installKnativeServing, type KnativeServing } from "./knative/serving.js";
import type { OpenfaasBuild } from "./openfaas/build.js";
import { installOpenfaas, type Openfaas } from "./openfaas/install.js";
import { createPki, type Pki } from "./pki.js";
import { freePort } from "./ports.js";
import {
  type NodeCertificates,
  nodeCertificates,
  type PreparedNode,
  type RealNode,
  startRealNode,
} from "./real-node/real-node.js";
import { createRestClient } from "./rest.js";
import { newPathSecret, writeWebhookClientFiles } from "./security.js";

/** Production mode: the path secret and kube-apiserver's client certificate for the functions' URLs. */
async function securityFor(
  dir: string,
  pki: Pki,
  ports: Record<FunctionName, number>,
  insecureDev?: boolean,
) {
  if (insecureDev) return { security: "insecure-dev" as const };
  // The host processes by URL host:port; functions deployed as pods in the functions' namespace
  // (`manifests --platform kubernetes --client-ca-secret`) by their Service's name, matched by the wildcard.
  const hostPorts = [...FUNCTION_NAMES.map((fn) => `127.0.0.1:${ports[fn]}`), `*.${FUNCTIONS_NAMESPACE}.svc`];
  const client = {
    certFile: pki.webhookClientCertFile,
    keyFile: pki.webhookClientKeyFile,
    caFile: pki.webhookClientCaFile,
  };
  return {
    security: "production" as const,
    pathSecret: newPathSecret(),
    webhookClient: client,
    admissionConfigFile: await writeWebhookClientFiles(dir, hostPorts, client),
  };
}

async function functionPorts(): Promise<Record<FunctionName, number>> {
  const ports = {} as Record<FunctionName, number>;
  for (const fn of FUNCTION_NAMES) ports[fn] = await freePort();
  return ports;
}

/**
 * The run's credentials, how the functions are guarded, and the control plane started with them; with a real
 * node, the API server listens where the node reaches it.
 */
export async function startPlane(options: LocalClusterOptions, run: Run) {
  const { dir, processes, node } = run;
  const hostIp = node?.namespaces.addresses.hostIp;
  const pki = await createPki(dir, hostIp ? [hostIp] : []);
  const certificates = node ? await nodeCertificates(dir) : undefined;
  // The ports first: kube-apiserver's webhook credentials are keyed by the functions' host:port.
  const ports = await functionPorts();
  const guard = await securityFor(dir, pki, ports, options.insecureDev);
  const plane = await startControlPlane({
    dir,
    pki,
    binaries: options.binaries,
    processes,
    ...("admissionConfigFile" in guard ? { admissionConfigFile: guard.admissionConfigFile } : {}),
    ...(hostIp && certificates
      ? { realNode: { address: hostIp, kubeletClient: certificates.kubeletClient } }
      : {}),
  });
  const timings: Record<string, number> = { ...plane.timings };
  const admin = createRestClient(plane.server, pki.caCertPem, plane.adminToken);
  const simName = options.simName ?? DEFAULT_SIM_NAME;
  const s: Setup = {
    dir,
    pki,
    admin,
    server: plane.server,
    simName,
    prefix: DEFAULT_VIRTUAL_NS_PREFIX,
    ports,
    security: guard.security,
    ...("pathSecret" in guard ? { pathSecret: guard.pathSecret } : {}),
  };
  const webhookClient = "webhookClient" in guard ? guard.webhookClient : undefined;
  return { s, plane, timings, webhookClient, certificates };
}

interface NodeWorkloads {
  realNode?: RealNode;
  knative?: KnativeServing;
  certManager?: CertManager;
  openfaas?: Openfaas;
}

/** OpenFaaS on the real node (--openfaas), its TLS front closed with the cluster. */
async function startOpenfaas(
  s: Setup,
  realNode: RealNode,
  build: OpenfaasBuild,
  closers: (() => Promise<void>)[],
): Promise<Openfaas> {
  const dirs = { work: path.join(s.dir, "openfaas-images"), pki: s.dir, caCertFile: s.pki.caCertFile };
  const openfaas = await installOpenfaas(s.admin, realNode, build, dirs);
  closers.push(() => openfaas.front.stop());
  return openfaas;
}

/**
 * The real node (--real-node), and on it cert-manager (--cert-manager), then Knative Serving (--knative) or
 * OpenFaaS (--openfaas), each timed from the start.
 */
export async function startNodeWorkloads(
  options: LocalClusterOptions,
  up: {
    s: Setup;
    plane: { server: string };
    node?: PreparedNode;
    certificates?: NodeCertificates;
    closers: (() => Promise<void>)[];
  },
  timings: Record<string, number>,
  t0: number,
): Promise<NodeWorkloads> {
  const { s, node, certificates } = up;
  if (!node || !certificates) return {};
  const realNode = await startRealNode({
    ...{ prepared: node, certificates, binDir: options.binaries.binDir },
    ...{
      server: up.plane.server,
      caFile: s.pki.caCertFile,
      admin: s.admin,
      logDir: path.join(s.dir, "logs"),
    },
    ...(options.knative ? { clusterDns: CLUSTER_DNS_IP } : {}),
  });
  timings.realNodeReady = Date.now() - t0;
  const images = path.join(s.dir, "images");
  const certManager = options.certManager
    ? await installCertManager(s.admin, realNode, options.certManager, images)
    : undefined;
  if (certManager) timings.certManagerReady = Date.now() - t0;
  if (options.openfaas) {
    const openfaas = await startOpenfaas(s, realNode, options.openfaas, up.closers);
    timings.openfaasReady = Date.now() - t0;
    return { realNode, openfaas, ...(certManager ? { certManager } : {}) };
  }
  if (!options.knative) return { realNode, ...(certManager ? { certManager } : {}) };
  const knative = await installKnativeServing(s.admin, realNode, options.knative, images);
  timings.knativeReady = Date.now() - t0;
  return { realNode, knative, ...(certManager ? { certManager } : {}) };
}
