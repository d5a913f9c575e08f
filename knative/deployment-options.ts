// Options for the generated deployments (Knative Services, OpenFaaS stack, webhook configuration, RBAC),
// their defaults, and the few derived values both platforms share (names, environment, webhook endpoints).
// Pure: plain values in, plain values out; bad options throw a DeploymentOptionsError with one clear line.

import { randomBytes } from "node:crypto";
import {
  DEFAULT_DRIVER_USERS,
  FUNCTION_NAMES,
  type FunctionName,
  isDns1123Label,
  isDns1123Subdomain,
  isLogFormat,
  isLogLevel,
  LOG_FORMATS,
  LOG_LEVELS,
  VERSION,
} from "../shared/base/index.js";
import { ContainerCheckError, checkImage, checkResources } from "./container-checks.js";
import {
  applyClusterPlatform,
  DEFAULT_CERT_MANAGER_NAMESPACE,
  DEFAULT_KOURIER_NAMESPACE,
  DEFAULT_TRAEFIK_NAMESPACE,
  defaultCaInjectFrom,
  type Ingress,
  PlatformError,
  parseTraefikInternalService,
} from "./platforms.js";
import { type BoundSources, checkMinMax, fitActivationScale } from "./scale-bounds.js";
import { type FunctionTuning, type ResolvedTuning, resolveTuning, TuningError } from "./tuning.js";

/** The functions deployed, by the names the builders use; the list is shared/base/function-names.ts. */
export const DEPLOYED_FUNCTIONS = FUNCTION_NAMES;
export type DeployedFunction = FunctionName;

/**
 * knative: RBAC + Knative Services + webhook configuration (kubectl apply -f).
 * openfaas: RBAC + webhook configuration for functions behind the OpenFaaS gateway (kubectl apply -f).
 * openfaas-stack: the stack.yml that `faas-cli up -f` builds and deploys the functions from.
 */
export const DEPLOYMENT_TARGETS = ["knative", "openfaas", "openfaas-stack"] as const;
export type DeploymentTarget = (typeof DEPLOYMENT_TARGETS)[number];
export type Platform = "knative" | "openfaas";

export type WebhookMode = "url" | "service";

/**
 * The kind of cluster, which decides how the API server reaches and trusts the functions (docs/deploying.md):
 * kind, k3s: no load balancer or DNS: a Service in the Kourier namespace per function, a DomainMapping named
 *   after its DNS name, a cert-manager Certificate for it, webhooks in service mode, CA injection.
 * managed: url mode under a real domain (--domain); caBundle only for a private CA.
 * openfaas: url mode through the gateway behind the user's TLS ingress (--gateway-url).
 * kubernetes: no Knative: per function a plain Deployment serving TLS itself and a ClusterIP Service, webhooks
 *   in service mode, the caBundle of the CA that signed the Deployments' TLS Secrets (--ca-bundle).
 */
export const CLUSTER_PLATFORMS = ["kind", "k3s", "managed", "openfaas", "kubernetes"] as const;
export type ClusterPlatform = (typeof CLUSTER_PLATFORMS)[number];

/** ce: what the Community Edition gateway accepts (faas-netes pkg/handlers/validate.go); pro: scale to zero, own accounts. */
export const OPENFAAS_EDITIONS = ["ce", "pro"] as const;
export type OpenfaasEdition = (typeof OPENFAAS_EDITIONS)[number];
/** faas-netes MaxReplicas: CE refuses com.openfaas.scale.max and .min above it. */
export const OPENFAAS_CE_MAX_REPLICAS = 5;

export interface WebhookServiceOptions {
  /** Default: the functions' namespace. */
  namespace?: string;
  /** May contain {name} (the function's resource name) and {function}. Default "{name}-webhook". */
  name?: string;
  /** Default 443. */
  port?: number;
  /** May contain {name}, {function}, {namespace}. Default "/" (knative), "/function/{name}" (openfaas). */
  path?: string;
}

export interface ResourceOptions {
  requests?: { cpu?: string; memory?: string };
  limits?: { cpu?: string; memory?: string };
}

