// Where Knative Serving comes from: controlplane/knative/build-serving.sh builds its five programs (and
// Knative's own helloworld test program) once into a cache and writes its release YAML with every ko://
// reference resolved to a dev.local image name; the names are read back from that YAML here.
// build-node-tools.sh builds its ingress (Traefik) and the cluster DNS (CoreDNS) the same way.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { findControlPlaneDir, hasGo, MissingControlPlaneError, runBuild } from "../binaries.js";

/** The programs build-serving.sh builds, each made into the image of the same name. */
export const SERVING_PROGRAMS = [
  "controller",
  "webhook",
  "activator",
  "autoscaler",
  "queue",
  "helloworld",
] as const;
export type ServingProgram = (typeof SERVING_PROGRAMS)[number];

/** The Deployments of serving-core.yaml that must be Available before Knative Serving works. */
export const SERVING_DEPLOYMENTS = ["controller", "webhook", "activator", "autoscaler"] as const;
export const KNATIVE_NAMESPACE = "knative-serving";

export interface KnativeServingBuild {
  binDir: string;
  /** build-node-tools.sh's bin directory: traefik (Knative's ingress here) and coredns (cluster DNS). */
  toolsBinDir: string;
  /** serving-crds.yaml and serving-core.yaml, images resolved. */
  crdsFile: string;
  coreFile: string;
  /** Traefik's own CRDs (IngressRoute, Middleware, ...), from the Traefik module build-node-tools.sh built. */
  traefikCrdsFile: string;
}

const TRAEFIK_MODULE = "github.com/traefik/traefik/v3";
/** Where Traefik's module keeps the CRD definitions its docs publish. */
const TRAEFIK_CRDS = "docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml";

/**
 * Traefik's CRD file, from the module build-node-tools.sh already downloaded: `go mod download -json` in
 * controlplane/knative/traefik names its directory in the module cache at the version that go.mod pins.
 */
export function traefikCrdsFile(knativeDir: string): string {
  const run = spawnSync("go", ["mod", "download", "-json", TRAEFIK_MODULE], {
    cwd: path.join(knativeDir, "traefik"),
    encoding: "utf8",
  });
  const dir = run.status === 0 ? (JSON.parse(run.stdout) as { Dir?: string }).Dir : undefined;
  const file = dir && path.join(dir, TRAEFIK_CRDS);
  if (!file || !existsSync(file))
    throw new MissingControlPlaneError(`Traefik's CRDs not found in its module (${run.stderr.trim()})`);
  return file;
}

/**
 * Each program's image name, from the resolved YAML: `<prefix><program>:<tag>` as the controller's image
 * reads (helloworld, which Knative's YAML never names, gets the same prefix and tag).
 */
export function servingImages(coreYaml: string): Record<ServingProgram, string> {
  const found = /image: (\S+?)controller:(\S+)/.exec(coreYaml);
  if (!found) throw new Error("serving-core.yaml names no controller image");
  const [, prefix, tag] = found;
  const images = {} as Record<ServingProgram, string>;
  for (const program of SERVING_PROGRAMS) images[program] = `${prefix}${program}:${tag}`;
  const queue = /queue-sidecar-image: (\S+)/.exec(coreYaml)?.[1];
  if (queue !== images.queue)
    throw new Error(`config-deployment's queue-sidecar-image ${queue} is not ${images.queue}`);
  return images;
}

export async function readServingImages(build: KnativeServingBuild): Promise<Record<ServingProgram, string>> {
  return servingImages(await readFile(build.coreFile, "utf8"));
}

/** Builds (once; a no-op when cached) and returns Knative Serving's binaries and YAML. */
export async function resolveKnativeServing(
  searchFrom: readonly string[],
  output: "inherit" | "ignore" = "inherit",
): Promise<KnativeServingBuild> {
  const controlplane = findControlPlaneDir(searchFrom);
  const script = controlplane && path.join(controlplane, "knative", "build-serving.sh");
  if (!script || !existsSync(script))
    throw new MissingControlPlaneError(
      "controlplane/knative/build-serving.sh not found: run from a checkout of the project",
    );
  if (!hasGo())
    throw new MissingControlPlaneError(
      "Go not found on PATH: Knative Serving is built from controlplane/knative/",
    );
  const binDir = await runBuild(script, output);
  const tools = path.join(path.dirname(script), "build-node-tools.sh");
  const toolsBinDir = await runBuild(tools, output);
  const root = path.dirname(binDir);
  const build = {
    binDir,
    toolsBinDir,
    crdsFile: path.join(root, "serving-crds.yaml"),
    coreFile: path.join(root, "serving-core.yaml"),
    traefikCrdsFile: traefikCrdsFile(path.dirname(script)),
  };
  const missing = SERVING_PROGRAMS.filter((p) => !existsSync(path.join(binDir, p)));
  if (missing.length > 0) throw new MissingControlPlaneError(`${binDir} lacks ${missing.join(", ")}`);
  return build;
}
