// OpenFaaS CE on the real node (`cluster up --openfaas`): the gateway and faas-netes from build.sh, each packed
// into a one-layer image and imported into the node's containerd, then the objects of objects.ts created.
// Ready when the gateway answers GET /system/functions with basic auth and has deployed a function: a probe
// (of-watchdog alone serving files, read-only root) deployed through POST /system/functions, listed, called
// through /function/<name>, and removed. Then the TLS front (tls-front.ts) that the API server calls.

import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { createManifestStream } from "../knative/apply-yaml.js";
import { waitForDeployments } from "../knative/serving-ready.js";
import { issueServingCert } from "../pki.js";
import { waitUntil } from "../readiness.js";
import { writeBinaryImage } from "../real-node/pause-image.js";
import type { RealNode } from "../real-node/real-node.js";
import type { RestClient } from "../rest.js";
import type { OpenfaasBuild } from "./build.js";
import { waitForFunctionPods } from "./function-status.js";
import { createGatewayClient, type GatewayClient, listFunctions } from "./gateway-client.js";
import {
  GATEWAY_LABELS,
  GATEWAY_NAME,
  GATEWAY_PORT,
  OPENFAAS_FUNCTION_NAMESPACE,
  OPENFAAS_NAMESPACE,
  openfaasObjects,
} from "./objects.js";
import { startTlsFront, type TlsFront } from "./tls-front.js";

/** Named after the upstream commits controlplane/openfaas/build.sh builds. */
export const GATEWAY_IMAGE = "dev.local/openfaas-gateway:cf8741ac";
export const FAAS_NETES_IMAGE = "dev.local/openfaas-faas-netes:dc46f5f9";
/** of-watchdog alone: the probe function, and the Prometheus stand-in in the gateway's pod. */
export const PROBE_IMAGE = "dev.local/openfaas-watchdog:0.10.6";
const PROBE_FUNCTION = "openfaas-probe";
const IMAGE_USER = "65532";
/** The gateway's and faas-netes' timeouts: above the webhooks' (at most 30 s in admissionregistration/v1). */
const TIMEOUT = "65s";

export interface Openfaas {
  readonly namespace: string;
  readonly functionNamespace: string;
  /** http://<gateway pod>:8080, reachable from this host (faas-cli's --gateway). */
  readonly gatewayUrl: string;
  /** https://localhost:<port>, the TLS front: what `manifests --webhook-gateway-url` takes. */
  readonly webhookGatewayUrl: string;
  /** The TLS front's certificate's CA: the run's CA, PEM. */
  readonly caCertPem: string;
  readonly password: string;
  readonly gateway: GatewayClient;
  readonly build: OpenfaasBuild;
  readonly front: TlsFront;
  /** Milliseconds from the first image import until the probe function was deployed, called and removed. */
  readonly readyMs: number;
}

async function importImages(node: RealNode, build: OpenfaasBuild, work: string): Promise<void> {
  const images: [string, string][] = [
    ["gateway", GATEWAY_IMAGE],
    ["faas-netes", FAAS_NETES_IMAGE],
    ["fwatchdog", PROBE_IMAGE],
  ];
  for (const [file, name] of images) {
    const binary = path.join(build.binDir, file);
    await node.importImage(await writeBinaryImage({ binary, file, name, user: IMAGE_USER, work }));
  }
  await rm(work, { recursive: true, force: true });
}

async function gatewayPodIp(admin: RestClient): Promise<string> {
  const selector = encodeURIComponent(`app=${GATEWAY_LABELS.app}`);
  const pods = await admin.request<{ items: { status?: { podIP?: string; phase?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${OPENFAAS_NAMESPACE}/pods?labelSelector=${selector}`,
  );
  const ip = pods.items.find((p) => p.status?.phase === "Running" && p.status.podIP)?.status?.podIP;
  if (!ip) throw new Error("the gateway's pod has no IP");
  return ip;
}

/** Deploys the probe through the gateway, waits for it (bounded), calls it, removes it. */
async function probeDeploy(admin: RestClient, gateway: GatewayClient): Promise<void> {
  const deployed = await gateway.request("POST", "/system/functions", {
    service: PROBE_FUNCTION,
    image: PROBE_IMAGE,
    namespace: OPENFAAS_FUNCTION_NAMESPACE,
    envVars: { mode: "static", static_path: "/" },
    readOnlyRootFilesystem: true,
  });
  if (deployed.status !== 202 && deployed.status !== 200)
    throw new Error(
      `the gateway refused to deploy ${PROBE_FUNCTION}: ${deployed.status} ${deployed.body.trim()}`,
    );
  await waitForFunctionPods(admin, OPENFAAS_FUNCTION_NAMESPACE, PROBE_FUNCTION, 120_000);
  await waitUntil(
    `GET /function/${PROBE_FUNCTION} through the gateway`,
    async () =>
      (await gateway.request("GET", `/function/${PROBE_FUNCTION}/`, undefined, false)).status === 200,
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  // A non-empty list is the path that needs the Prometheus stand-in (objects.ts).
  const listed = (await listFunctions(gateway)).map((f) => f.name);
  if (!listed.includes(PROBE_FUNCTION))
    throw new Error(`the gateway lists ${listed.join(", ")}, not ${PROBE_FUNCTION}`);
  const removed = await gateway.request("DELETE", "/system/functions", { functionName: PROBE_FUNCTION });
  if (removed.status >= 300)
    throw new Error(`removing ${PROBE_FUNCTION}: ${removed.status} ${removed.body.trim()}`);
}

export async function installOpenfaas(
  admin: RestClient,
  node: RealNode,
  build: OpenfaasBuild,
  dirs: { work: string; pki: string; caCertFile: string },
): Promise<Openfaas> {
  const t0 = Date.now();
  await importImages(node, build, dirs.work);
  const password = randomBytes(18).toString("base64url");
  const images = { gateway: GATEWAY_IMAGE, faasNetes: FAAS_NETES_IMAGE, watchdog: PROBE_IMAGE };
  await createManifestStream(admin, openfaasObjects({ images, password, timeout: TIMEOUT }));
  await waitForDeployments(admin, [{ namespace: OPENFAAS_NAMESPACE, name: GATEWAY_NAME }]);
  const gatewayUrl = `http://${await gatewayPodIp(admin)}:${GATEWAY_PORT}`;
  const gateway = createGatewayClient(gatewayUrl, password);
  await waitUntil("the gateway listing functions", async () => Array.isArray(await listFunctions(gateway)), {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
  await probeDeploy(admin, gateway);
  const readyMs = Date.now() - t0;
  const cert = await issueServingCert(dirs.pki, "openfaas-gateway-front", ["localhost"]);
  const front = await startTlsFront({
    admin,
    namespace: OPENFAAS_NAMESPACE,
    service: GATEWAY_NAME,
    cert: await readFile(cert.certFile, "utf8"),
    key: await readFile(cert.keyFile, "utf8"),
  });
  return {
    namespace: OPENFAAS_NAMESPACE,
    functionNamespace: OPENFAAS_FUNCTION_NAMESPACE,
    gatewayUrl,
    webhookGatewayUrl: front.url,
    caCertPem: await readFile(dirs.caCertFile, "utf8"),
    password,
    gateway,
    build,
    front,
    readyMs,
  };
}