export interface DeploymentOptions {
  /** Which manifests renderDeployment produces. Default "knative" (or what clusterPlatform implies). */
  target?: DeploymentTarget;
  /** The kind of cluster; fills in how the webhooks are reached and trusted (knative/platforms.ts). */
  clusterPlatform?: ClusterPlatform;
  /** kind/k3s: Kourier's namespace, where the per-function gateway Services go. Default "kourier-system". */
  kourierNamespace?: string;
  /** kind/k3s: the ingress in front of Knative, Kourier (the default) or Traefik (knative/traefik-route.ts). */
  ingress?: Ingress;
  /** ingress traefik: Traefik's namespace, where the per-function Services, routes and certificates go. Default "traefik". */
  traefikNamespace?: string;
  /**
   * ingress traefik: "NAME[:PORT]", the Service in Traefik's namespace in front of its entry point for Knative's
   * cluster-local routes (its Knative provider's private entry point). Default "traefik-internal:80".
   */
  traefikInternalService?: string;
  /** kind/k3s: a ClusterIssuer of cert-manager to issue the functions' certificates; unset = the output creates a CA. */
  issuer?: string;
  /** kind/k3s: where the created CA's Certificate and Secret live (a ClusterIssuer reads it there). Default "cert-manager". */
  certManagerNamespace?: string;
  /** managed: the Knative domain; the webhooks call https://<service>.<namespace>.<domain>/. */
  domain?: string;
  /** OpenFaaS: Community Edition or Pro. Default "ce". */
  openfaasEdition?: OpenfaasEdition;
  /** Per function scaling and timeout knobs; beat minScale and the *TimeoutSeconds options. */
  tuning?: Partial<Record<DeployedFunction, FunctionTuning>>;
  /** Render the deployment's own MutatingWebhookConfiguration. Default true; false when SimKube's per-simulation one is used. */
  webhookConfiguration?: boolean;
  /**
   * The simkube.io/v1 Simulation the functions serve (SIM_NAME). Unset: one deployment serves every
   * Simulation, and renders no webhook configuration (each simulation gets its own: manifests webhook).
   */
  simName?: string;
  /** Where the functions, their ServiceAccounts and the sequence ConfigMaps live. Default "simkube-fn" (knative), "openfaas-fn" (openfaas); never SimKube's own "simkube" by default. */
  namespace?: string;
  /** Base of every resource name: <name>-mutate-create, ClusterRole <name>, ... Default "simkube-fn". */
  name?: string;
  /** Knative: the simkube-fn image (Dockerfile), default DEFAULT_IMAGE. OpenFaaS: the image faas-cli builds; may contain {function}; default "simkube-fn:latest". */
  image?: string;
  /** TRACE_PATH: an http(s):// URL (or a path inside the image); unset = no lifecycles. */
  tracePath?: string;
  /**
   * TRACE_ALLOWED_LOCATIONS: where a Simulation's spec.driver.tracePath may point (exact, or everything under
   * an entry ending in "/"), for a deployment without TRACE_PATH. Unset: nowhere.
   */
  traceAllowedLocations?: readonly string[];
  /** LOG_LEVEL. Default "info". */
  logLevel?: string;
  /** LOG_FORMAT (json, gcp, pino). Default: unset, which the functions read as json. */
  logFormat?: string;
  /** DRIVER_USERS; also excluded from the DELETE webhook by a match condition. Default SimKube's sk-ctrl-sa. */
  driverUsers?: readonly string[];
  /** SEQUENCE_STORE. Default "cluster" (the only one that is right with more than one replica or a cold start). */
  sequenceStore?: "cluster" | "memory";
  /**
   * Where reschedule-delete may read pods. "cluster" (default): `get pods` cluster-wide. "virtual-namespaces":
   * no `get pods` of its own; it binds `<name>-virtual-pod-reads` to itself in each virtual namespace it has
   * checked, fenced by the `<name>-pod-read-bindings` policy (knative/pod-reads.ts).
   */
  podReads?: PodReads;
  /** Simulation spec.driver.virtualNsPrefix. Default "virtual". */
  virtualNsPrefix?: string;
  /** Simulation spec.rescheduleInterruptedBarePods: deploy and register reschedule-delete. Default false. */
  rescheduleInterruptedBarePods?: boolean;
  /** How the API server reaches the functions. Default "url". */
  webhookMode?: WebhookMode;
  /**
   * url mode: https URL the functions are served at; may contain {name}, {function}, {namespace}.
   * Without placeholders: knative prepends "{name}.{namespace}." to the host (Knative's default
   * domain-template), openfaas appends "/function/{name}" (the gateway's route).
   */
  webhookUrlBase?: string;
  /** url mode: explicit URL per function; beats webhookUrlBase. */
  webhookUrls?: Partial<Record<DeployedFunction, string>>;
  /** service mode: the TLS-terminating ClusterIP Service the API server calls. */
  webhookService?: WebhookServiceOptions;
  /** Base64 PEM bundle the API server trusts for the endpoint; omit for a publicly trusted certificate. */
  caBundle?: string;
  /** cert-manager's CA injection: "<namespace>/<certificate>" (annotation cert-manager.io/inject-ca-from). */
  caInjectFrom?: string;
  /**
   * clusterPlatform "kubernetes" only: a Secret in the functions' namespace whose `ca.crt` is the CA that signed
   * the API server's webhook client certificate. Mounted and named by CLIENT_CA_FILE, so a review without that
   * certificate is refused (README "Who may call the functions").
   */
  clientCaSecret?: string;
  /** mutate-create's webhook timeout (1-30 s); tuning["mutate-create"].timeoutSeconds wins. Default: knative/tuning.ts. */
  mutateTimeoutSeconds?: number;
  /** reschedule-delete's webhook timeout (1-30 s); tuning["reschedule-delete"].timeoutSeconds wins. */
  rescheduleTimeoutSeconds?: number;
  /** Replicas kept warm, both functions: Knative min-scale; OpenFaaS scale.min (0 = scale to zero, Pro only). Default 0. */
  minScale?: number;
  /** Upper replica bound per function. Default mutate-create 3, reschedule-delete 10. */
  maxScale?: Partial<Record<DeployedFunction, number>>;
  /** Knative: label the Services cluster-local. Default: true in service mode, false in url mode. */
  clusterLocal?: boolean;
  /** Container resources. Default requests cpu 100m / memory 128Mi, limit memory 1Gi (see manifests.ts CONCURRENCY). */
  resources?: ResourceOptions;
  /**
   * The secret path segment of every webhook endpoint (WEBHOOK_PATH_SECRET): the API server calls
   * .../<pathSecret>, the function refuses any other path. 24-256 of A-Z a-z 0-9 _ -. Unset: no secret
   * (the CLI always generates one).
   */
  pathSecret?: string;
  /**
   * An existing Secret (key `path-secret`) the functions read the path secret from; no Secret is rendered.
   * The webhook configuration still needs the value for its paths: give it as pathSecret too, or render
   * none (no simName, or webhookConfiguration false).
   */
  pathSecretFrom?: string;
  /** Extra ClusterRole rules for mutate-create, e.g. get on custom owner kinds the simulated workloads use. */
  extraRules?: readonly PolicyRuleInput[];
  /**
   * OpenFaaS: faas-cli's gateway (stack.yml provider.gateway), usually plain http through a port-forward.
   * Default "http://127.0.0.1:8080". The webhooks use it only when it is https and webhookGateway is unset.
   */
  gateway?: string;
  /**
   * OpenFaaS: the gateway as the API server calls it, https behind the user's TLS ingress, under a name the
   * API server resolves; the webhook URLs are <it>/function/<name>/<secret>.
   */
  webhookGateway?: string;
  /** OpenFaaS: language template. Default "node22" (a supported Node.js LTS; the handler bundle targets Node 20+). */
  openfaasLang?: string;
  /** OpenFaaS: folder holding dist/openfaas/<function>/, relative to stack.yml. Default "./dist/openfaas". */
  openfaasHandlerDir?: string;
  /** OpenFaaS Pro: idle time before scale to zero (com.openfaas.scale.zero-duration). Default "15m". */
  scaleToZeroDuration?: string;
}

