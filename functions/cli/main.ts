// simkube-fn: the command line. The only reader of argv and process.env; everything else gets plain values.
// args.ts turns argv into a Command; this file runs it and maps failures to exit codes (2: usage or
// configuration, 1: anything else), each one line on stderr (usage-error.ts words usage errors).

// `serve` is the command whose start matters (a function's cold start). Its modules are imported statically:
// the bundle then evaluates them up front, where anything reachable from an import() gets a lazy initialiser per
// module (the Kubernetes client has ~700), which measured ~13 ms slower. `replay` shares them, so it is static
// too. The load test, the manifest builders and hash-pod (and YAML) are imported when their command runs.

import { readFileSync } from "node:fs";
import path from "node:path";
import { createLogger, errorMessage, VERSION } from "../../shared/base/index.js";
import { ConfigError, loadConfig } from "../../shared/config/index.js";
import { createKubeApi } from "../../shared/kube/index.js";
import { drainAndClose } from "../runtime/http-server.js";
import { withPathSecretFile } from "../runtime/path-secret.js";
import { type RunningFunction, startFunction } from "../runtime/registry.js";
import { type Command, parseCommandLine, usage } from "./args.js";
import type { ManifestsRequest } from "./manifests/args.js";
import { runReplayCommand } from "./replay/command.js";
import { PREFIX, UsageError, usageErrorText } from "./usage-error.js";

function readInput(file: string): string {
  return readFileSync(file === "-" ? 0 : file, "utf8");
}

/** The namespace of the pod's service account when running in a pod (its token mount), else undefined. */
function serviceAccountNamespace(): string | undefined {
  try {
    return (
      readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "utf8").trim() || undefined
    );
  } catch {
    return undefined;
  }
}

async function serve(cmd: Extract<Command, { command: "serve" }>): Promise<number> {
  const { name } = cmd;
  const saNamespace = serviceAccountNamespace();
  const config = loadConfig(withPathSecretFile(process.env), {
    ...cmd.flags,
    ...(saNamespace !== undefined ? { serviceAccountNamespace: saNamespace } : {}),
  });
  const log = createLogger(config.logLevel, undefined, config.logFormat).child({ function: name });
  // reschedule-delete retries inside a 3 s deadline: shorter calls leave room for a second attempt.
  const kube = createKubeApi(name === "reschedule-delete" ? { timeoutMs: 2_000 } : {});
  const running = await startFunction(name, config, kube, log);
  if (cmd.check) return checkReadiness(running);

  // A stray rejection in background work (e.g. a clone still being created after its review was answered)
  // must not take the other in-flight reviews down with the process: log it and keep serving.
  process.on("unhandledRejection", (err) => log.error({ err }, "unhandled rejection"));

  // Knative sends SIGTERM after queue-proxy drained: answer everything in flight or queued, let the clones
  // still waiting for their deletion end (each within its own bound), then go at once.
  const stop = () => {
    log.info("shutting down");
    Promise.all([drainAndClose(running.server, 10_000), running.settle()]).then(([outcome, settled]) => {
      if (outcome === "timed-out") log.warn("connections still open after 10 s; exiting anyway");
      if (!settled) log.warn("clones still waiting for their deletion at the bound; exiting anyway");
      process.exit(0);
    });
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return -1; // keep running
}

/**
 * `serve --check`: started as usual, then one readiness check (api-readiness.ts). Not ready exits 1 with one
 * line naming what is missing.
 */
async function checkReadiness(running: RunningFunction): Promise<number> {
  // The verdict of the check the start began (current() waits for it): the answer /readyz would give now.
  const verdict = await running.readiness.current();
  running.server.close();
  if (verdict.ready) return 0;
  process.stderr.write(`${PREFIX}not ready: ${verdict.reason}\n`);
  return 1;
}

/** manifests/command.ts reads --ca-bundle's file and makes the path secret. */
async function manifests(request: ManifestsRequest): Promise<number> {
  const { runManifests } = await import("./manifests/command.js");
  return runManifests(request, (text) => process.stdout.write(text));
}

async function hashPod(file: string): Promise<number> {
  const { hashPodText } = await import("./hash-pod.js");
  process.stdout.write(`${hashPodText(readInput(file))}\n`);
  return 0;
}

async function run(cmd: Command): Promise<number> {
  switch (cmd.command) {
    case "serve":
      return serve(cmd);
    case "manifests":
      return manifests(cmd.request);
    case "replay":
      return runReplayCommand(cmd, process.env.TRACE_PATH, {
        searchFrom: [process.cwd(), ...(process.argv[1] ? [path.dirname(process.argv[1])] : [])],
        ...(process.env.SIMKUBE_FN_CONTROLPLANE_BIN?.trim()
          ? { binDir: process.env.SIMKUBE_FN_CONTROLPLANE_BIN.trim() }
          : {}),
      });
    case "hash-pod":
      return hashPod(cmd.file);
    case "cluster": {
      const { runClusterCommand } = await import("./cluster/command.js");
      const searchFrom = [process.cwd(), ...(process.argv[1] ? [path.dirname(process.argv[1])] : [])];
      const binDir = process.env.SIMKUBE_FN_CONTROLPLANE_BIN?.trim();
      return runClusterCommand(cmd.args, { searchFrom, ...(binDir ? { binDir } : {}) });
    }
    case "loadtest":
      return (await import("./loadtest/command.js")).runLoadtestCommand(cmd.args);
    case "trace":
      return (await import("./trace/command.js")).runTraceCommand(cmd.args);
    case "help":
      process.stdout.write(usage(cmd.topic));
      return 0;
    case "version":
      process.stdout.write(`simkube-fn ${VERSION}\n`);
      return 0;
  }
}

/** Bad configuration or options (exit 2, no usage). Imports knative/options only on this error path. */
async function asOptionsError(err: unknown): Promise<Error | undefined> {
  if (err instanceof ConfigError) return err;
  const { DeploymentOptionsError } = await import("../../knative/options.js");
  return err instanceof DeploymentOptionsError ? err : undefined;
}

async function exitCodeOf(err: unknown): Promise<number> {
  if (err instanceof UsageError) {
    process.stderr.write(usageErrorText(err));
    return 2;
  }
  const optionsError = await asOptionsError(err);
  process.stderr.write(`${PREFIX}${errorMessage(optionsError ?? err)}\n`);
  return optionsError ? 2 : 1;
}

async function main(argv: string[]): Promise<void> {
  try {
    const parsed = parseCommandLine(argv);
    for (const warning of parsed.warnings ?? []) process.stderr.write(warning);
    const code = await run(parsed);
    if (code >= 0) process.exitCode = code;
  } catch (err) {
    process.exitCode = await exitCodeOf(err);
  }
}

void main(process.argv.slice(2));
