// `simkube-fn manifests` arguments, parsed: argv in, deployment options out, nothing read or written (the
// command reads --ca-bundle's file and makes the path secret). Every deployment option has a flag:
// OPTION_FLAGS names them, and its type makes the compiler refuse an option without one.

import { parseArgs } from "node:util";
import { DEFAULT_IMAGE, DEFAULT_OPENFAAS_IMAGE } from "../../../knative/defaults.js";
import type {
  DeployedFunction,
  DeploymentOptions,
  PolicyRuleInput,
  ResourceOptions,
} from "../../../knative/options.js";
import type { FunctionTuning } from "../../../knative/tuning.js";
import { OBJECT_STORE_ENV } from "../env-help.js";
import { argumentErrorMessage } from "../parse-error.js";
import { UsageError } from "../usage-error.js";

/** A usage error of `manifests`. */
export class ManifestsUsageError extends UsageError {
  constructor(message: string) {
    super(message, "manifests");
  }
}

const FUNCTIONS: readonly DeployedFunction[] = ["mutate-create", "reschedule-delete"];

/** The flag(s) that set each deployment option. */
export const OPTION_FLAGS: Readonly<Record<keyof Required<DeploymentOptions>, readonly string[]>> = {
  target: ["--target"],
  clusterPlatform: ["--platform"],
  kourierNamespace: ["--kourier-namespace"],
  ingress: ["--ingress"],
  traefikNamespace: ["--traefik-namespace"],
  traefikInternalService: ["--traefik-internal-service"],
  issuer: ["--issuer"],
  certManagerNamespace: ["--cert-manager-namespace"],
  domain: ["--domain"],
  openfaasEdition: ["--openfaas-edition"],
  tuning: FUNCTIONS.flatMap((fn) => [
    `--min-scale-${fn}`,
    `--timeout-${fn}`,
    `--activation-scale-${fn}`,
    `--scale-down-delay-${fn}`,
  ]),
  webhookConfiguration: ["--without-webhook"],
  simName: ["--sim-name"],
  namespace: ["--namespace"],
  name: ["--name"],
  image: ["--image"],
  tracePath: ["--trace-path"],
  traceAllowedLocations: ["--allow-trace-location"],
  logLevel: ["--log-level"],
  logFormat: ["--log-format"],
  driverUsers: ["--driver-users"],
  sequenceStore: ["--sequence-store"],
  podReads: ["--pod-reads"],
  virtualNsPrefix: ["--virtual-ns-prefix"],
  rescheduleInterruptedBarePods: ["--reschedule", "--no-reschedule"],
  webhookMode: ["--webhook-mode"],
  webhookUrlBase: ["--webhook-url-base"],
  webhookUrls: FUNCTIONS.map((fn) => `--webhook-url-${fn}`),
  webhookService: [
    "--webhook-service-namespace",
    "--webhook-service-name",
    "--webhook-service-port",
    "--webhook-service-path",
  ],
  caBundle: ["--ca-bundle"],
  caInjectFrom: ["--ca-inject-from"],
  clientCaSecret: ["--client-ca-secret"],
  clientCertSubjects: ["--client-cert-subject"],
  mutateTimeoutSeconds: ["--timeout-mutate-create"],
  rescheduleTimeoutSeconds: ["--timeout-reschedule-delete"],
  minScale: ["--min-scale"],
  maxScale: FUNCTIONS.map((fn) => `--max-scale-${fn}`),
  clusterLocal: ["--cluster-local"],
  resources: ["--cpu-request", "--memory-request", "--cpu-limit", "--memory-limit"],
  pathSecret: ["--path-secret"],
  pathSecretFrom: ["--path-secret-from"],
  extraRules: ["--owner-resource", "--owner-kinds-from-trace"],
  gateway: ["--gateway-url"],
  webhookGateway: ["--webhook-gateway-url"],
  openfaasLang: ["--openfaas-lang"],
  openfaasHandlerDir: ["--openfaas-handler-dir"],
  scaleToZeroDuration: ["--scale-to-zero-duration"],
  podMonitor: ["--pod-monitor"],
  serviceMonitor: ["--service-monitor"],
  monitorLabels: ["--monitor-label"],
};