export interface PolicyRuleInput {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export class DeploymentOptionsError extends Error {
  override readonly name = "DeploymentOptionsError";
}

/** Every option with its default applied and checked. */
export interface ResolvedOptions {
  target: DeploymentTarget;
  platform: Platform;
  clusterPlatform: ClusterPlatform | undefined;
  kourierNamespace: string;
  /** Meaningful on kind/k3s only; "kourier" elsewhere. */
  ingress: Ingress;
  traefikNamespace: string;
  traefikInternalService: { name: string; port: number };
  issuer: string | undefined;
  certManagerNamespace: string;
  openfaasEdition: OpenfaasEdition;
  tuning: Record<DeployedFunction, ResolvedTuning>;
  webhookConfiguration: boolean;
  simName: string | undefined;
  namespace: string;
  name: string;
  image: string;
  tracePath: string | undefined;
  traceAllowedLocations: string[];
  logLevel: string;
  logFormat: string | undefined;
  driverUsers: string[];
  sequenceStore: "cluster" | "memory";
  podReads: PodReads;
  virtualNsPrefix: string;
  reschedule: boolean;
  functions: DeployedFunction[];
  webhookMode: WebhookMode;
  webhookUrlBase: string | undefined;
  webhookUrls: Partial<Record<DeployedFunction, string>>;
  webhookService: Required<WebhookServiceOptions>;
  pathSecret: string | undefined;
  pathSecretFrom: string | undefined;
  caBundle: string | undefined;
  caInjectFrom: string | undefined;
  clientCaSecret: string | undefined;
  maxScale: Record<DeployedFunction, number>;
  clusterLocal: boolean;
  resources: ResourceOptions;
  extraRules: PolicyRuleInput[];
  gateway: string;
  openfaasLang: string;
  openfaasHandlerDir: string;
  scaleToZeroDuration: string;
}

export const DEFAULT_KNATIVE_NAMESPACE = "simkube-fn";
export const DEFAULT_OPENFAAS_NAMESPACE = "openfaas-fn";
export const DEFAULT_BASE_NAME = "simkube-fn";
/**
 * Knative: the image the Dockerfile builds, under a registry name Knative never resolves to a digest
 * (config-deployment registries-skipping-tag-resolving: kind.local, ko.local, dev.local) and a fixed tag,
 * so kind and k3s start it from the node's image store; `:latest` would always be pulled.
 */
export const DEFAULT_IMAGE = `dev.local/simkube-fn:${VERSION}`;
/** OpenFaaS: the name faas-cli builds from (openfaas-stack.ts adds the function to it). */
export const DEFAULT_OPENFAAS_IMAGE = "simkube-fn:latest";
export const DEFAULT_VIRTUAL_NS_PREFIX = "virtual";
export const DEFAULT_MAX_SCALE: Readonly<Record<DeployedFunction, number>> = {
  // The cluster sequence store batches concurrent reservations inside one process; every extra replica
  // adds optimistic-concurrency conflicts on the same ConfigMap, so few, busy replicas are better.
  "mutate-create": 3,
  // Teardown bursts: every pod delete is >= 3 DELETE reviews (k8s.io/apiserver pkg/registry/rest/delete.go).
  "reschedule-delete": 10,
};
/** The API server caps a request object at about 3 MiB; the server and the OpenFaaS template must accept it. */
export const MAX_REVIEW_BYTES = 3 * 1024 * 1024;

const PATH_SECRET = /^[A-Za-z0-9_-]{24,256}$/;
/**
 * A service-mode webhook's path segments must each be a lowercase RFC 1123 subdomain (the API server refuses
 * the configuration otherwise: k8s.io/apiserver pkg/apis/apiserver/validation, ValidateWebhookService), so there
 * a secret is lowercase letters, digits and `-` only, starting and ending with a letter or digit.
 */
const SERVICE_PATH_SECRET = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** 32 random bytes as hex: one path segment every webhook mode accepts (and WEBHOOK_PATH_SECRET too). */
export function newPathSecret(): string {
  return randomBytes(32).toString("hex");
}
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
// Knative names the first revision <service>-00001 and revision names must be DNS-1035 labels (<= 63).
const KNATIVE_REVISION_SUFFIX = "-00001".length;

function fail(message: string): never {
  throw new DeploymentOptionsError(message);
}

function checkScale(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 0) fail(`${option} must be a whole number >= 0, got ${value}`);
  return value;
}

