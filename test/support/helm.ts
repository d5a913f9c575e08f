// helm (helm.sh/helm/v4 or v3, built from the Go module by scripts/build-helm.sh, once, cached) for the chart's
// tests, and the two renderings they compare: `helm template` of charts/simkube-fn and `simkube-fn manifests`
// for the same settings, both as objects keyed by kind, namespace and name. Without Go the build exits 127:
// a loud skip, except under CI=true, where it is an error like any other build failure.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { runManifests } from "../../functions/cli/manifests/command.js";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const CHART = path.join(ROOT, "charts/simkube-fn");

/** The built binary of Helm `major`, or why it cannot be built here (no Go). CI=true never accepts a reason. */
export function helmBinary(major: 3 | 4 = 4): { binary: string } | { skip: string } {
  const run = spawnSync("bash", [path.join(ROOT, "scripts/build-helm.sh"), String(major)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const binary = run.stdout.trim().split("\n").at(-1);
  if (run.status === 0 && binary) return { binary };
  const why = `scripts/build-helm.sh ${major} failed (exit ${run.status}): Go is needed to build helm`;
  if (run.status === 127 && process.env.CI !== "true") return { skip: why };
  throw new Error(why);
}

export interface KubeDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export interface HelmRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs helm with `args`; values (any JSON) go in a temporary values file. */
export function runHelm(binary: string, args: string[], values?: object, env?: NodeJS.ProcessEnv): HelmRun {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-helm-"));
  try {
    const valuesArgs: string[] = [];
    if (values !== undefined) {
      const file = path.join(dir, "values.json");
      writeFileSync(file, JSON.stringify(values));
      valuesArgs.push("--values", file);
    }
    const run = spawnSync(binary, [...args, ...valuesArgs], {
      encoding: "utf8",
      timeout: 60_000,
      // Helm's own state (repositories, cache, config) in the temporary folder, never the user's.
      env: {
        ...process.env,
        HELM_CACHE_HOME: path.join(dir, "cache"),
        HELM_CONFIG_HOME: path.join(dir, "config"),
        HELM_DATA_HOME: path.join(dir, "data"),
        ...env,
      },
    });
    return { status: run.status, stdout: run.stdout ?? "", stderr: run.stderr || run.error?.message || "" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function parseDocs(yaml: string): KubeDoc[] {
  return parseAllDocuments(yaml)
    .map((d) => d.toJS() as KubeDoc | null)
    .filter((d): d is KubeDoc => d !== null);
}

/** Labels Helm's convention adds to every object's own metadata; the builders have no release to name. */
export const HELM_ONLY_LABELS = ["app.kubernetes.io/managed-by", "helm.sh/chart"];

export function withoutHelmLabels(doc: KubeDoc): KubeDoc {
  const labels = { ...doc.metadata.labels };
  for (const key of HELM_ONLY_LABELS) delete labels[key];
  return { ...doc, metadata: { ...doc.metadata, labels } };
}

export function objectKey(doc: KubeDoc): string {
  return `${doc.apiVersion} ${doc.kind} ${doc.metadata.namespace ?? "-"}/${doc.metadata.name}`;
}

export function byKey(docs: readonly KubeDoc[]): Map<string, KubeDoc> {
  return new Map(docs.map((d) => [objectKey(d), d]));
}

/** `simkube-fn manifests FLAGS`, in process, as objects. */
export async function renderManifests(flags: string[]): Promise<KubeDoc[]> {
  const command = parseManifestsArgs(flags);
  if (command.kind === "help") throw new Error("help requested");
  let text = "";
  await runManifests(command, (t) => {
    text += t;
  });
  return parseDocs(text);
}
