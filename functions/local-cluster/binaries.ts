// Where the control-plane binaries come from: controlplane/build.sh, which builds them once into a cache
// outside the checkout (keyed by its go.sum) and prints that directory; a warm run builds nothing. Or a
// directory given explicitly (SIMKUBE_FN_CONTROLPLANE_BIN). Without Go, or when the build fails, this throws
// at once with what is missing.

import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import type { ControlPlaneBinaries } from "./control-plane.js";

export const REQUIRED_BINARIES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
] as const;

export class MissingControlPlaneError extends Error {
  override readonly name = "MissingControlPlaneError";
}

export interface ResolveOptions {
  /** A directory that already holds the binaries (skips the build). */
  binDir?: string;
  /** Where to look for the project's controlplane/ folder: each directory and its parents. */
  searchFrom: readonly string[];
  /** Where the build's progress goes (a cold build takes minutes). Default: this process's stderr. */
  buildOutput?: "inherit" | "ignore";
}

/** The nearest directory (walking up) that holds controlplane/build.sh. */
export function findControlPlaneDir(searchFrom: readonly string[]): string | undefined {
  for (const start of searchFrom) {
    let dir = path.resolve(start);
    for (;;) {
      const candidate = path.join(dir, "controlplane");
      if (existsSync(path.join(candidate, "build.sh"))) return candidate;
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return undefined;
}

export function missingBinaries(binDir: string): string[] {
  return REQUIRED_BINARIES.filter((name) => !existsSync(path.join(binDir, name)));
}

export function hasGo(): boolean {
  return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

export interface BuildProgress {
  /** How often to say the build is still running. Default 15 s. */
  everyMs?: number;
  write?: (line: string) => void;
}

/**
 * Runs a build script (stdout: the folder it built into, last line). While it runs, a line every 15 s says
 * so: a build takes minutes, and one waiting on another process's build lock prints nothing of its own.
 */
export function runBuild(
  script: string,
  output: "inherit" | "ignore",
  progress: BuildProgress = {},
): Promise<string> {
  const write = progress.write ?? ((line: string) => process.stderr.write(line));
  const started = Date.now();
  const name = path.relative(process.cwd(), script) || script;
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script], { stdio: ["ignore", "pipe", output] });
    const timer =
      output === "inherit"
        ? setInterval(() => {
            const seconds = Math.round((Date.now() - started) / 1000);
            write(
              `${name} still running after ${seconds} s (building, or waiting for another process's build of the same inputs)\n`,
            );
          }, progress.everyMs ?? 15_000)
        : undefined;
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.once("error", (err) => {
      clearInterval(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearInterval(timer);
      const last = stdout.trim().split("\n").pop() ?? "";
      if (code === 0 && last) resolve(last);
      else reject(new MissingControlPlaneError(`${name} failed (exit ${code}); its output above says why`));
    });
  });
}

export async function resolveControlPlane(o: ResolveOptions): Promise<ControlPlaneBinaries> {
  const controlplane = findControlPlaneDir(o.searchFrom);
  if (!controlplane) {
    throw new MissingControlPlaneError(
      "controlplane/build.sh not found: run simkube-fn cluster from a checkout of the project (it builds the control plane from controlplane/)",
    );
  }
  const kwokStagesFile = path.join(controlplane, "kwok-stages.yaml");
  let binDir = o.binDir;
  if (!binDir) {
    if (!hasGo()) {
      throw new MissingControlPlaneError(
        "Go not found on PATH: the local cluster builds kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok from controlplane/ with Go >= 1.26 (or set SIMKUBE_FN_CONTROLPLANE_BIN to a directory holding them)",
      );
    }
    binDir = await runBuild(path.join(controlplane, "build.sh"), o.buildOutput ?? "inherit");
  }
  const missing = missingBinaries(binDir);
  if (missing.length > 0) throw new MissingControlPlaneError(`${binDir} lacks ${missing.join(", ")}`);
  return { binDir, kwokStagesFile };
}