export function platformOf(target: DeploymentTarget): Platform {
  return target === "knative" ? "knative" : "openfaas";
}

export function isDeploymentTarget(value: string): value is DeploymentTarget {
  return (DEPLOYMENT_TARGETS as readonly string[]).includes(value);
}

/** Every option checked and defaulted; a bad one throws DeploymentOptionsError naming it. */
export function resolveOptions(options: DeploymentOptions): ResolvedOptions {
  try {
    return resolveChecked(applyClusterPlatform(options));
  } catch (err) {
    if (err instanceof PlatformError || err instanceof TuningError || err instanceof ContainerCheckError) {
      fail(err.message);
    }
    throw err;
  }
}

function resolveEdition(options: DeploymentOptions): OpenfaasEdition {
  const edition = options.openfaasEdition ?? "ce";
  if (!(OPENFAAS_EDITIONS as readonly string[]).includes(edition)) {
    fail(`openfaasEdition must be ce or pro, got "${String(edition)}"`);
  }
  return edition;
}

function resolveAllTuning(options: DeploymentOptions): Record<DeployedFunction, ResolvedTuning> {
  const tuning = {} as Record<DeployedFunction, ResolvedTuning>;
  for (const fn of DEPLOYED_FUNCTIONS) {
    const timeout = fn === "mutate-create" ? options.mutateTimeoutSeconds : options.rescheduleTimeoutSeconds;
    const fallback: FunctionTuning = {
      ...(options.minScale !== undefined ? { minScale: options.minScale } : {}),
      ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
    };
    tuning[fn] = resolveTuning(fn, options.tuning?.[fn], fallback);
  }
  return tuning;
}

/** The flags that set one function's replica bounds (undefined: its default), for error messages. */
function boundSources(options: DeploymentOptions, fn: DeployedFunction): BoundSources {
  const given = options.tuning?.[fn];
  const minScaleFlag =
    given?.minScale !== undefined
      ? `--min-scale-${fn}`
      : options.minScale !== undefined
        ? "--min-scale"
        : undefined;
  return {
    minScaleFlag,
    maxScaleFlag: options.maxScale?.[fn] !== undefined ? `--max-scale-${fn}` : undefined,
    activationScaleFlag: given?.activationScale !== undefined ? `--activation-scale-${fn}` : undefined,
  };
}

/**
 * Upper replica bounds, and on Knative the activation scale fitted between min and max (scale-bounds.ts).
 * OpenFaaS CE refuses com.openfaas.scale.max and .min above 5 (faas-netes pkg/handlers/validate.go), so its
 * defaults are capped there and a larger explicit value is refused.
 */
