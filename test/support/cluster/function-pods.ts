// The functions as pods on the real node: the image built by scripts/build-image.sh and imported into the
// node's containerd, serving certificates from the run's CA in the TLS Secrets `manifests --platform
// kubernetes` names, then everything it renders applied in its order (the pod-create policy, the RBAC and the
// path secret as rendered; `cluster up` already made the first two from the same options). The only change to
// the rendered objects: the Deployments get the real node's toleration and node selector, because a cluster's
// own placement is the operator's choice and this cluster keeps every other workload off that node. The
// webhook configuration replaces the one pointing at the host processes, so every review now goes through the
// Services to the pods.

import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { promisify } from "node:util";
import { Exec, KubeConfig } from "@kubernetes/client-node";
import { collectionPath, objectPath } from "../../../functions/local-cluster/cluster-objects.js";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { issueServingCert, WEBHOOK_CLIENT_CN } from "../../../functions/local-cluster/pki.js";
import { waitUntil } from "../../../functions/local-cluster/readiness.js";
import { REAL_NODE_LABEL, REAL_NODE_TAINT } from "../../../functions/local-cluster/real-node/configs.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { buildAllManifests, type Manifest } from "../../../knative/manifests.js";
import type { DeploymentOptions } from "../../../knative/options.js";
import { functionResourceName } from "../../../knative/webhook-endpoints.js";
import { CLIENT_CA_KEY, tlsSecretName } from "../../../knative/workloads.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { replaceObject } from "./kube.js";

const exec = promisify(execFile);

/** scripts/build-image.sh (a no-op when its cache holds this tree's image); the archive's path. */
export async function buildImage(repoRoot: string): Promise<string> {
  const { stdout } = await exec("bash", [path.join(repoRoot, "scripts", "build-image.sh")], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
  });
  return stdout.trim().split("\n").at(-1) ?? "";
}

/** The cluster's own deployment options, rendered for plain Kubernetes; mutate-create with two replicas. */
export function podDeploymentOptions(c: LocalCluster): DeploymentOptions {
  const { webhookMode: _mode, webhookUrls: _urls, ...rest } = c.deployment;
  return {
    ...rest,
    clusterPlatform: "kubernetes",
    caBundle: Buffer.from(c.caCertPem).toString("base64"),
    tuning: { "mutate-create": { minScale: 2 } },
    // The API server presents its webhook client certificate to `*.simkube.svc`; the pods verify it.
    ...(c.webhookClient
      ? { clientCaSecret: CLIENT_CA_SECRET, clientCertSubjects: [`CN=${WEBHOOK_CLIENT_CN}`] }
      : {}),
  };
}

/** The Secret holding the CA of the API server's webhook client certificate (its `ca.crt`). */
export const CLIENT_CA_SECRET = "apiserver-webhook-client-ca";

async function createClientCaSecret(c: LocalCluster, options: DeploymentOptions): Promise<void> {
  if (!c.webhookClient || !options.clientCaSecret) return;
  await c.admin.ensure(`/api/v1/namespaces/${resolveOptions(options).namespace}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: options.clientCaSecret, namespace: resolveOptions(options).namespace },
    data: { [CLIENT_CA_KEY]: (await readFile(c.webhookClient.caFile)).toString("base64") },
  });
}

export function placeOnRealNode(object: Manifest): Manifest {
  if (object.kind !== "Deployment") return object;
  const d = structuredClone(object) as Manifest & {
    spec: { template: { spec: Record<string, unknown> } };
  };
  d.spec.template.spec.nodeSelector = { [REAL_NODE_LABEL]: "true" };
  d.spec.template.spec.tolerations = [{ key: REAL_NODE_TAINT.key, operator: "Exists", effect: "NoSchedule" }];
  return d;
}

export async function createTlsSecrets(c: LocalCluster, options: DeploymentOptions): Promise<void> {
  const o = resolveOptions(options);
  for (const fn of o.functions) {
    const service = functionResourceName(o.name, fn);
    const cert = await issueServingCert(c.dir, `${service}-serving`, [
      `${service}.${o.namespace}.svc`,
      `${service}.${o.namespace}.svc.cluster.local`,
    ]);
    const data = {
      "tls.crt": (await readFile(cert.certFile)).toString("base64"),
      "tls.key": (await readFile(cert.keyFile)).toString("base64"),
    };
    await c.admin.ensure(`/api/v1/namespaces/${o.namespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: { name: tlsSecretName(o, fn), namespace: o.namespace },
      data,
    });
  }
}

interface DeploymentStatus {
  status?: { readyReplicas?: number; replicas?: number };
  spec?: { replicas?: number };
}

export interface DeployedPods {
  options: DeploymentOptions;
  /** Milliseconds from applying the Deployments until each was fully Ready. */
  readyMs: number;
}

/** Imports the image, applies the rendered deployment, waits for every replica, then switches the webhooks. */
export async function deployFunctionPods(c: LocalCluster, archive: string): Promise<DeployedPods> {
  if (!c.realNode) throw new Error("the functions as pods need the real node (realNode: true)");
  await c.realNode.importImage(archive);
  const options = podDeploymentOptions(c);
  await createTlsSecrets(c, options);
  await createClientCaSecret(c, options);
  const objects = buildAllManifests(options).map(placeOnRealNode);
  const webhooks = objects.filter((o) => o.kind === "MutatingWebhookConfiguration");
  const t0 = Date.now();
  for (const object of objects.filter((o) => !webhooks.includes(o))) {
    await c.admin.ensure(collectionPath(object as KubeObject), object);
  }
  for (const d of objects.filter((o) => o.kind === "Deployment")) {
    await waitUntil(
      `Deployment ${d.metadata?.name} Ready`,
      async () => {
        const got = await c.admin.request<DeploymentStatus>("GET", objectPath(d as KubeObject));
        return (got.status?.readyReplicas ?? 0) === got.spec?.replicas;
      },
      { timeoutMs: 120_000 },
    );
  }
  const readyMs = Date.now() - t0;
  for (const webhook of webhooks) await replaceObject(c, webhook);
  return { options, readyMs };
}

/** Runs `command` in a pod's container through the API server and the kubelet; its stdout. */
export async function execInPod(
  kubeconfig: string,
  namespace: string,
  pod: string,
  command: string[],
): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  await new Promise<void>((resolve, reject) => {
    new Exec(kc)
      .exec(namespace, pod, "function", command, stdout, stderr, null, false, (status) => {
        if (status.status === "Success") resolve();
        else reject(new Error(`${command.join(" ")} in ${pod}: ${status.message ?? ""} ${err}`));
      })
      .catch(reject);
  });
  return out;
}
