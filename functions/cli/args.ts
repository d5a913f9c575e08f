// The command line, parsed: argv in, a Command out, nothing read or run. main.ts wires each Command to the
// code that runs it. Bad arguments throw a UsageError naming the command, so its usage can be shown.

import { parseArgs } from "node:util";
import { FUNCTION_NAMES, type FunctionName, isFunctionName } from "../../shared/base/index.js";
import type { ConfigFlags } from "../../shared/config/index.js";
import {
  MANIFESTS_COMMAND_USAGE,
  type ManifestsRequest,
  ManifestsUsageError,
  parseManifestsArgs,
} from "./manifests/args.js";
import { argumentErrorMessage } from "./parse-error.js";
import type { ReplayArgs } from "./replay/command.js";

export const COMMANDS = ["serve", "replay", "trace", "manifests", "hash-pod", "loadtest", "cluster"] as const;
export type CommandName = (typeof COMMANDS)[number];

const COMMAND_USAGE: Record<CommandName, string> = {
  serve: `  simkube-fn serve <${FUNCTION_NAMES.join("|")}> [--port N] [--tls-cert FILE --tls-key FILE]
                   [--allow-trace-location LOCATION]... [--check]
      Serve one function over HTTP (POST / takes an AdmissionReview; GET /healthz (live), GET /readyz
      (ready: it reads the API), GET /stats, and GET /metrics for Prometheus).
      --tls-cert/--tls-key: serve https with this PEM certificate and key.
      --allow-trace-location: a trace location a Simulation's spec.driver.tracePath may name (exact, or
      everything under it when it ends in /); repeat for more. Replaces TRACE_ALLOWED_LOCATIONS.
      --check: start as usual (configuration, trace, listening), check readiness once, then stop: status
      0 when ready, else 1 and one line naming what is missing (kubeconfig, API, RBAC, CRDs).
      Env: SIM_NAME (unset: every Simulation), TRACE_PATH, TRACE_ALLOWED_LOCATIONS (comma-separated),
      TRACE_MAX_MIB (64), TRACE_CACHE_MAX_TRACES (16), TRACE_CACHE_MAX_MIB (64), TRACE_RECHECK_SECONDS (30),
      PORT (8080), LOG_LEVEL (info), LOG_FORMAT (json|gcp|pino), DRIVER_USERS, SEQUENCE_STORE (cluster|memory), SEQUENCE_NAMESPACE or POD_NAMESPACE, KUBECONFIG,
      WEBHOOK_PATH_SECRET or WEBHOOK_PATH_SECRET_FILE (reviews only at POST /<secret>), TLS_CERT_FILE, TLS_KEY_FILE,
      CLIENT_CA_FILE (https only: reviews and /stats only from callers with a certificate this CA signed),
      CLIENT_CERT_SUBJECTS (with CLIENT_CA_FILE: only a certificate naming one of these, comma-separated
      CN=name, DNS:name or URI:uri: the API server's own), MAX_CONNECTIONS (1000: open connections at most).
`,
  replay: `  simkube-fn replay [--trace FILE] [--sim-name NAME] [--speed N] [--json]
      The main job without a cluster: replay a trace's bare pods through both functions against the
      embedded local API double (default: the example scenario examples/scenario.yaml, built in memory;
      TRACE_PATH also names a trace). --json: the last line is one JSON object of counts.
  simkube-fn replay --cluster local --trace FILE [--speed N] [--json] [--kubeconfig FILE] [--interruptions none]
      The real replay: SimKube's driver on a real local control plane (started as by \`cluster up\`, or the
      running one whose driverKubeconfig --kubeconfig names, started with --reschedule and the same --trace).
      Interrupts a running bare pod by eviction, NoExecute taint and node deletion unless --interruptions none.
`,
  trace: `  simkube-fn trace build SCENARIO -o FILE.sktrace
      Write a SimKube trace (format 2) from a scenario file (YAML or JSON; see examples/scenario.yaml).
  simkube-fn trace inspect FILE [--json]
      Version, time span, tracked kinds, index, owners with lifecycles. --json: one JSON object.
  simkube-fn trace lookup FILE --owner KIND/NS/NAME [--hash H] [--seq N]
      The lifecycle mutate-create would give a pod of that owner, and why.
`,
  manifests: MANIFESTS_COMMAND_USAGE,
  "hash-pod": `  simkube-fn hash-pod <FILE|->
      Print a Pod's stable spec hash (JSON or YAML), as SimKube computes it.
`,
  loadtest: `  simkube-fn loadtest teardown --target URL [--reviews N] [--concurrency C]
      Send a teardown burst of realistic pod DELETE reviews to a running reschedule-delete and report
      throughput, p50/p95/p99 latency, errors, clones created and server RSS.
`,
  cluster: `  simkube-fn cluster up [--sim-name NAME] [--reschedule] [--trace FILE] [--insecure-dev] [--real-node]
      [--knative | --openfaas] [--cert-manager | --no-cert-manager] [--pod-reads cluster|virtual-namespaces] [--json]
      A real local control plane (etcd, kube-apiserver, controller-manager, scheduler, KWOK; built once from
      controlplane/ with Go) whose webhooks are both functions, guarded as in production (path secret, the API
      server's client certificate, the pod-create policy) unless --insecure-dev. Prints one JSON line when
      ready (kubeconfig, server, simName, virtualNamespacePrefix, functions, security, realNode, knative,
      certManager) and
      runs until SIGINT/SIGTERM.
      --real-node adds a real kubelet node (containerd, runc, kube-proxy, CNI bridge; root, Linux;
      scripts/install-real-node.sh installs what it needs) in its own namespaces, tainted simkube-fn/real-node.
      --knative (implies --real-node) runs Knative Serving v0.42.2 on it (controller, webhook, activator,
      autoscaler, queue-proxy) with Traefik v3.6.12's Knative provider as ingress and CoreDNS as cluster DNS
      (built once by controlplane/knative/build-serving.sh and build-node-tools.sh), and cert-manager unless
      --no-cert-manager.
      --cert-manager (implies --real-node) runs cert-manager v1.21.1 on it (controller, webhook, cainjector;
      built once by controlplane/cert-manager/build.sh); ready once its webhook admits a Certificate and a
      self-signed Issuer has issued one.
      --openfaas (implies --real-node) runs OpenFaaS Community Edition on it: the gateway and faas-netes
      (classic provider) in namespace openfaas, functions in openfaas-fn, basic auth (Secret basic-auth, user
      admin), and a TLS front on localhost for the API server (built once by controlplane/openfaas/build.sh).
      --pod-reads virtual-namespaces: reschedule-delete reads pods only in virtual namespaces (as manifests
      --pod-reads renders it); default cluster.
      Env: SIMKUBE_FN_CONTROLPLANE_BIN (a directory of prebuilt binaries; skips the build).
`,
};

