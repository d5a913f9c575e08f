// The clusters the platform benches start on the real node: for Knative, the control plane, Knative Serving and
// cert-manager (which issues the certificates the rendering trusts) and the project's image; for OpenFaaS, the
// control plane, OpenFaaS CE and the two function images.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveControlPlane } from "../../functions/local-cluster/binaries.js";
import { resolveCertManager } from "../../functions/local-cluster/cert-manager/build.js";
import { startLocalCluster } from "../../functions/local-cluster/cluster.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveKnativeServing } from "../../functions/local-cluster/knative/serving-build.js";
import { resolveOpenfaas } from "../../functions/local-cluster/openfaas/build.js";
import { buildImage } from "../support/cluster/function-pods.js";
import { buildOpenfaasImages } from "../support/cluster/openfaas-functions.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** Builds (or finds) every piece, then starts the cluster; `options` adds to or overrides the defaults. */
export async function startKnativeBenchCluster(
  options: Partial<Parameters<typeof startLocalCluster>[0]> = {},
): Promise<{ cluster: LocalCluster; archive: string }> {
  const searchFrom = [process.cwd(), repoRoot];
  const binaries = await resolveControlPlane({ searchFrom, buildOutput: "inherit" });
  const knative = await resolveKnativeServing(searchFrom, "inherit");
  const certManager = await resolveCertManager(searchFrom, "inherit");
  const archive = await buildImage(repoRoot);
  const cluster = await startLocalCluster({
    binaries,
    realNode: true,
    reschedule: true,
    knative,
    certManager,
    logLevel: "warn",
    ...options,
  });
  return { cluster, archive };
}

/** The same for OpenFaaS: the control plane, OpenFaaS CE and the function images, then the cluster. */
export async function startOpenfaasBenchCluster(): Promise<{ cluster: LocalCluster; images: string }> {
  const searchFrom = [process.cwd(), repoRoot];
  const binaries = await resolveControlPlane({ searchFrom, buildOutput: "inherit" });
  const openfaas = await resolveOpenfaas(searchFrom, "inherit");
  const images = await buildOpenfaasImages(repoRoot);
  const cluster = await startLocalCluster({
    binaries,
    realNode: true,
    reschedule: true,
    openfaas,
    logLevel: "warn",
  });
  return { cluster, images };
}
