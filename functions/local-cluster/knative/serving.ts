// Knative Serving on the real node (`cluster up --knative`): each program of build-serving.sh packed into a
// one-layer image under the name Knative's YAML gives it and imported into the node's containerd, then
// serving-core.yaml created as it is, except for two things this cluster lacks:
// - placement: Knative's namespace is annotated so its pods go to the (tainted) real node (placement.ts);
// - cluster DNS: the activator reaches the autoscaler at autoscaler.knative-serving.svc.<domain>, which
//   nothing resolves here, so the activator's pods get a hostAliases entry for that Service's ClusterIP.
// Ready when the four Deployments are Available and Knative's own admission webhook refuses an invalid Service.

import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { waitUntil } from "../readiness.js";
import { writeBinaryImage } from "../real-node/pause-image.js";
import { placedOnRealNode } from "../real-node/placement.js";
import type { RealNode } from "../real-node/real-node.js";
import type { RestClient } from "../rest.js";
import { RestError } from "../rest.js";
import { createManifestStream, type ManifestObject, parseManifestStream } from "./apply-yaml.js";
import {
  KNATIVE_NAMESPACE,
  type KnativeServingBuild,
  readServingImages,
  SERVING_DEPLOYMENTS,
  SERVING_PROGRAMS,
  type ServingProgram,
} from "./serving-build.js";

/** ko's default user: Knative's Deployments run as non-root, which needs a numeric user in the image. */
const IMAGE_USER = "65532";
const READY_TIMEOUT_MS = 300_000;
const KSVC_PATH = "/apis/serving.knative.dev/v1/namespaces";

export interface KnativeServing {
  readonly namespace: string;
  /** Image name by program (helloworld included, for trying a Service). */
  readonly images: Record<ServingProgram, string>;
  /** Milliseconds from the first image import until Knative's webhook admitted. */
  readonly readyMs: number;
}

/** Knative's objects, its namespace annotated to place its pods on the real node. */
export function servingObjects(coreYaml: string): ManifestObject[] {
  return parseManifestStream(coreYaml).map((o) =>
    o.kind === "Namespace" && o.metadata.name === KNATIVE_NAMESPACE ? placedOnRealNode(o) : o,
  );
}

/** The activator's stand-in for cluster DNS: the autoscaler Service's names at its ClusterIP. */
export function autoscalerHostAlias(clusterIp: string, clusterDomain = "cluster.local") {
  const service = `autoscaler.${KNATIVE_NAMESPACE}`;
  const hostnames = [`${service}.svc.${clusterDomain}`, `${service}.svc`, service];
  return { spec: { template: { spec: { hostAliases: [{ ip: clusterIp, hostnames }] } } } };
}

async function importImages(node: RealNode, build: KnativeServingBuild, work: string) {
  const images = await readServingImages(build);
  for (const program of SERVING_PROGRAMS) {
    const binary = path.join(build.binDir, program);
    const archive = await writeBinaryImage({
      binary,
      file: program,
      name: images[program],
      user: IMAGE_USER,
      work,
    });
    await node.importImage(archive);
  }
  // containerd holds the images now; the archives and their layouts are ~4 copies of each program.
  await rm(work, { recursive: true, force: true });
  return images;
}

async function pointActivatorAtAutoscaler(admin: RestClient): Promise<void> {
  const ns = `/namespaces/${KNATIVE_NAMESPACE}`;
  const svc = await admin.request<{ spec: { clusterIP: string } }>("GET", `/api/v1${ns}/services/autoscaler`);
  await admin.request(
    "PATCH",
    `/apis/apps/v1${ns}/deployments/activator`,
    autoscalerHostAlias(svc.spec.clusterIP),
    "application/strategic-merge-patch+json",
  );
}

interface DeploymentStatus {
  metadata: { generation?: number };
  spec: { replicas?: number };
  status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number };
}

/** Rolled out: the newest generation seen, every replica updated and available. */
export function deploymentRolledOut(d: DeploymentStatus): boolean {
  const want = d.spec.replicas ?? 1;
  const s = d.status ?? {};
  return (
    (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
    (s.updatedReplicas ?? 0) >= want &&
    (s.availableReplicas ?? 0) >= want
  );
}

async function waitForDeployments(admin: RestClient): Promise<void> {
  for (const name of SERVING_DEPLOYMENTS)
    await waitUntil(
      `Knative Serving's ${name} Deployment rolled out`,
      async () =>
        deploymentRolledOut(
          await admin.request<DeploymentStatus>(
            "GET",
            `/apis/apps/v1/namespaces/${KNATIVE_NAMESPACE}/deployments/${name}`,
          ),
        ),
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 1000 },
    );
}

/** A Service Knative's validation refuses (min-scale is not a number), for a dry-run create. */
export function invalidKnativeService(namespace: string, image: string): ManifestObject {
  return {
    apiVersion: "serving.knative.dev/v1",
    kind: "Service",
    metadata: { name: "admission-probe", namespace },
    spec: {
      template: {
        metadata: { annotations: { "autoscaling.knative.dev/min-scale": "not-a-number" } },
        spec: { containers: [{ image }] },
      },
    },
  };
}

/** Until Knative's own validating webhook answers: a dry-run create of an invalid Service is refused by it. */
export async function waitForKnativeAdmission(admin: RestClient, image: string): Promise<void> {
  const probe = invalidKnativeService(KNATIVE_NAMESPACE, image);
  await waitUntil(
    "Knative's admission webhook refusing an invalid Service",
    async () => {
      try {
        await admin.request("POST", `${KSVC_PATH}/${KNATIVE_NAMESPACE}/services?dryRun=All`, probe);
        return false;
      } catch (err) {
        if (err instanceof RestError && err.body.includes("validation.webhook.serving.knative.dev"))
          return true;
        throw err;
      }
    },
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: 1000 },
  );
}

export async function installKnativeServing(
  admin: RestClient,
  node: RealNode,
  build: KnativeServingBuild,
  work: string,
): Promise<KnativeServing> {
  const t0 = Date.now();
  const images = await importImages(node, build, work);
  await createManifestStream(admin, servingObjects(await readFile(build.coreFile, "utf8")));
  await pointActivatorAtAutoscaler(admin);
  await waitForDeployments(admin);
  await waitForKnativeAdmission(admin, images.helloworld);
  return { namespace: KNATIVE_NAMESPACE, images, readyMs: Date.now() - t0 };
}
