// The functions served by Knative on `cluster up --knative`, deployed as a user deploys them: the image from
// scripts/build-image.sh imported into the real node's containerd under the name `manifests` renders by
// default (dev.local/simkube-fn:VERSION, which Knative never resolves to a digest and never pulls), then
// what `manifests --platform kind --ingress traefik` renders, applied unchanged, except:
// - cert-manager is not installed (its cmd/* modules are refused by the Go module proxy), so its objects are
//   left out and the test stands in for its CA issuer: a serving certificate per function from the run's CA,
//   in the Secret each rendered Certificate names, and that CA as --ca-bundle. Issuing and
//   inject-ca-from are untested.
// - the functions' namespace is annotated to place its pods on the real node (the only node that runs
//   containers), as Knative's own namespace is.
// The deployment's webhook configuration then replaces the one pointing at the host processes.

import { readFile } from "node:fs/promises";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import {
  createManifestStream,
  type ManifestObject,
} from "../../../functions/local-cluster/knative/apply-yaml.js";
import { issueServingCert } from "../../../functions/local-cluster/pki.js";
import { placedOnRealNode } from "../../../functions/local-cluster/real-node/placement.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { certificateName, gatewayHost } from "../../../knative/gateway-route.js";
import { buildAllManifests, type Manifest } from "../../../knative/manifests.js";
import type { DeployedFunction, DeploymentOptions } from "../../../knative/options.js";
import { functionResourceName } from "../../../knative/webhook-endpoints.js";
import { eventually, replaceObject } from "./kube.js";

const KSVC = "/apis/serving.knative.dev/v1/namespaces";

/** Knative's shortest stable window and scale-to-zero grace, so a test sees zero within seconds. */
export const SHORT_AUTOSCALER = { "stable-window": "6s", "scale-to-zero-grace-period": "6s" };

/** The cluster's own deployment, rendered for kind behind Traefik; `minScale` keeps replicas warm (bench). */
export function knativeDeploymentOptions(c: LocalCluster, minScale = 0): DeploymentOptions {
  const { webhookMode: _mode, webhookUrls: _urls, ...rest } = c.deployment;
  return {
    ...rest,
    clusterPlatform: "kind",
    ingress: "traefik",
    caBundle: Buffer.from(c.caCertPem).toString("base64"),
    minScale,
    // Knative's default grace and the rendered 10m would keep reschedule-delete up for the whole file.
    tuning: { "reschedule-delete": { scaleDownDelay: "0s" } },
  };
}

/** The stand-in for cert-manager's CA issuer: each rendered Certificate's Secret, from the run's CA. */
async function createServingSecrets(c: LocalCluster, options: DeploymentOptions): Promise<void> {
  const o = resolveOptions(options);
  for (const fn of o.functions) {
    const host = gatewayHost(o, fn);
    const cert = await issueServingCert(c.dir, `${functionResourceName(o.name, fn)}-traefik`, [host]);
    await c.admin.ensure(`/api/v1/namespaces/${o.traefikNamespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: { name: certificateName(o, fn), namespace: o.traefikNamespace },
      data: {
        "tls.crt": (await readFile(cert.certFile)).toString("base64"),
        "tls.key": (await readFile(cert.keyFile)).toString("base64"),
      },
    });
  }
}

interface KnativeStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

export async function knativeServiceReady(
  c: LocalCluster,
  namespace: string,
  name: string,
): Promise<boolean> {
  const s = await c.admin.request<KnativeStatus>("GET", `${KSVC}/${namespace}/services/${name}`);
  return Boolean(s.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True"));
}

/**
 * Pods of one function's Knative Service that have not ended; `terminating` ones too when asked (a pod that is
 * draining may still answer, so "at zero" means none at all).
 */
export async function revisionPods(
  c: LocalCluster,
  namespace: string,
  service: string,
  terminating = false,
): Promise<{ name: string; ip?: string }[]> {
  const list = await c.admin.request<{
    items: {
      metadata: { name: string; deletionTimestamp?: string };
      status?: { phase?: string; podIP?: string };
    }[];
  }>("GET", `/api/v1/namespaces/${namespace}/pods?labelSelector=serving.knative.dev%2Fservice%3D${service}`);
  return list.items
    .filter((p) => terminating || !p.metadata.deletionTimestamp)
    .filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed")
    .map((p) => ({ name: p.metadata.name, ...(p.status?.podIP ? { ip: p.status.podIP } : {}) }));
}

export interface KnativeDeployment {
  options: DeploymentOptions;
  objects: Manifest[];
  /** Milliseconds from applying the rendered objects until both Knative Services were Ready. */
  readyMs: number;
  /** Milliseconds from the image import until the webhooks pointed at Knative. */
  deployMs: number;
}

export async function deployThroughKnative(
  c: LocalCluster,
  archive: string,
  minScale = 0,
): Promise<KnativeDeployment> {
  if (!c.realNode || !c.knative) throw new Error("the functions through Knative need cluster up --knative");
  const start = Date.now();
  await c.realNode.importImage(archive);
  await c.admin.request(
    "PATCH",
    "/api/v1/namespaces/knative-serving/configmaps/config-autoscaler",
    { data: SHORT_AUTOSCALER },
    "application/merge-patch+json",
  );
  const options = knativeDeploymentOptions(c, minScale);
  const o = resolveOptions(options);
  const namespace = placedOnRealNode({ metadata: { name: o.namespace, annotations: {} } });
  await c.admin.request(
    "PATCH",
    `/api/v1/namespaces/${o.namespace}`,
    { metadata: { annotations: namespace.metadata.annotations } },
    "application/merge-patch+json",
  );
  await createServingSecrets(c, options);
  const objects = buildAllManifests(options);
  const applied = objects.filter(
    (m) => !m.apiVersion.startsWith("cert-manager.io/") && m.kind !== "MutatingWebhookConfiguration",
  );
  const t0 = Date.now();
  await createManifestStream(c.admin, applied as unknown as ManifestObject[]);
  for (const fn of o.functions) {
    const name = functionResourceName(o.name, fn);
    await eventually(
      `Knative Service ${name} Ready`,
      () => knativeServiceReady(c, o.namespace, name),
      180_000,
    );
  }
  const readyMs = Date.now() - t0;
  for (const webhook of objects.filter((m) => m.kind === "MutatingWebhookConfiguration"))
    await replaceObject(c, webhook);
  return { options, objects, readyMs, deployMs: Date.now() - start };
}

export function serviceName(options: DeploymentOptions, fn: DeployedFunction): string {
  return functionResourceName(resolveOptions(options).name, fn);
}
