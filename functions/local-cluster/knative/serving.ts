// Knative Serving on the real node (`cluster up --knative`): each program of build-serving.sh packed into a
// one-layer image under the name Knative's YAML gives it and imported into the node's containerd, then
// serving-core.yaml created as it is, its namespace annotated so its pods go to the (tainted) real node
// (placement.ts). Beside it, what a Knative install expects of a cluster and this one lacks: cluster DNS
// (CoreDNS, cluster-dns.ts) and an ingress (Traefik's Knative provider, traefik.ts), both built by
// build-node-tools.sh. Ready when every Deployment is rolled out and Knative's own admission webhook refuses an
// invalid Service. The image archives (~4 copies of each program) are removed once containerd holds them.

import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { writeBinaryImage } from "../real-node/pause-image.js";
import { placedOnRealNode } from "../real-node/placement.js";
import type { RealNode } from "../real-node/real-node.js";
import type { RestClient } from "../rest.js";
import { createManifestStream, type ManifestObject, parseManifestStream } from "./apply-yaml.js";
import { clusterDnsObjects, DNS_NAMESPACE } from "./cluster-dns.js";
import {
  KNATIVE_NAMESPACE,
  type KnativeServingBuild,
  readServingImages,
  SERVING_DEPLOYMENTS,
  SERVING_PROGRAMS,
  type ServingProgram,
} from "./serving-build.js";
import { waitForDeployments, waitForKnativeAdmission } from "./serving-ready.js";
import { selectTraefikIngress, TRAEFIK_NAMESPACE, traefikObjects } from "./traefik.js";

/** ko's default user: Knative's Deployments run as non-root, which needs a numeric user in the image. */
const IMAGE_USER = "65532";
/** The tags pinned by controlplane/knative/{traefik,coredns}/go.mod. */
export const TRAEFIK_IMAGE = "dev.local/traefik:v3.6.12";
export const COREDNS_IMAGE = "dev.local/coredns:v1.14.7";

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

async function importImage(node: RealNode, binary: string, name: string, work: string): Promise<void> {
  const file = path.basename(binary);
  await node.importImage(await writeBinaryImage({ binary, file, name, user: IMAGE_USER, work }));
}

async function importServingImages(node: RealNode, build: KnativeServingBuild, work: string) {
  const images = await readServingImages(build);
  for (const program of SERVING_PROGRAMS)
    await importImage(node, path.join(build.binDir, program), images[program], work);
  return images;
}

const EVERY_DEPLOYMENT = [
  { namespace: DNS_NAMESPACE, name: "coredns" },
  ...SERVING_DEPLOYMENTS.map((name) => ({ namespace: KNATIVE_NAMESPACE, name })),
  { namespace: TRAEFIK_NAMESPACE, name: "traefik" },
];

export async function installKnativeServing(
  admin: RestClient,
  node: RealNode,
  build: KnativeServingBuild,
  work: string,
): Promise<KnativeServing> {
  const t0 = Date.now();
  const tools = build.toolsBinDir;
  await importImage(node, path.join(tools, "coredns"), COREDNS_IMAGE, work);
  await createManifestStream(admin, clusterDnsObjects(COREDNS_IMAGE));
  const images = await importServingImages(node, build, work);
  await createManifestStream(admin, servingObjects(await readFile(build.coreFile, "utf8")));
  await importImage(node, path.join(tools, "traefik"), TRAEFIK_IMAGE, work);
  const traefikCrds = parseManifestStream(await readFile(build.traefikCrdsFile, "utf8"));
  await createManifestStream(admin, [...traefikCrds, ...traefikObjects(TRAEFIK_IMAGE)]);
  await selectTraefikIngress(admin);
  await rm(work, { recursive: true, force: true });
  await waitForDeployments(admin, EVERY_DEPLOYMENT);
  await waitForKnativeAdmission(admin, images.helloworld);
  return { namespace: KNATIVE_NAMESPACE, images, readyMs: Date.now() - t0 };
}