function resolveMaxScale(
  options: DeploymentOptions,
  platform: Platform,
  ce: boolean,
  tuning: Record<DeployedFunction, ResolvedTuning>,
): Record<DeployedFunction, number> {
  const maxScale = { ...DEFAULT_MAX_SCALE } as Record<DeployedFunction, number>;
  for (const fn of DEPLOYED_FUNCTIONS) {
    if (ce) maxScale[fn] = Math.min(maxScale[fn], OPENFAAS_CE_MAX_REPLICAS);
    const given = options.maxScale?.[fn];
    if (given !== undefined) maxScale[fn] = given;
    checkScale(maxScale[fn], `maxScale.${fn}`);
    const minScale = tuning[fn].minScale;
    const bounds = { minScale, maxScale: maxScale[fn], activationScale: tuning[fn].activationScale };
    const sources = boundSources(options, fn);
    checkMinMax(fn, bounds, sources);
    if (platform === "knative") tuning[fn].activationScale = fitActivationScale(fn, bounds, sources);
    if (ce && (maxScale[fn] > OPENFAAS_CE_MAX_REPLICAS || minScale > OPENFAAS_CE_MAX_REPLICAS)) {
      fail(
        `OpenFaaS Community Edition allows at most ${OPENFAAS_CE_MAX_REPLICAS} replicas per function (${fn}: min ${minScale}, max ${maxScale[fn]}); use --openfaas-edition pro or a smaller scale`,
      );
    }
  }
  return maxScale;
}

function resolveTarget(options: DeploymentOptions): Pick<ResolvedOptions, "target" | "platform"> {
  const target = options.target ?? "knative";
  if (!isDeploymentTarget(target))
    fail(`target must be one of ${DEPLOYMENT_TARGETS.join(", ")}, got "${target}"`);
  return { target, platform: platformOf(target) };
}

/** Optional: without a Simulation the deployment serves every one (SimulationRoot owners decide). */
function resolveSimName(options: DeploymentOptions): string | undefined {
  const simName = options.simName?.trim() || undefined;
  if (simName !== undefined && simName.length > 63)
    fail(`simName "${simName}" is longer than 63 characters (it is used as a label value)`);
  return simName;
}

function resolveNamespaces(
  options: DeploymentOptions,
  platform: ResolvedOptions["platform"],
): Pick<ResolvedOptions, "namespace" | "virtualNsPrefix"> {
  const namespace =
    options.namespace ?? (platform === "knative" ? DEFAULT_KNATIVE_NAMESPACE : DEFAULT_OPENFAAS_NAMESPACE);
  if (!isDns1123Label(namespace)) {
    fail(`namespace "${namespace}" is not a valid namespace name (DNS-1123 label)`);
  }
  const virtualNsPrefix = options.virtualNsPrefix ?? DEFAULT_VIRTUAL_NS_PREFIX;
  if (!isDns1123Label(virtualNsPrefix)) fail(`virtualNsPrefix "${virtualNsPrefix}" is not a DNS-1123 label`);
  // The functions' own pods must never pass through mutate-create: a scale-from-zero would wait on itself.
  if (namespace.startsWith(`${virtualNsPrefix}-`)) {
    fail(`namespace "${namespace}" starts with the virtual namespace prefix "${virtualNsPrefix}-"`);
  }
  return { namespace, virtualNsPrefix };
}

/** The base name, and which functions are deployed (reschedule-delete only when rescheduling is on). */
function resolveFunctions(
  options: DeploymentOptions,
): Pick<ResolvedOptions, "name" | "reschedule" | "functions"> {
  const name = options.name ?? DEFAULT_BASE_NAME;
  const reschedule = options.rescheduleInterruptedBarePods === true;
  const functions: DeployedFunction[] = reschedule ? [...DEPLOYED_FUNCTIONS] : ["mutate-create"];
  for (const fn of DEPLOYED_FUNCTIONS) {
    const resourceName = functionResourceName(name, fn);
    if (!DNS1035_LABEL.test(resourceName) || resourceName.length + KNATIVE_REVISION_SUFFIX > 63) {
      fail(
        `name "${name}" gives "${resourceName}", which must be a DNS-1035 label of at most ${63 - KNATIVE_REVISION_SUFFIX} characters`,
      );
    }
  }
  return { name, reschedule, functions };
}

export const POD_READS = ["cluster", "virtual-namespaces"] as const;
export type PodReads = (typeof POD_READS)[number];

