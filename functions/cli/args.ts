// The command line, parsed: argv in, a Command out, nothing read or run. main.ts wires each Command to the
// code that runs it. Bad arguments throw a UsageError naming the command (usage-error.ts words it). Every
// command's help is defined here, once: `X --help` (or -h, anywhere before `--`) and `help X` print it.
// Every command's flags go through node:util's parseArgs: no dependency, nothing more for a cold start to load.

import { parseArgs } from "node:util";
import { FUNCTION_NAMES, type FunctionName, isFunctionName } from "../../shared/base/index.js";
import type { ConfigFlags } from "../../shared/config/index.js";
import { OBJECT_STORE_ENV } from "./env-help.js";
import { MANIFESTS_COMMAND_USAGE, type ManifestsRequest, parseManifestsArgs } from "./manifests/args.js";
import { argumentErrorMessage } from "./parse-error.js";
import type { ReplayArgs } from "./replay/command.js";
import { COMMANDS, type CommandName, deprecationText, UsageError } from "./usage-error.js";

export { COMMANDS, type CommandName, UsageError };

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
      CN=name, DNS:name or URI:uri: the API server's own), MAX_CONNECTIONS (1000: open connections at most),
      RESCHEDULE_SERVED (mutate-create; true|false, set by the manifests: whether the deployment has
      reschedule-delete's DELETE webhook; false: a Simulation asking for rescheduling gets a warning and an Event),
      SIMKUBE_FN_COMMIT (the commit label of simkube_fn_build_info; the image sets it),
      POD_READ_ROLE and POD_READ_ACCOUNT (together, as the manifests set them for pod reads in virtual
      namespaces only: reschedule-delete binds this ClusterRole to this account, system:serviceaccount:NS:NAME,
      in each virtual namespace), TRACE_LOAD_TIMEOUT_SECONDS,
      TRACE_FAILURE_CACHE_SECONDS, TRACE_CONCURRENT_LOADS (trace loads: bound, failures remembered, at once).
      Trace locations: ${OBJECT_STORE_ENV}
`,
  replay: `  simkube-fn replay [--trace FILE] [--sim-name NAME] [--speed N] [--json]
      The main job without a cluster: replay a trace's bare pods through both functions against the
      embedded local API double (default: the example scenario examples/scenario.yaml, built in memory;
      TRACE_PATH also names a trace). --json: the last line is one JSON object of counts.
  simkube-fn replay --cluster local --trace FILE [--speed N] [--json] [--kubeconfig FILE] [--interruptions none]
      The real replay: SimKube's driver on a real local control plane (started as by \`cluster up\`, or the
      running one whose driverKubeconfig --kubeconfig names, started with --reschedule and the same --trace).
      Interrupts a running bare pod by eviction, NoExecute taint and node deletion unless --interruptions none.
      Env: TRACE_PATH (when --trace is not given), SIMKUBE_FN_CONTROLPLANE_BIN (--cluster local: a directory of
      prebuilt control-plane binaries; skips the build).
`,
  trace: `  simkube-fn trace build SCENARIO -o FILE.sktrace
      Write a SimKube trace (format 2) from a scenario file (YAML or JSON; see examples/scenario.yaml).
  simkube-fn trace inspect FILE [--json]
      Version, time span, tracked kinds, index, owners with lifecycles. --json: one JSON object.
  simkube-fn trace lookup FILE --owner KIND/NS/NAME [--hash H] [--seq N]
      The lifecycle mutate-create would give a pod of that owner, and why.
      FILE may be a path or an object-store URL. Env: ${OBJECT_STORE_ENV}
`,
  manifests: MANIFESTS_COMMAND_USAGE,
  "hash-pod": `  simkube-fn hash-pod <FILE|->
      Print a Pod's stable spec hash (JSON or YAML), as SimKube computes it. Env: none.
`,
  loadtest: `  simkube-fn loadtest teardown --target URL [options]
      Send a teardown burst of realistic pod DELETE reviews to a running reschedule-delete and report
      throughput, p50/p95/p99 latency, errors, clones created and server RSS. Exit 0 when every review was
      admitted cleanly and the clones match the expected count.
      --target URL           where reschedule-delete takes reviews (POST), http:// or https://
      --reviews N            how many DELETE reviews to send (default 1000)
      --concurrency C        requests in flight at once (default 32)
      --timeout S            stop after S seconds overall (default 120)
      --request-timeout S    one review's bound, as the API server's webhook timeout (default 10)
      --interruptions F      fraction 0..1 of pods deleted as interruptions (default 0). Each one makes the
                             function create a real clone pod through its API server: not for production.
      --sim-name NAME        the Simulation's name in the generated pods (default loadtest; --sim, the old
                             spelling, still works)
      --root NAME            the SimulationRoot owning bare pods (default sk-<sim-name>-driver-00000-root)
      --root-uid UID         that SimulationRoot's uid (default loadtest-root-uid)
      --namespaces A,B       traced namespaces; pods go to virtual-<ns> (default default,shop,batch,monitoring)
      --seed N               generator seed (default 1)
      --stats URL            the function's stats endpoint (default <target>/stats)
      --insecure             skip TLS certificate checks
      --json                 print the report as JSON
      Env: none.
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