const BOOLEAN_FLAGS = new Set([
  "reschedule",
  "no-reschedule",
  "without-webhook",
  "pod-monitor",
  "service-monitor",
  "help",
]);
const MULTIPLE_FLAGS = new Set([
  "owner-resource",
  "allow-trace-location",
  "client-cert-subject",
  "monitor-label",
]);

type Spec = Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

function flagSpec(): Spec {
  const spec: Spec = { help: { type: "boolean", short: "h" } };
  for (const flags of Object.values(OPTION_FLAGS)) {
    for (const flag of flags) {
      const key = flag.slice(2);
      spec[key] = BOOLEAN_FLAGS.has(key)
        ? { type: "boolean" }
        : { type: "string", ...(MULTIPLE_FLAGS.has(key) ? { multiple: true } : {}) };
    }
  }
  return spec;
}

/** This command's lines of the usage (args.ts shows them for `help manifests` and usage errors). */
export const MANIFESTS_COMMAND_USAGE = `  simkube-fn manifests [--sim-name NAME] --platform kind|k3s|managed|openfaas|kubernetes
                       --path-secret S | --path-secret-from SECRET [options]
  simkube-fn manifests webhook --sim-name NAME --path-secret S [the same platform options]
      Print the deployment as YAML for kubectl (or stack.yml with --target openfaas-stack). "webhook" prints
      only the per-simulation MutatingWebhookConfiguration sk-NAME-mutatepods that stock SimKube adopts.
      Without --sim-name the deployment serves every Simulation and has no webhook configuration: render
      "manifests webhook --sim-name NAME" for each simulation.
  Platform and trust:
      --platform kind|k3s       per function a Service in Kourier's namespace, a DomainMapping and a
                                cert-manager Certificate for its DNS name; webhooks in service mode
        --kourier-namespace NS (kourier-system)  --issuer CLUSTERISSUER (default: the output creates a CA)
        --cert-manager-namespace NS (cert-manager)
        --ingress kourier|traefik (kourier)  traefik: per function a Service, Certificate, host-rewrite
                                Middleware and IngressRoute (websecure) in Traefik's namespace, leading to
                                Knative's cluster-local route; --traefik-namespace NS (traefik)
                                --traefik-internal-service NAME[:PORT] (traefik-internal:80)
      --platform managed --domain DOMAIN     url mode: https://<service>.<namespace>.DOMAIN/
      --platform openfaas --webhook-gateway-url URL  url mode through the gateway as the API server calls it
                                (https, your TLS ingress); --gateway-url URL is faas-cli's (stack.yml; an
                                https one serves both). --openfaas-edition ce|pro (ce). Community Edition
                                cannot scale to zero (its gateway refuses com.openfaas.scale.zero): Pro can.
                                --image IMAGE (default ${DEFAULT_OPENFAAS_IMAGE}) becomes one image per
                                function, -FUNCTION added to the repository (REPO-mutate-create:TAG), or
                                {function} in IMAGE replaced.
      --platform kubernetes --ca-bundle FILE  no Knative: per function a Deployment serving TLS from the
                                Secret NAME-FUNCTION-tls and a ClusterIP Service; webhooks in service mode
        --client-ca-secret SECRET  require the API server's client certificate: SECRET's ca.crt (the CA
                                that signed it) mounted as CLIENT_CA_FILE
        --client-cert-subject NAME  (repeatable) only the API server's certificate of those that CA
                                signed: CN=name, DNS:name or URI:uri (CLIENT_CERT_SUBJECTS)
      --ca-bundle FILE          PEM the API server trusts (needed for a private CA without cert-manager)
      --ca-inject-from NS/CERT  cert-manager's CA injection instead
      --target knative|openfaas|openfaas-stack  --webhook-mode url|service  --webhook-url-base URL
      --webhook-url-mutate-create URL  --webhook-url-reschedule-delete URL
      --webhook-service-namespace NS  --webhook-service-name NAME  --webhook-service-port N
      --webhook-service-path PATH
      --path-secret S           the secret every webhook path ends in; required unless --path-secret-from
                                (none is made, so the same flags render the same YAML): e.g.
                                "$(openssl rand -hex 32)", kept for every later render
      --path-secret-from SECRET the functions read the path secret from this existing Secret (key
                                path-secret) and no Secret is printed; with --sim-name the webhook paths
                                still need its value: add --path-secret S
      --without-webhook         leave out the deployment's own webhook configuration (stock SimKube)
  Functions:
      --namespace NS  --name BASE (simkube-fn)  --image IMAGE (${DEFAULT_IMAGE}; OpenFaaS: above)
      --no-reschedule           leave out reschedule-delete and its DELETE webhook: no Simulation's
                                rescheduleInterruptedBarePods is served (mutate-create then warns and records
                                an Event on a Simulation that asks). Default: rendered, and reschedule-delete
                                clones only for Simulations that ask; --reschedule says so explicitly
      --trace-path URL  --log-level LEVEL  --log-format json|gcp|pino  --driver-users U1,U2  --sequence-store cluster|memory
      --pod-reads cluster|virtual-namespaces  where reschedule-delete may read pods: cluster-wide (default),
                                or only in virtual namespaces, through a binding it makes per namespace
                                after checking it (docs/safety.md#least-privilege)
      --virtual-ns-prefix PREFIX (virtual)  --owner-resource RESOURCE.GROUP (repeatable: get on a custom owner kind)
      --owner-kinds-from-trace TRACE  get on every kind the trace tracks beyond SimKube's built-in workloads
                                (resources named as the API server names a CRD's plural by default)
      --allow-trace-location LOCATION (repeatable: TRACE_ALLOWED_LOCATIONS, where a Simulation's tracePath may point)
      --cpu-request Q  --memory-request Q  --cpu-limit Q  --memory-limit Q  --cluster-local true|false
  Scaling and timeouts (per function: mutate-create, reschedule-delete; defaults in docs/deploying.md):
      --min-scale N (both)  --min-scale-FUNCTION N  --max-scale-FUNCTION N  --timeout-FUNCTION SECONDS
      --activation-scale-FUNCTION N  --scale-down-delay-FUNCTION DURATION (Knative)
  Metrics (GET /metrics; needs the Prometheus Operator's CRDs; not on OpenFaaS, whose functions serve none):
      --pod-monitor             a PodMonitor per function: on Knative the pod's user-port (plain http, not
                                through queue-proxy: a scrape never wakes a function at zero); on kubernetes
                                port https, checked against NAME-FUNCTION.NAMESPACE.svc and the --ca-bundle
                                (a ConfigMap NAME-metrics-ca) or, with --ca-inject-from, the TLS Secret's ca.crt
      --service-monitor         a ServiceMonitor per function's Service, the same way (--platform kubernetes)
      --monitor-label KEY=VALUE (repeatable) on the monitors, e.g. what your Prometheus's
                                podMonitorSelector/serviceMonitorSelector matches
  OpenFaaS stack.yml: --openfaas-lang (node22)  --openfaas-handler-dir DIR  --scale-to-zero-duration D (Pro)
  Env: --owner-kinds-from-trace at an object-store URL: ${OBJECT_STORE_ENV}
`;

