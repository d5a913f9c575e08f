// `simkube-fn manifests [webhook]`: parse the flags, read --ca-bundle's file, require a path secret (a render
// never makes one: the same flags print the same YAML), and print the YAML. The builders (knative/) do the rest and name any bad option.

import { readFileSync } from "node:fs";
import { ownerRulesForTrackedKinds } from "../../../knative/owner-rules.js";
import { requirePathSecret } from "../../../knative/path-secret-options.js";
import { loadTraceForLookups } from "../../../shared/trace/index.js";
import { MANIFESTS_USAGE, type ManifestsRequest, ManifestsUsageError, parseManifestsArgs } from "./args.js";

/** A PEM file's certificates as the caBundle field wants them: base64 of the PEM text. */
export function caBundleFromPem(file: string, text: string): string {
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new ManifestsUsageError(
      `--ca-bundle ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  }
  return Buffer.from(text.trim().concat("\n"), "utf8").toString("base64");
}

function readCaBundle(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ManifestsUsageError(`--ca-bundle: cannot read ${file}: ${(err as Error).message}`);
  }
  return caBundleFromPem(file, text);
}

/** Get rules for the owner kinds the trace at `location` tracks (its config, read with the trace's limits). */
async function ownerRulesFromTrace(location: string) {
  try {
    const trace = await loadTraceForLookups(location);
    return ownerRulesForTrackedKinds(Object.keys(trace.config.trackedObjects));
  } catch (err) {
    throw new ManifestsUsageError(`--owner-kinds-from-trace: ${(err as Error).message}`);
  }
}

/** Parses and runs; returns the exit status. Usage errors throw ManifestsUsageError (exit 2 with usage). */
export async function runManifestsCommand(args: string[], out: (text: string) => void): Promise<number> {
  const command = parseManifestsArgs(args);
  if (command.kind === "help") {
    out(MANIFESTS_USAGE);
    return 0;
  }
  return runManifests(command, out);
}

/** Renders a parsed request to `out`. */
export async function runManifests(command: ManifestsRequest, out: (text: string) => void): Promise<number> {
  const { renderDeployment, renderSimulationWebhook } = await import("../../../knative/manifests.js");
  const options = { ...command.options };
  if (command.caBundleFile !== undefined) options.caBundle = readCaBundle(command.caBundleFile);
  if (command.ownerKindsTrace !== undefined) {
    options.extraRules = [
      ...(options.extraRules ?? []),
      ...(await ownerRulesFromTrace(command.ownerKindsTrace)),
    ];
  }
  if (command.kind === "webhook") {
    // The per-simulation webhook must call the deployed functions at their path: the same secret.
    if (options.pathSecret === undefined) {
      throw new ManifestsUsageError(
        "manifests webhook needs the deployment's --path-secret: kubectl get secret -n NAMESPACE simkube-fn-webhook-path -o jsonpath='{.data.path-secret}' | base64 -d",
      );
    }
    out(renderSimulationWebhook(options));
    return 0;
  }
  // Given, or an existing Secret's (--path-secret-from): re-rendering never rotates it. Asked for after the
  // render, so a wrong or missing option (say, no --platform) is named first.
  const yaml = renderDeployment(options);
  requirePathSecret(options);
  out(yaml);
  return 0;
}

export { MANIFESTS_USAGE, ManifestsUsageError };
