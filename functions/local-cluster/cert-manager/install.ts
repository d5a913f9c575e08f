// cert-manager on the real node (`cluster up --cert-manager`, on by default with --knative): each program of
// controlplane/cert-manager/build.sh packed into a one-layer image and imported into the node's containerd,
// then its objects created (objects.ts) and, when asked, waited for (ready.ts). The image archives are removed
// once containerd holds them.

import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { createManifestStream } from "../knative/apply-yaml.js";
import { writeBinaryImage } from "../real-node/pause-image.js";
import type { RealNode } from "../real-node/real-node.js";
import type { RestClient } from "../rest.js";
import { CERT_MANAGER_PROGRAMS, type CertManagerBuild } from "./build.js";
import { CERT_MANAGER_NAMESPACE, certManagerImage, certManagerObjects } from "./objects.js";
import { waitForCertManager } from "./ready.js";

/** A numeric non-root user (the Deployments set runAsNonRoot, as cert-manager's chart does). */
const IMAGE_USER = "65532";

export interface CertManager {
  readonly namespace: string;
  /** Milliseconds from the first image import until a self-signed Issuer had issued a Certificate. */
  readonly readyMs: number;
}

/** Images imported and objects created; nothing waited for (see waitForCertManager). */
export async function createCertManager(
  admin: RestClient,
  node: RealNode,
  build: CertManagerBuild,
  work: string,
): Promise<void> {
  for (const program of CERT_MANAGER_PROGRAMS) {
    const binary = path.join(build.binDir, program);
    const file = `cert-manager-${program}`;
    const name = certManagerImage(program);
    await node.importImage(await writeBinaryImage({ binary, file, name, user: IMAGE_USER, work }));
  }
  await rm(work, { recursive: true, force: true });
  await createManifestStream(admin, certManagerObjects(await readFile(build.chartFile, "utf8")));
}

export async function installCertManager(
  admin: RestClient,
  node: RealNode,
  build: CertManagerBuild,
  work: string,
): Promise<CertManager> {
  const t0 = Date.now();
  await createCertManager(admin, node, build, work);
  await waitForCertManager(admin);
  return { namespace: CERT_MANAGER_NAMESPACE, readyMs: Date.now() - t0 };
}