export const MANIFESTS_USAGE = `Usage:\n${MANIFESTS_COMMAND_USAGE}`;

/** What to render: the deployment, or the per-simulation webhook; --ca-bundle's file is read when run. */
export type ManifestsRequest = {
  kind: "deployment" | "webhook";
  options: DeploymentOptions;
  caBundleFile?: string;
  /** --owner-kinds-from-trace: read when run, for its tracked kinds. */
  ownerKindsTrace?: string;
};
export type ManifestsCommand = { kind: "help" } | ManifestsRequest;

type Values = Record<string, string | boolean | string[] | undefined>;

function str(values: Values, key: string): string | undefined {
  const value = values[key];
  return typeof value === "string" ? value : undefined;
}

function whole(values: Values, key: string): number | undefined {
  const raw = str(values, key);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || raw.trim() === "")
    throw new ManifestsUsageError(`--${key} must be a whole number, got "${raw}"`);
  return n;
}

function set<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function tuningFor(values: Values, fn: DeployedFunction): FunctionTuning | undefined {
  const tuning: FunctionTuning = {};
  set(tuning, "minScale", whole(values, `min-scale-${fn}`));
  set(tuning, "timeoutSeconds", whole(values, `timeout-${fn}`));
  set(tuning, "activationScale", whole(values, `activation-scale-${fn}`));
  set(tuning, "scaleDownDelay", str(values, `scale-down-delay-${fn}`));
  return Object.keys(tuning).length > 0 ? tuning : undefined;
}

