// Knative Serving's own admission logic as a test oracle: controlplane/knative/build.sh builds
// knative-validate from knative.dev/serving (once, cached), and validateWithKnative pipes YAML through it
// and reads back one verdict per document. Without Go the build exits 127: a loud skip, except under
// CI=true, where it is an error like any other build failure.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** One line of knative-validate's output. */
export interface KnativeVerdict {
  doc: number;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  result: "accept" | "reject" | "ignored";
  error?: string;
  warnings?: string[];
  unknownFields?: string;
}

/** The built binary, or why it cannot be built here (no Go). CI=true never accepts a reason. */
export function knativeValidateBinary(): { binary: string } | { skip: string } {
  const run = spawnSync("bash", [path.join(root, "controlplane/knative/build.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const binDir = run.stdout.trim().split("\n").at(-1);
  if (run.status === 0 && binDir) return { binary: path.join(binDir, "knative-validate") };
  const why = `controlplane/knative/build.sh failed (exit ${run.status}): Go is needed to build knative-validate`;
  if (run.status === 127 && process.env.CI !== "true") return { skip: why };
  throw new Error(why);
}

/** Knative's verdict on every document of `yaml`, in order. Throws when the tool itself fails (exit 2). */
export function validateWithKnative(binary: string, yaml: string): KnativeVerdict[] {
  const run = spawnSync(binary, [], { input: yaml, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0 && run.status !== 1) {
    throw new Error(`knative-validate exited ${run.status}: ${run.stderr || run.error?.message}`);
  }
  return run.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KnativeVerdict);
}
