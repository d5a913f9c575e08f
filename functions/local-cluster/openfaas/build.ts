// Where OpenFaaS CE comes from: controlplane/openfaas/build.sh builds the gateway, faas-netes, of-watchdog and
// faas-cli once into a cache (from the upstream source archives, which the script finds) and unpacks the
// node22 function template beside them.

import { existsSync } from "node:fs";
import path from "node:path";
import { findControlPlaneDir, hasGo, MissingControlPlaneError, runBuild } from "../binaries.js";

export const OPENFAAS_PROGRAMS = ["gateway", "faas-netes", "fwatchdog", "faas-cli"] as const;
export type OpenfaasProgram = (typeof OPENFAAS_PROGRAMS)[number];

export interface OpenfaasBuild {
  binDir: string;
  /** The node22 template (index.js, package.json, Dockerfile) as the templates repository has it. */
  templateDir: string;
}

/** Builds (once; a no-op when cached) and returns OpenFaaS CE's programs. */
export async function resolveOpenfaas(
  searchFrom: readonly string[],
  output: "inherit" | "ignore" = "inherit",
): Promise<OpenfaasBuild> {
  const controlplane = findControlPlaneDir(searchFrom);
  const script = controlplane && path.join(controlplane, "openfaas", "build.sh");
  if (!script || !existsSync(script))
    throw new MissingControlPlaneError(
      "controlplane/openfaas/build.sh not found: run from a checkout of the project",
    );
  if (!hasGo())
    throw new MissingControlPlaneError("Go not found on PATH: OpenFaaS is built from its source archives");
  const binDir = await runBuild(script, output);
  const missing = OPENFAAS_PROGRAMS.filter((p) => !existsSync(path.join(binDir, p)));
  if (missing.length > 0) throw new MissingControlPlaneError(`${binDir} lacks ${missing.join(", ")}`);
  return { binDir, templateDir: path.join(path.dirname(binDir), "template", "node22") };
}