/** The functions' own settings: driver users, log level, sequence store, where pods are read. */
function resolveRuntime(
  options: DeploymentOptions,
): Pick<ResolvedOptions, "driverUsers" | "logLevel" | "logFormat" | "sequenceStore" | "podReads"> {
  const driverUsers = [...(options.driverUsers ?? DEFAULT_DRIVER_USERS)].map((u) => u.trim()).filter(Boolean);
  for (const user of driverUsers) {
    if (user.includes(",")) fail(`driver user "${user}" contains a comma (DRIVER_USERS is comma-separated)`);
  }
  const logLevel = options.logLevel ?? "info";
  if (!isLogLevel(logLevel)) fail(`logLevel must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  const logFormat = options.logFormat;
  if (logFormat !== undefined && !isLogFormat(logFormat))
    fail(`logFormat must be one of ${LOG_FORMATS.join(", ")}, got "${logFormat}"`);
  const sequenceStore = options.sequenceStore ?? "cluster";
  if (sequenceStore !== "cluster" && sequenceStore !== "memory") {
    fail(`sequenceStore must be "cluster" or "memory", got "${String(sequenceStore)}"`);
  }
  const podReads = options.podReads ?? "cluster";
  if (!POD_READS.includes(podReads)) {
    fail(`podReads must be one of ${POD_READS.join(", ")}, got "${String(podReads)}"`);
  }
  return { driverUsers, logLevel, logFormat, sequenceStore, podReads };
}

/** How the API server reaches the functions: by URL, or through a Service. */
function resolveWebhookMode(
  options: DeploymentOptions,
  namespace: string,
  platform: ResolvedOptions["platform"],
): Pick<ResolvedOptions, "webhookMode" | "webhookService"> {
  const webhookMode = options.webhookMode ?? "url";
  if (webhookMode !== "url" && webhookMode !== "service") {
    fail(`webhookMode must be "url" or "service", got "${String(webhookMode)}"`);
  }
  const service = options.webhookService ?? {};
  const webhookService: Required<WebhookServiceOptions> = {
    namespace: service.namespace ?? namespace,
    name: service.name ?? "{name}-webhook",
    port: service.port ?? 443,
    path: service.path ?? (platform === "knative" ? "/" : "/function/{name}"),
  };
  if (!Number.isInteger(webhookService.port) || webhookService.port < 1 || webhookService.port > 65535) {
    fail(`webhookService.port must be a port number, got ${webhookService.port}`);
  }
  if (options.pathSecret !== undefined && !PATH_SECRET.test(options.pathSecret)) {
    fail("pathSecret must be 24 to 256 characters of A-Z a-z 0-9 _ - (it is one URL path segment)");
  }
  if (
    webhookMode === "service" &&
    options.pathSecret !== undefined &&
    !SERVICE_PATH_SECRET.test(options.pathSecret)
  ) {
    fail(
      "pathSecret in service mode must be lowercase letters, digits and - (the API server takes only RFC 1123 path segments for a Service): e.g. openssl rand -hex 32",
    );
  }
  return { webhookMode, webhookService };
}

/** Replica bounds and per-function tuning, within what the chosen OpenFaaS edition allows. */
function resolveScaling(
  options: DeploymentOptions,
  platform: ResolvedOptions["platform"],
): Pick<ResolvedOptions, "openfaasEdition" | "tuning" | "maxScale"> {
  if (options.minScale !== undefined) checkScale(options.minScale, "minScale");
  const openfaasEdition = resolveEdition(options);
  const tuning = resolveAllTuning(options);
  const ce = platform === "openfaas" && openfaasEdition === "ce";
  const maxScale = resolveMaxScale(options, platform, ce, tuning);
  return { openfaasEdition, tuning, maxScale };
}

type AddonOptions = "certManagerNamespace" | "kourierNamespace" | "ingress" | "traefikNamespace";

/** Where cert-manager and the ingress (Kourier or Traefik) run in the cluster. */
function resolveAddonNamespaces(
  options: DeploymentOptions,
): Pick<ResolvedOptions, AddonOptions | "traefikInternalService"> {
  const certManagerNamespace = options.certManagerNamespace ?? DEFAULT_CERT_MANAGER_NAMESPACE;
  const kourierNamespace = options.kourierNamespace ?? DEFAULT_KOURIER_NAMESPACE;
  const traefikNamespace = options.traefikNamespace ?? DEFAULT_TRAEFIK_NAMESPACE;
  for (const [what, value] of [
    ["certManagerNamespace", certManagerNamespace],
    ["kourierNamespace", kourierNamespace],
    ["traefikNamespace", traefikNamespace],
  ] as const) {
    if (!isDns1123Label(value)) fail(`${what} "${value}" is not a valid namespace name`);
  }
  return {
    certManagerNamespace,
    kourierNamespace,
    ingress: options.ingress ?? "kourier",
    traefikNamespace,
    traefikInternalService: parseTraefikInternalService(options.traefikInternalService),
  };
}

/** Only a Deployment serving TLS itself sees the client certificate: Knative and OpenFaaS terminate TLS first. */
function resolveClientCaSecret(options: DeploymentOptions): string | undefined {
  const secret = options.clientCaSecret;
  if (secret === undefined) return undefined;
  if (options.clusterPlatform !== "kubernetes") {
    fail(
      "clientCaSecret needs clusterPlatform kubernetes: Knative and OpenFaaS terminate TLS before the function, so it never sees the API server's client certificate",
    );
  }
  if (!isDns1123Subdomain(secret)) fail(`clientCaSecret "${secret}" is not a valid Secret name`);
  return secret;
}

/** What the options give as is, with a default, or with a check of its own. */
function passThrough(
  options: DeploymentOptions,
  webhookMode: ResolvedOptions["webhookMode"],
  simName: string | undefined,
  platform: Platform,
) {
  return {
    clusterPlatform: options.clusterPlatform,
    issuer: options.issuer,
    // Without a Simulation, the webhook configurations are per simulation (manifests webhook --sim-name).
    webhookConfiguration: simName !== undefined && (options.webhookConfiguration ?? true),
    image:
      platform === "knative"
        ? checkImage(options.image ?? DEFAULT_IMAGE)
        : (options.image ?? DEFAULT_OPENFAAS_IMAGE),
    tracePath: options.tracePath?.trim() || undefined,
    traceAllowedLocations: (options.traceAllowedLocations ?? []).map((l) => l.trim()).filter((l) => l !== ""),
    webhookUrlBase: options.webhookUrlBase,
    webhookUrls: { ...options.webhookUrls },
    pathSecret: options.pathSecret,
    pathSecretFrom: resolvePathSecretFrom(options),
    caBundle: options.caBundle,
    clientCaSecret: resolveClientCaSecret(options),
    clusterLocal: options.clusterLocal ?? webhookMode === "service",
    resources: options.resources
      ? checkResources(options.resources)
      : {
          requests: { cpu: "100m", memory: "128Mi" },
          // Measured (npm run bench:memory): 32 concurrent ~3 MiB reviews (the per-replica containerConcurrency)
          // while a trace at the 64 MiB cap (TRACE_MAX_MIB) reloads peaked at 720-744 MiB RSS; alone, 521 MiB.
          limits: { memory: "1Gi" },
        },
    extraRules: [...(options.extraRules ?? [])],
    gateway: options.gateway ?? "http://127.0.0.1:8080",
    openfaasLang: options.openfaasLang ?? "node22",
    openfaasHandlerDir: (options.openfaasHandlerDir ?? "./dist/openfaas").replace(/\/+$/, ""),
    scaleToZeroDuration: options.scaleToZeroDuration ?? "15m",
  };
}

/** A Secret name is a DNS-1123 subdomain (at most 253 characters, dot-separated labels). */
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function resolvePathSecretFrom(options: DeploymentOptions): string | undefined {
  const name = options.pathSecretFrom;
  if (name !== undefined && !DNS1123_SUBDOMAIN.test(name))
    fail(`pathSecretFrom "${name}" is not a Secret name (a DNS-1123 subdomain)`);
  return name;
}

/**
 * With an existing Secret, the webhook paths still carry the secret itself: the API server cannot read a
 * Secret, so the webhook configuration has to hold the value (README "Who may call the functions").
 */
function checkPathSecretFrom(o: ResolvedOptions): void {
  if (o.pathSecretFrom === undefined || o.pathSecret !== undefined) return;
  if (o.webhookConfiguration && o.target !== "openfaas-stack") {
    fail(
      `pathSecretFrom ${o.pathSecretFrom}: the webhook configuration's paths end in the secret itself; give its value as pathSecret too (kubectl get secret -n ${o.namespace} ${o.pathSecretFrom} -o jsonpath='{.data.path-secret}' | base64 -d), or render no webhook configuration`,
    );
  }
}