export type Command =
  | { command: "help"; topic?: CommandName }
  | { command: "version" }
  | { command: "serve"; name: FunctionName; flags: ConfigFlags; check: boolean }
  /** --cluster local: the real replay (replay/cluster-runner.ts). */
  | ({ command: "replay" } & ReplayArgs)
  /** Every deployment option has a flag: manifests/args.ts parses them. */
  | { command: "manifests"; request: ManifestsRequest }
  | { command: "hash-pod"; file: string }
  /** `loadtest teardown` checks its own flags' values: loadtest/command.ts. */
  | { command: "loadtest"; args: string[] }
  /** `trace build|inspect|lookup` parse their own flags: trace/command.ts. */
  | { command: "trace"; args: string[] }
  /** `cluster up` parses its own flags: cluster/command.ts. */
  | { command: "cluster"; args: string[] };

/** A Command, and the warnings its arguments gave (a deprecated spelling), for stderr. */
export type ParsedCommandLine = Command & { warnings?: string[] };

/** Old spellings still accepted, per command: each is read as its replacement, with a warning. */
const DEPRECATED_FLAGS: Partial<Record<CommandName, Readonly<Record<string, string>>>> = {
  loadtest: { "--sim": "--sim-name" },
};

/** `args` with each deprecated flag (`--old` or `--old=value`, before any `--`) spelled the new way. */
export function renameDeprecatedFlags(
  command: CommandName,
  args: readonly string[],
): { args: string[]; warnings: string[] } {
  const renames = DEPRECATED_FLAGS[command] ?? {};
  const warnings = new Set<string>();
  const end = args.indexOf("--");
  const renamed = args.map((arg, i) => {
    if (end >= 0 && i >= end) return arg;
    const [flag = arg, ...value] = arg.split("=");
    const replacement = renames[flag];
    if (replacement === undefined) return arg;
    warnings.add(deprecationText(flag, replacement));
    return [replacement, ...value].join("=");
  });
  return { args: renamed, warnings: [...warnings] };
}

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

/** Its usage errors are ManifestsUsageErrors, UsageErrors of "manifests". */
function parseManifests(args: string[]): Command {
  const request = parseManifestsArgs(args);
  return request.kind === "help"
    ? { command: "help", topic: "manifests" }
    : { command: "manifests", request };
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

/** --help or -h anywhere before a `--`: commands that hand argv on (cluster, trace, loadtest) show their help too. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/** The subcommands of the commands that have them; one of them must come first. */
const SUBCOMMANDS = {
  trace: ["build", "inspect", "lookup"],
  cluster: ["up"],
  loadtest: ["teardown"],
} as const;

/** trace, cluster, loadtest: help, or argv handed on once it starts with a subcommand. */
function parseWithSubcommand(command: keyof typeof SUBCOMMANDS, args: string[]): Command {
  if (asksForHelp(args)) return { command: "help", topic: command };
  const subcommands: readonly string[] = SUBCOMMANDS[command];
  const [sub] = args;
  if (sub === undefined || !subcommands.includes(sub)) {
    const expected = subcommands.map((s) => `"${s}"`).join(", ");
    const what = sub === undefined ? "needs a subcommand" : `has no subcommand "${sub}"`;
    throw new UsageError(`${command} ${what}: ${expected}`, command);
  }
  return { command, args };
}

function parseCommand(command: string | undefined, rest: string[]): Command {
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
    case "cluster":
    case "trace":
      return parseWithSubcommand(command, rest);
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

/** argv without node and the script: `serve mutate-create --port 8080`. */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const [command, ...rest] = argv;
  if (!(COMMANDS as readonly string[]).includes(command ?? "")) return parseCommand(command, rest);
  const { args, warnings } = renameDeprecatedFlags(command as CommandName, rest);
  const parsed = parseCommand(command, args);
  return warnings.length > 0 ? { ...parsed, warnings } : parsed;
}