function perFunction<T>(
  read: (fn: DeployedFunction) => T | undefined,
): Partial<Record<DeployedFunction, T>> | undefined {
  const out: Partial<Record<DeployedFunction, T>> = {};
  for (const fn of FUNCTIONS) set(out, fn, read(fn));
  return Object.keys(out).length > 0 ? out : undefined;
}

function resources(values: Values): ResourceOptions | undefined {
  const pick = (cpu: string, memory: string) => {
    const out: { cpu?: string; memory?: string } = {};
    set(out, "cpu", str(values, cpu));
    set(out, "memory", str(values, memory));
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const requests = pick("cpu-request", "memory-request");
  const limits = pick("cpu-limit", "memory-limit");
  if (!requests && !limits) return undefined;
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

/** --owner-resource widgets.example.com: get on that resource (a custom owner kind in pods' chains). */
function ownerRules(values: Values): PolicyRuleInput[] | undefined {
  const raw = values["owner-resource"];
  if (!Array.isArray(raw)) return undefined;
  return raw.map((entry) => {
    const dot = entry.indexOf(".");
    if (dot <= 0 || dot === entry.length - 1) {
      throw new ManifestsUsageError(
        `--owner-resource takes RESOURCE.GROUP (e.g. widgets.example.com), got "${entry}"`,
      );
    }
    return { apiGroups: [entry.slice(dot + 1)], resources: [entry.slice(0, dot)], verbs: ["get"] };
  });
}

/** --monitor-label KEY=VALUE, repeatable: the monitors' extra labels (checked by resolveOptions). */
function monitorLabels(values: Values): Record<string, string> | undefined {
  const raw = values["monitor-label"];
  if (!Array.isArray(raw)) return undefined;
  const labels: Record<string, string> = {};
  for (const entry of raw) {
    const eq = entry.indexOf("=");
    if (eq <= 0) throw new ManifestsUsageError(`--monitor-label takes KEY=VALUE, got "${entry}"`);
    labels[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return labels;
}

function boolFlag(values: Values, key: string): boolean | undefined {
  const raw = str(values, key);
  if (raw === undefined) return undefined;
  if (raw !== "true" && raw !== "false")
    throw new ManifestsUsageError(`--${key} must be true or false, got "${raw}"`);
  return raw === "true";
}

function webhookService(values: Values): DeploymentOptions["webhookService"] {
  const service: NonNullable<DeploymentOptions["webhookService"]> = {};
  set(service, "namespace", str(values, "webhook-service-namespace"));
  set(service, "name", str(values, "webhook-service-name"));
  set(service, "port", whole(values, "webhook-service-port"));
  set(service, "path", str(values, "webhook-service-path"));
  return Object.keys(service).length > 0 ? service : undefined;
}

/** The options given verbatim by one string flag each. */
const STRING_FLAGS: readonly [keyof DeploymentOptions, string][] = [
  ["target", "target"],
  ["clusterPlatform", "platform"],
  ["kourierNamespace", "kourier-namespace"],
  ["ingress", "ingress"],
  ["traefikNamespace", "traefik-namespace"],
  ["traefikInternalService", "traefik-internal-service"],
  ["issuer", "issuer"],
  ["certManagerNamespace", "cert-manager-namespace"],
  ["domain", "domain"],
  ["openfaasEdition", "openfaas-edition"],
  ["namespace", "namespace"],
  ["name", "name"],
  ["image", "image"],
  ["tracePath", "trace-path"],
  ["logLevel", "log-level"],
  ["logFormat", "log-format"],
  ["sequenceStore", "sequence-store"],
  ["podReads", "pod-reads"],
  ["virtualNsPrefix", "virtual-ns-prefix"],
  ["webhookMode", "webhook-mode"],
  ["webhookUrlBase", "webhook-url-base"],
  ["caInjectFrom", "ca-inject-from"],
  ["clientCaSecret", "client-ca-secret"],
  ["pathSecret", "path-secret"],
  ["pathSecretFrom", "path-secret-from"],
  ["gateway", "gateway-url"],
  ["webhookGateway", "webhook-gateway-url"],
  ["openfaasLang", "openfaas-lang"],
  ["openfaasHandlerDir", "openfaas-handler-dir"],
  ["scaleToZeroDuration", "scale-to-zero-duration"],
];

/** --reschedule or --no-reschedule; neither: undefined (the default, on). */
function rescheduleFlag(values: Values): boolean | undefined {
  const on = values.reschedule === true;
  const off = values["no-reschedule"] === true;
  if (on && off) throw new ManifestsUsageError("--reschedule and --no-reschedule contradict each other");
  return on ? true : off ? false : undefined;
}

/** Flags to options; values are checked by resolveOptions, which names the option in its error. */
export function toDeploymentOptions(values: Values): DeploymentOptions {
  const options: DeploymentOptions = {};
  set(options, "rescheduleInterruptedBarePods", rescheduleFlag(values));
  const simName = str(values, "sim-name");
  if (simName !== undefined) options.simName = simName;
  const loose = options as unknown as Record<string, unknown>;
  for (const [option, flag] of STRING_FLAGS) set(loose, option, str(values, flag));
  set(options, "driverUsers", str(values, "driver-users")?.split(","));
  set(options, "traceAllowedLocations", values["allow-trace-location"] as string[] | undefined);
  set(options, "clientCertSubjects", values["client-cert-subject"] as string[] | undefined);
  set(options, "minScale", whole(values, "min-scale"));
  set(
    options,
    "tuning",
    perFunction((fn) => tuningFor(values, fn)),
  );
  set(
    options,
    "maxScale",
    perFunction((fn) => whole(values, `max-scale-${fn}`)),
  );
  set(
    options,
    "webhookUrls",
    perFunction((fn) => str(values, `webhook-url-${fn}`)),
  );
  set(options, "webhookService", webhookService(values));
  set(options, "clusterLocal", boolFlag(values, "cluster-local"));
  set(options, "resources", resources(values));
  set(options, "extraRules", ownerRules(values));
  if (values["without-webhook"] === true) options.webhookConfiguration = false;
  if (values["pod-monitor"] === true) options.podMonitor = true;
  if (values["service-monitor"] === true) options.serviceMonitor = true;
  set(options, "monitorLabels", monitorLabels(values));
  return options;
}

export function parseManifestsArgs(args: string[]): ManifestsCommand {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: flagSpec(), allowPositionals: true, strict: true }) as typeof parsed;
  } catch (err) {
    throw new ManifestsUsageError(argumentErrorMessage(err));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: "help" };
  if (positionals.length > 1 || (positionals[0] !== undefined && positionals[0] !== "webhook")) {
    throw new ManifestsUsageError(
      `unexpected argument "${positionals.at(-1)}" (the only subcommand is "webhook")`,
    );
  }
  const kind = positionals[0] === "webhook" ? "webhook" : "deployment";
  const caBundleFile = str(values, "ca-bundle");
  const ownerKindsTrace = str(values, "owner-kinds-from-trace");
  return {
    kind,
    options: toDeploymentOptions(values),
    ...(caBundleFile !== undefined ? { caBundleFile } : {}),
    ...(ownerKindsTrace !== undefined ? { ownerKindsTrace } : {}),
  };
}