// Checks run in this order, so the first problem reported is always the same one.
function resolveChecked(options: DeploymentOptions): ResolvedOptions {
  const { target, platform } = resolveTarget(options);
  const simName = resolveSimName(options);
  const { namespace, virtualNsPrefix } = resolveNamespaces(options, platform);
  const names = resolveFunctions(options);
  const runtime = resolveRuntime(options);
  const webhook = resolveWebhookMode(options, namespace, platform);
  const scaling = resolveScaling(options, platform);
  const addons = resolveAddonNamespaces(options);
  const resolved: ResolvedOptions = {
    ...passThrough(options, webhook.webhookMode, simName, platform),
    target,
    platform,
    simName,
    namespace,
    virtualNsPrefix,
    ...names,
    ...runtime,
    ...webhook,
    ...scaling,
    ...addons,
    caInjectFrom:
      options.caInjectFrom ??
      defaultCaInjectFrom(options, {
        namespace,
        name: names.name,
        certManagerNamespace: addons.certManagerNamespace,
      }),
  };
  checkPathSecretFrom(resolved);
  // Fail at generation time, not when the first pod is created.
  if (target !== "openfaas-stack") for (const fn of resolved.functions) webhookClientConfig(resolved, fn);
  return resolved;
}

/** The Secret holding the path secret (one per deployment, in the functions' namespace), and its key. */
export function pathSecretName(o: ResolvedOptions): string {
  return o.pathSecretFrom ?? `${o.name}-webhook-path`;
}

/** Whether the functions check a path secret: one given or generated, or one an existing Secret holds. */
export function checksPathSecret(o: ResolvedOptions): boolean {
  return o.pathSecret !== undefined || o.pathSecretFrom !== undefined;
}
export const PATH_SECRET_KEY = "path-secret";

/** <name>-<function>: the Knative Service, the OpenFaaS function. */
export function functionResourceName(baseName: string, fn: DeployedFunction): string {
  return `${baseName}-${fn}`;
}

