// simkube-fn: the command line. The only reader of argv and process.env; everything else gets plain values.

// `serve` is the command whose start matters (a function's cold start). Its modules are imported statically:
// the bundle then evaluates them up front, where anything reachable from an import() gets a lazy initialiser per
// module (the Kubernetes client has ~700), which measured ~13 ms slower. `replay` shares them, so it is static
// too. The load test, the manifest builders and hash-pod (and YAML) are imported when their command runs.

import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../shared/config.js";
import { createKubeApi } from "../../shared/kube.js";
import { createLogger } from "../../shared/log.js";
import { FUNCTION_NAMES, type FunctionName, isFunctionName, startFunction } from "../runtime/registry.js";
import { runReplayCommand } from "./replay/command.js";

const USAGE = `Usage:
  simkube-fn serve <${FUNCTION_NAMES.join("|")}> [--port N] [--check]
      Serve one function over HTTP (POST / takes an AdmissionReview, GET /healthz, GET /stats).
      --check: start as usual (configuration, trace, listening), then stop with status 0.
      Env: SIM_NAME (required), TRACE_PATH, PORT (8080), LOG_LEVEL (info), DRIVER_USERS,
      SEQUENCE_STORE (cluster|memory), SEQUENCE_NAMESPACE or POD_NAMESPACE, KUBECONFIG.
  simkube-fn replay [--trace FILE] [--sim-name NAME] [--speed N]
      The main job without a cluster: replay a trace's bare pods through both functions against the
      embedded local API double (default trace: ../shared/data/simkube-traces/bare-pods.sktrace).
  simkube-fn manifests --sim-name NAME [--target knative|openfaas|openfaas-stack] [--namespace NS]
                       [--image IMG] [--webhook-url-base https://...] [--reschedule] [--trace-path URL]
                       [--min-scale N] [--webhook-mode url|service]
      Print the deployment (RBAC, Knative Services or OpenFaaS, MutatingWebhookConfiguration) as YAML.
  simkube-fn hash-pod <FILE|->
      Print a Pod's stable spec hash (JSON or YAML), as SimKube computes it.
  simkube-fn loadtest teardown --target URL [--reviews N] [--concurrency C]
      Send a teardown burst of realistic pod DELETE reviews to a running reschedule-delete and report
      throughput, p50/p95/p99 latency, errors, clones created and server RSS.
  simkube-fn cluster up [--sim-name NAME] [--reschedule] [--trace FILE] [--json]
      A real local control plane (etcd, kube-apiserver, controller-manager, scheduler, KWOK; built once from
      controlplane/ with Go) whose webhooks are both functions. Prints one JSON line when ready (kubeconfig,
      server, simName, virtualNamespacePrefix, functions) and runs until SIGINT/SIGTERM.
      Env: SIMKUBE_FN_CONTROLPLANE_BIN (a directory of prebuilt binaries; skips the build).
  simkube-fn help
`;

class UsageError extends Error {}

function readInput(file: string): string {
  return readFileSync(file === "-" ? 0 : file, "utf8");
}

async function serve(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { port: { type: "string" }, check: { type: "boolean" } },
    allowPositionals: true,
  });
  const name = positionals[0];
  if (!name || !isFunctionName(name) || positionals.length > 1) {
    throw new UsageError(`serve takes one function name: ${FUNCTION_NAMES.join(" or ")}`);
  }
  const config = loadConfig(process.env, values.port !== undefined ? { port: values.port } : {});
  const log = createLogger(config.logLevel).child({ function: name as FunctionName });
  // reschedule-delete retries inside a 3 s deadline: shorter calls leave room for a second attempt.
  const kube = createKubeApi(name === "reschedule-delete" ? { timeoutMs: 2_000 } : {});
  const running = await startFunction(name, config, kube, log);
  if (values.check) {
    running.server.close();
    return 0;
  }

  // A stray rejection in background work (e.g. a clone still being created after its review was answered)
  // must not take the other in-flight reviews down with the process: log it and keep serving.
  process.on("unhandledRejection", (err) => log.error({ err }, "unhandled rejection"));

  // Knative sends SIGTERM after queue-proxy drained; finish what is in flight, then go.
  const stop = () => {
    log.info("shutting down");
    running.server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return -1; // keep running
}

