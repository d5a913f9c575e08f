// Where cert-manager comes from: controlplane/cert-manager/build.sh builds its controller, webhook and
// cainjector once into a cache (the Go module proxy serves cert-manager's root module; its three cmd/* modules
// and Venafi's vcert come from upstream source archives) and renders cert-manager's own Helm chart from that
// root module beside them, cert-manager.yaml, where its CRDs, RBAC and webhook configurations are read from.

import { existsSync } from "node:fs";
import path from "node:path";
import { findControlPlaneDir, hasGo, MissingControlPlaneError, runBuild } from "../binaries.js";

/** The programs build.sh builds, each made into the image of the same name. */
export const CERT_MANAGER_PROGRAMS = ["controller", "webhook", "cainjector"] as const;
export type CertManagerProgram = (typeof CERT_MANAGER_PROGRAMS)[number];
/** The version controlplane/cert-manager/build.sh builds (its images' tag). */
export const CERT_MANAGER_VERSION = "v1.21.1";

export interface CertManagerBuild {
  binDir: string;
  /** cert-manager's chart rendered by helm (release cert-manager, namespace cert-manager, CRDs on). */
  chartFile: string;
}

/** Builds (once; a no-op when cached) and returns cert-manager's binaries and its rendered chart. */
export async function resolveCertManager(
  searchFrom: readonly string[],
  output: "inherit" | "ignore" = "inherit",
): Promise<CertManagerBuild> {
  const controlplane = findControlPlaneDir(searchFrom);
  const script = controlplane && path.join(controlplane, "cert-manager", "build.sh");
  if (!script || !existsSync(script))
    throw new MissingControlPlaneError(
      "controlplane/cert-manager/build.sh not found: run from a checkout of the project",
    );
  if (!hasGo())
    throw new MissingControlPlaneError(
      "Go not found on PATH: cert-manager is built from controlplane/cert-manager/",
    );
  const binDir = await runBuild(script, output);
  const build = { binDir, chartFile: path.join(path.dirname(binDir), "cert-manager.yaml") };
  const missing = [
    ...CERT_MANAGER_PROGRAMS.filter((p) => !existsSync(path.join(binDir, p))),
    ...(existsSync(build.chartFile) ? [] : ["cert-manager.yaml"]),
  ];
  if (missing.length > 0)
    throw new MissingControlPlaneError(`${path.dirname(binDir)} lacks ${missing.join(", ")}`);
  return build;
}
