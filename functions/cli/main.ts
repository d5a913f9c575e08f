// simkube-fn: the command line. The only reader of argv and process.env; everything else gets plain values.

// `serve` is the command whose start matters (a function's cold start). Its modules are imported statically:
// the bundle then evaluates them up front, where anything reachable from an import() gets a lazy initialiser per
// module (the Kubernetes client has ~700), which measured ~13 ms slower. `replay` shares them, so it is static
// too. The load test, the manifest builders and hash-pod (and YAML) are imported when their command runs.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../shared/config.js";
import { createKubeApi } from "../../shared/kube.js";
import { createLogger } from "../../shared/log.js";
import { drainAndClose } from "../runtime/http-server.js";
import { withPathSecretFile } from "../runtime/path-secret.js";
import { FUNCTION_NAMES, type FunctionName, isFunctionName, startFunction } from "../runtime/registry.js";
import { runReplayCommand } from "./replay/command.js";

const USAGE = `Usage:
  simkube-fn serve <${FUNCTION_NAMES.join("|")}> [--port N] [--tls-cert FILE --tls-key FILE] [--check]
      Serve one function over HTTP (POST / takes an AdmissionReview, GET /healthz, GET /stats).
      --tls-cert/--tls-key: serve https with this PEM certificate and key.
      --check: start as usual (configuration, trace, listening), then stop with status 0.
      Env: SIM_NAME (required), TRACE_PATH, PORT (8080), LOG_LEVEL (info), DRIVER_USERS,
      SEQUENCE_STORE (cluster|memory), SEQUENCE_NAMESPACE or POD_NAMESPACE, KUBECONFIG,
      WEBHOOK_PATH_SECRET or WEBHOOK_PATH_SECRET_FILE (reviews only at POST /<secret>), TLS_CERT_FILE, TLS_KEY_FILE,
      CLIENT_CA_FILE (https only: reviews only from callers with a certificate this CA signed).
  simkube-fn replay [--trace FILE] [--sim-name NAME] [--speed N] [--json]
      The main job without a cluster: replay a trace's bare pods through both functions against the
      embedded local API double (default: the example scenario examples/scenario.yaml, built in memory;
      TRACE_PATH also names a trace). --json: the last line is one JSON object of counts.
  simkube-fn trace build SCENARIO -o FILE.sktrace
      Write a SimKube trace (format 2) from a scenario file (YAML or JSON; see examples/scenario.yaml).
  simkube-fn trace inspect FILE [--json]
      Version, time span, tracked kinds, index, owners with lifecycles. --json: one JSON object.
  simkube-fn trace lookup FILE --owner KIND/NS/NAME [--hash H] [--seq N]
      The lifecycle mutate-create would give a pod of that owner, and why.
  simkube-fn manifests --sim-name NAME --platform kind|k3s|managed|openfaas [...]
  simkube-fn manifests webhook --sim-name NAME --path-secret S [...]
      Print the deployment (or the per-simulation webhook stock SimKube adopts) as YAML.
      Every option: simkube-fn manifests --help.
  simkube-fn hash-pod <FILE|->
      Print a Pod's stable spec hash (JSON or YAML), as SimKube computes it.
  simkube-fn loadtest teardown --target URL [--reviews N] [--concurrency C]
      Send a teardown burst of realistic pod DELETE reviews to a running reschedule-delete and report
      throughput, p50/p95/p99 latency, errors, clones created and server RSS.
  simkube-fn help
`;

class UsageError extends Error {}

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

async function serve(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      check: { type: "boolean" },
    },
    allowPositionals: true,
  });
  const name = positionals[0];
  if (!name || !isFunctionName(name) || positionals.length > 1) {
    throw new UsageError(`serve takes one function name: ${FUNCTION_NAMES.join(" or ")}`);
  }
  const saNamespace = serviceAccountNamespace();
  const config = loadConfig(withPathSecretFile(process.env), {
    ...(values.port !== undefined ? { port: values.port } : {}),
    ...(values["tls-cert"] !== undefined ? { tlsCert: values["tls-cert"] } : {}),
    ...(values["tls-key"] !== undefined ? { tlsKey: values["tls-key"] } : {}),
    ...(saNamespace !== undefined ? { serviceAccountNamespace: saNamespace } : {}),
  });
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

  // Knative sends SIGTERM after queue-proxy drained: answer everything in flight or queued, then go at once.
  const stop = () => {
    log.info("shutting down");
    drainAndClose(running.server, 10_000).then((outcome) => {
      if (outcome === "timed-out") log.warn("connections still open after 10 s; exiting anyway");
      process.exit(0);
    });
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return -1; // keep running
}

/** Its own parser and usage (manifests/args.ts); a usage error there shows the manifests usage. */
async function manifests(args: string[]): Promise<number> {
  const { runManifestsCommand, ManifestsUsageError, MANIFESTS_USAGE } = await import(
    "./manifests/command.js"
  );
  try {
    return await runManifestsCommand(args, (text) => process.stdout.write(text));
  } catch (err) {
    if (!(err instanceof ManifestsUsageError)) throw err;
    process.stderr.write(`simkube-fn: ${err.message}\n\n${MANIFESTS_USAGE}`);
    return 2;
  }
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
    case "loadtest":
      return (await import("./loadtest/command.js")).runLoadtestCommand(rest);
    case "trace":
      return (await import("./trace/command.js")).runTraceCommand(rest);
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