async function manifests(args: string[]): Promise<number> {
  const [{ DEPLOYMENT_TARGETS }, { renderDeployment }] = await Promise.all([
    import("../../knative/deployment-options.js"),
    import("../../knative/manifests.js"),
  ]);
  const { values } = parseArgs({
    args,
    options: {
      target: { type: "string" },
      "sim-name": { type: "string" },
      namespace: { type: "string" },
      image: { type: "string" },
      "webhook-url-base": { type: "string" },
      "webhook-mode": { type: "string" },
      "trace-path": { type: "string" },
      "min-scale": { type: "string" },
      reschedule: { type: "boolean" },
    },
  });
  const target = values.target ?? "knative";
  if (!(DEPLOYMENT_TARGETS as readonly string[]).includes(target)) {
    throw new UsageError(`--target must be one of ${DEPLOYMENT_TARGETS.join(", ")}`);
  }
  const mode = values["webhook-mode"];
  if (mode !== undefined && mode !== "url" && mode !== "service")
    throw new UsageError("--webhook-mode must be url or service");
  const minScale = values["min-scale"] === undefined ? undefined : Number(values["min-scale"]);
  if (minScale !== undefined && !(Number.isInteger(minScale) && minScale >= 0)) {
    throw new UsageError("--min-scale must be a whole number >= 0");
  }
  process.stdout.write(
    renderDeployment({
      target: target as (typeof DEPLOYMENT_TARGETS)[number],
      simName: values["sim-name"] ?? "",
      rescheduleInterruptedBarePods: values.reschedule ?? false,
      ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
      ...(values.image !== undefined ? { image: values.image } : {}),
      ...(values["webhook-url-base"] !== undefined ? { webhookUrlBase: values["webhook-url-base"] } : {}),
      ...(mode !== undefined ? { webhookMode: mode } : {}),
      ...(values["trace-path"] !== undefined ? { tracePath: values["trace-path"] } : {}),
      ...(minScale !== undefined ? { minScale } : {}),
    }),
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "manifests":
      return manifests(rest);
    case "replay":
      return runReplayCommand(rest);
    case "hash-pod": {
      if (rest.length !== 1) throw new UsageError("hash-pod takes one argument: a file, or - for stdin");
      const { hashPodText } = await import("./hash-pod.js");
      process.stdout.write(`${hashPodText(readInput(rest[0] as string))}\n`);
      return 0;
    }
    case "cluster": {
      const { runClusterCommand, ClusterUsageError } = await import("./cluster/command.js");
      const searchFrom = [process.cwd(), ...(process.argv[1] ? [path.dirname(process.argv[1])] : [])];
      const binDir = process.env.SIMKUBE_FN_CONTROLPLANE_BIN?.trim();
      return runClusterCommand(rest, { searchFrom, ...(binDir ? { binDir } : {}) }).catch((err: unknown) => {
        throw err instanceof ClusterUsageError ? new UsageError(err.message) : err;
      });
    }
    case "loadtest":
      return (await import("./loadtest/command.js")).runLoadtestCommand(rest);
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      throw new UsageError(command ? `unknown command "${command}"` : "no command given");
  }
}

/** Bad configuration or options (exit 2, no usage). Imports deployment-options only on this error path. */
async function asOptionsError(err: unknown): Promise<Error | undefined> {
  if (err instanceof ConfigError) return err;
  const { DeploymentOptionsError } = await import("../../knative/deployment-options.js");
  return err instanceof DeploymentOptionsError ? err : undefined;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  async (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`simkube-fn: ${err.message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    const optionsError = await asOptionsError(err);
    if (optionsError) {
      process.stderr.write(`simkube-fn: ${optionsError.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`simkube-fn: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