/** The whole usage, or one command's. */
export function usage(command?: CommandName): string {
  if (command) return `Usage:\n${COMMAND_USAGE[command]}`;
  const all = COMMANDS.map((c) => COMMAND_USAGE[c]).join("");
  return `Usage:\n${all}  simkube-fn help [COMMAND]\n  simkube-fn --version\n`;
}

/** Bad arguments: exit 2 and the usage of `command` (or the whole usage). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: CommandName,
  ) {
    super(message);
  }
}

export type Command =
  | { command: "help"; topic?: CommandName }
  | { command: "version" }
  | { command: "serve"; name: FunctionName; flags: ConfigFlags; check: boolean }
  /** --cluster local: the real replay (replay/cluster-runner.ts). */
  | ({ command: "replay" } & ReplayArgs)
  /** Every deployment option has a flag: manifests/args.ts parses them. */
  | { command: "manifests"; request: ManifestsRequest }
  | { command: "hash-pod"; file: string }
  /** The load tester parses (and explains) its own flags: loadtest/command.ts. */
  | { command: "loadtest"; args: string[] }
  /** `trace build|inspect|lookup` parse their own flags: trace/command.ts. */
  | { command: "trace"; args: string[] }
  /** `cluster up` parses its own flags: cluster/command.ts. */
  | { command: "cluster"; args: string[] };

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** node:util parseArgs with --help/-h on every command; its errors become UsageErrors. */
function parseFlags<O extends Options>(command: CommandName, args: string[], options: O) {
  try {
    return parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } } as O & {
        help: { type: "boolean"; short: "h" };
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(argumentErrorMessage(err), command);
  }
}

function noPositionals(command: CommandName, positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, command);
}