/** The environment `simkube-fn serve` reads (shared/config/config.ts); PORT is left to the platform. */
export function functionEnvironment(o: ResolvedOptions): Record<string, string> {
  const env: Record<string, string> = o.simName ? { SIM_NAME: o.simName } : {};
  if (o.tracePath) env.TRACE_PATH = o.tracePath;
  if (o.traceAllowedLocations.length > 0) env.TRACE_ALLOWED_LOCATIONS = o.traceAllowedLocations.join(",");
  env.LOG_LEVEL = o.logLevel;
  if (o.logFormat) env.LOG_FORMAT = o.logFormat;
  env.DRIVER_USERS = o.driverUsers.join(",");
  env.SEQUENCE_STORE = o.sequenceStore;
  // A literal, not a fieldRef: Knative rejects valueFrom.fieldRef unless the non-default
  // kubernetes.podspec-fieldref feature flag is on, and OpenFaaS has no downward API in stack.yml.
  // The manifests pin the namespace anyway.
  env.POD_NAMESPACE = o.namespace;
  return env;
}

function fillTemplate(template: string, o: ResolvedOptions, fn: DeployedFunction): string {
  return template
    .replaceAll("{name}", functionResourceName(o.name, fn))
    .replaceAll("{function}", fn)
    .replaceAll("{namespace}", o.namespace);
}

const PLACEHOLDER = /\{(name|function|namespace)\}/;

function defaultUrlTemplate(base: string, platform: Platform, namespace: string): string {
  if (PLACEHOLDER.test(base)) return base;
  if (platform === "knative") {
    // Knative's default domain-template is {{.Name}}.{{.Namespace}}.{{.Domain}}.
    return base.replace(/^(https?:\/\/)/i, "$1{name}.{namespace}.");
  }
  // The gateway routes /function/<name> to openfaas-fn and /function/<name>.<namespace> elsewhere.
  const suffix = namespace === DEFAULT_OPENFAAS_NAMESPACE ? "" : ".{namespace}";
  return `${base.replace(/\/+$/, "")}/function/{name}${suffix}`;
}

/** The URL the API server calls in url mode; https, no query, fragment or user info (admissionregistration/v1). */
export function webhookUrl(o: ResolvedOptions, fn: DeployedFunction): string {
  const explicit = o.webhookUrls[fn];
  let raw: string;
  if (explicit) raw = explicit;
  else if (o.webhookUrlBase)
    raw = fillTemplate(defaultUrlTemplate(o.webhookUrlBase, o.platform, o.namespace), o, fn);
  else {
    // Named by the CLI's flags: this is what a user of `manifests` without --platform sees first.
    const base =
      o.platform === "knative"
        ? "--webhook-url-base https://<knative domain> (URLs https://<service>.<namespace>.<domain>/)"
        : "--webhook-url-base https://<gateway with TLS> (URLs https://<gateway>/function/<name>)";
    fail(
      `the webhooks need an address: add --platform kind|k3s|managed|openfaas (where the functions run), or ${base}, or --webhook-mode service`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail(`webhook URL "${raw}" for ${fn} is not a URL`);
  }
  if (url.protocol !== "https:")
    fail(`webhook URL "${raw}" for ${fn} must use https (the API server only calls https)`);
  if (url.search || url.hash || raw.includes("#"))
    fail(`webhook URL "${raw}" for ${fn} must not have a query or fragment`);
  if (url.username || url.password) fail(`webhook URL "${raw}" for ${fn} must not carry user info`);
  url.pathname = withPathSecret(url.pathname, o.pathSecret);
  return url.toString();
}

/** The endpoint path with the secret as its last segment: /x -> /x/<secret>, / -> /<secret>. */
function withPathSecret(path: string, secret: string | undefined): string {
  return secret === undefined ? path : `${path.replace(/\/+$/, "")}/${secret}`;
}

export interface ServiceClientConfig {
  service: { namespace: string; name: string; port: number; path: string };
  caBundle?: string;
}
export interface UrlClientConfig {
  url: string;
  caBundle?: string;
}

export function webhookClientConfig(
  o: ResolvedOptions,
  fn: DeployedFunction,
): ServiceClientConfig | UrlClientConfig {
  const ca = o.caBundle ? { caBundle: o.caBundle } : {};
  if (o.webhookMode === "url") return { url: webhookUrl(o, fn), ...ca };
  const s = o.webhookService;
  const name = fillTemplate(s.name, o, fn);
  if (!DNS1035_LABEL.test(name) || name.length > 63)
    fail(`webhook Service name "${name}" is not a valid Service name`);
  const path = fillTemplate(s.path, o, fn);
  if (!path.startsWith("/")) fail(`webhookService.path "${path}" must start with /`);
  return {
    service: { namespace: s.namespace, name, port: s.port, path: withPathSecret(path, o.pathSecret) },
    ...ca,
  };
}
