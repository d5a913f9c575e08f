// The functions served by Knative on `cluster up --knative`, deployed as a user deploys them: the image from
// scripts/build-image.sh imported into the real node's containerd under the name `manifests` renders by
// default (dev.local/simkube-fn:VERSION, which Knative never resolves to a digest and never pulls), then
// exactly what `manifests --platform kind --ingress traefik` renders, applied unchanged: cert-manager (on by
// default with --knative) issues the rendered CA and each function's serving certificate through the rendered
// ClusterIssuers, and its cainjector fills the webhook configuration's caBundle from the rendered
// cert-manager.io/inject-ca-from; no CA is passed by hand. One addition: the functions' namespace is
// annotated to place its pods on the real node (the only node that runs containers), as Knative's own
// namespace is. The deployment's webhook configuration then replaces the one pointing at the host processes,
// once every Certificate is Ready.

import { certificatePending } from "../../../functions/local-cluster/cert-manager/ready.js";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import {
  createManifestStream,
  type ManifestObject,
} from "../../../functions/local-cluster/knative/apply-yaml.js";
import { placedOnRealNode } from "../../../functions/local-cluster/real-node/placement.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { buildAllManifests, type Manifest } from "../../../knative/manifests.js";
import type { DeployedFunction, DeploymentOptions } from "../../../knative/options.js";
import { functionResourceName } from "../../../knative/webhook-endpoints.js";
import { eventually, replaceObject } from "./kube.js";

const KSVC = "/apis/serving.knative.dev/v1/namespaces";

/** Knative's shortest stable window and scale-to-zero grace, so a test sees zero within seconds. */
export const SHORT_AUTOSCALER = { "stable-window": "6s", "scale-to-zero-grace-period": "6s" };

/**
 * The cluster's own deployment, rendered for kind behind Traefik; `minScale` keeps replicas warm (bench). The
 * cluster's caBundle (its own CA, for the host processes) is dropped: the rendering's cert-manager CA is trusted.
 */
export function knativeDeploymentOptions(c: LocalCluster, minScale = 0): DeploymentOptions {
  const { webhookMode: _mode, webhookUrls: _urls, caBundle: _ca, ...rest } = c.deployment;
  return {
    ...rest,
    clusterPlatform: "kind",
    ingress: "traefik",
    minScale,
    // Knative's default grace and the rendered 10m would keep reschedule-delete up for the whole file.
    tuning: { "reschedule-delete": { scaleDownDelay: "0s" } },
  };
}

/**
 * Every Certificate of the rendering Ready (cert-manager issued it). A timeout names each one that is not, with
 * its own and its issuer's Ready condition, so an issuer that cannot issue is named instead of waited on.
 */
export async function certificatesReady(c: LocalCluster, objects: readonly Manifest[], timeoutMs = 180_000) {
  const certificates = objects.filter((m) => m.kind === "Certificate");
  await eventually(
    "the rendered Certificates Ready",
    async () => {
      const pending: string[] = [];
      for (const m of certificates) {
        const { name, namespace } = m.metadata as { name: string; namespace: string };
        const why = await certificatePending(c.admin, namespace, name);
        if (why) pending.push(why);
      }
      if (pending.length > 0) throw new Error(`not Ready: ${pending.join("; ")}`);
      return true;
    },
    timeoutMs,
  );
}

/** Until cert-manager's cainjector has filled every webhook's caBundle of the configuration. */
export async function caBundleInjected(c: LocalCluster, name: string, timeoutMs = 60_000): Promise<string> {
  let bundle = "";
  await eventually(
    `cert-manager's cainjector filling ${name}'s caBundle`,
    async () => {
      const config = await c.admin.request<{ webhooks?: { clientConfig: { caBundle?: string } }[] }>(
        "GET",
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`,
      );
      const bundles = (config.webhooks ?? []).map((w) => w.clientConfig.caBundle ?? "");
      bundle = bundles[0] ?? "";
      return bundles.length > 0 && bundles.every((b) => b !== "");
    },
    timeoutMs,
  );
  return bundle;
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
  const objects = buildAllManifests(options);
  const applied = objects.filter((m) => m.kind !== "MutatingWebhookConfiguration");
  const t0 = Date.now();
  await createManifestStream(c.admin, applied as unknown as ManifestObject[]);
  await certificatesReady(c, objects);
  for (const fn of o.functions) {
    const name = functionResourceName(o.name, fn);
    await eventually(
      `Knative Service ${name} Ready`,
      () => knativeServiceReady(c, o.namespace, name),
      180_000,
    );
  }
  const readyMs = Date.now() - t0;
  for (const webhook of objects.filter((m) => m.kind === "MutatingWebhookConfiguration")) {
    await replaceObject(c, webhook);
    await caBundleInjected(c, webhook.metadata?.name ?? "");
  }
  return { options, objects, readyMs, deployMs: Date.now() - start };
}

export function serviceName(options: DeploymentOptions, fn: DeployedFunction): string {
  return functionResourceName(resolveOptions(options).name, fn);
}