function parseServe(args: string[]): Command {
  const { values, positionals } = parseFlags("serve", args, {
    port: { type: "string" },
    "tls-cert": { type: "string" },
    "tls-key": { type: "string" },
    "allow-trace-location": { type: "string", multiple: true },
    check: { type: "boolean" },
  });
  if (values.help) return { command: "help", topic: "serve" };
  const name = positionals[0];
  if (!name || !isFunctionName(name) || positionals.length > 1) {
    throw new UsageError(`serve takes one function name: ${FUNCTION_NAMES.join(" or ")}`, "serve");
  }
  const flags: ConfigFlags = {
    ...(values.port !== undefined ? { port: values.port } : {}),
    ...(values["tls-cert"] !== undefined ? { tlsCert: values["tls-cert"] } : {}),
    ...(values["tls-key"] !== undefined ? { tlsKey: values["tls-key"] } : {}),
    ...(values["allow-trace-location"] !== undefined
      ? { allowTraceLocations: values["allow-trace-location"] }
      : {}),
  };
  return { command: "serve", name, flags, check: values.check === true };
}

function parseReplay(args: string[]): Command {
  const { values, positionals } = parseFlags("replay", args, {
    trace: { type: "string" },
    "sim-name": { type: "string" },
    speed: { type: "string" },
    json: { type: "boolean" },
    cluster: { type: "string" },
    kubeconfig: { type: "string" },
    interruptions: { type: "string" },
  });
  if (values.help) return { command: "help", topic: "replay" };
  if (values.cluster !== undefined && values.cluster !== "local")
    throw new UsageError(`--cluster takes "local", got ${values.cluster}`, "replay");
  if (values.interruptions !== undefined && values.interruptions !== "none")
    throw new UsageError(`--interruptions takes "none", got ${values.interruptions}`, "replay");
  if (values.cluster === undefined && (values.kubeconfig ?? values.interruptions) !== undefined)
    throw new UsageError("--kubeconfig and --interruptions need --cluster local", "replay");
  noPositionals("replay", positionals);
  const speed = Number(values.speed ?? "1");
  if (!Number.isFinite(speed) || speed <= 0) {
    throw new UsageError(`--speed must be a positive number, got ${values.speed}`, "replay");
  }
  const simName = values["sim-name"] ?? "local-sim";
  return {
    command: "replay",
    simName,
    speed,
    json: values.json === true,
    ...(values.trace !== undefined ? { trace: values.trace } : {}),
    ...(values.cluster === "local"
      ? { cluster: "local" as const, interruptions: values.interruptions !== "none" }
      : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
  };
}

function parseManifests(args: string[]): Command {
  try {
    const request = parseManifestsArgs(args);
    return request.kind === "help"
      ? { command: "help", topic: "manifests" }
      : { command: "manifests", request };
  } catch (err) {
    if (err instanceof ManifestsUsageError) throw new UsageError(err.message, "manifests");
    throw err;
  }
}

function parseHashPod(args: string[]): Command {
  // Not parseArgs: "-" (stdin) is the usual argument, and a file name is taken as it is.
  if (args.includes("--help") || args.includes("-h")) return { command: "help", topic: "hash-pod" };
  const [file] = args;
  if (args.length !== 1 || file === undefined) {
    throw new UsageError("hash-pod takes one argument: a file, or - for stdin", "hash-pod");
  }
  return { command: "hash-pod", file };
}

function parseHelp(args: string[]): Command {
  const [topic] = args;
  if (topic === undefined || topic === "--help" || topic === "-h") return { command: "help" };
  if (!(COMMANDS as readonly string[]).includes(topic)) throw new UsageError(`no help for "${topic}"`);
  return { command: "help", topic: topic as CommandName };
}

/** --help or -h anywhere before a `--`: commands that hand argv on (cluster, trace) show their help too. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/** argv without node and the script: `serve mutate-create --port 8080`. */
export function parseCommandLine(argv: readonly string[]): Command {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return parseServe(rest);
    case "replay":
      return parseReplay(rest);
    case "manifests":
      return parseManifests(rest);
    case "hash-pod":
      return parseHashPod(rest);
    case "loadtest":
      return { command: "loadtest", args: rest };
    case "cluster":
      return rest.length === 0 || asksForHelp(rest)
        ? { command: "help", topic: "cluster" }
        : { command: "cluster", args: rest };
    case "trace":
      return rest.length === 0 || asksForHelp(rest)
        ? { command: "help", topic: "trace" }
        : { command: "trace", args: rest };
    case "help":
      return parseHelp(rest);
    case "--help":
    case "-h":
      return { command: "help" };
    case "--version":
    case "version":
      return { command: "version" };
    default:
      throw new UsageError(command ? `unknown command "${command}"` : "no command given");
  }
}
