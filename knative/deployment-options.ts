// resolveOptions: every deployment option checked and defaulted, in a fixed order so the first problem reported
// is always the same one. The option types are options.ts, the defaults defaults.ts, the path secret's rules
// path-secret-options.ts and the webhook addresses webhook-endpoints.ts.
// Pure: plain values in, plain values out; bad options throw a DeploymentOptionsError with one clear line.

import {
  DEFAULT_DRIVER_USERS,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isLogFormat,
  isLogLevel,
  LOG_FORMATS,
  LOG_LEVELS,
} from "../shared/base/index.js";
import { ContainerCheckError, checkImage, checkResources } from "./container-checks.js";
import {
  DEFAULT_BASE_NAME,
  DEFAULT_IMAGE,
  DEFAULT_KNATIVE_NAMESPACE,
  DEFAULT_MAX_SCALE,
  DEFAULT_OPENFAAS_IMAGE,
  DEFAULT_OPENFAAS_NAMESPACE,
  DEFAULT_VIRTUAL_NS_PREFIX,
} from "./defaults.js";
import { resolveMonitors } from "./monitor-options.js";
import {
  DEPLOYED_FUNCTIONS,
  DEPLOYMENT_TARGETS,
  type DeployedFunction,
  type DeploymentOptions,
  type DeploymentTarget,
  OPENFAAS_CE_MAX_REPLICAS,
  OPENFAAS_EDITIONS,
  type OpenfaasEdition,
  type Platform,
  POD_READS,
  type ResolvedOptions,
  rejectOption,
  type WebhookServiceOptions,
} from "./options.js";
import { checkPathSecretFrom, checkPathSecretValue, resolvePathSecretFrom } from "./path-secret-options.js";
import {
  applyClusterPlatform,
  DEFAULT_CERT_MANAGER_NAMESPACE,
  DEFAULT_KOURIER_NAMESPACE,
  DEFAULT_TRAEFIK_NAMESPACE,
  defaultCaInjectFrom,
  PlatformError,
  parseTraefikInternalService,
} from "./platforms.js";
import { type BoundSources, checkMinMax, fitActivationScale } from "./scale-bounds.js";
import { type FunctionTuning, type ResolvedTuning, resolveTuning, TuningError } from "./tuning.js";
import { functionResourceName, webhookClientConfig } from "./webhook-endpoints.js";

// Knative names the first revision <service>-00001 and revision names must be DNS-1035 labels (<= 63).
const KNATIVE_REVISION_SUFFIX = "-00001".length;

function checkScale(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 0)
    rejectOption(`${option} must be a whole number >= 0, got ${value}`);
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
      rejectOption(err.message);
    }
    throw err;
  }
}

function resolveEdition(options: DeploymentOptions): OpenfaasEdition {
  const edition = options.openfaasEdition ?? "ce";
  if (!(OPENFAAS_EDITIONS as readonly string[]).includes(edition)) {
    rejectOption(`openfaasEdition must be ce or pro, got "${String(edition)}"`);
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
      rejectOption(
        `OpenFaaS Community Edition allows at most ${OPENFAAS_CE_MAX_REPLICAS} replicas per function (${fn}: min ${minScale}, max ${maxScale[fn]}); use --openfaas-edition pro or a smaller scale`,
      );
    }
  }
  return maxScale;
}

function resolveTarget(options: DeploymentOptions): Pick<ResolvedOptions, "target" | "platform"> {
  const target = options.target ?? "knative";
  if (!isDeploymentTarget(target))
    rejectOption(`target must be one of ${DEPLOYMENT_TARGETS.join(", ")}, got "${target}"`);
  return { target, platform: platformOf(target) };
}

/** Optional: without a Simulation the deployment serves every one (SimulationRoot owners decide). */
function resolveSimName(options: DeploymentOptions): string | undefined {
  const simName = options.simName?.trim() || undefined;
  if (simName !== undefined && simName.length > 63)
    rejectOption(`simName "${simName}" is longer than 63 characters (it is used as a label value)`);
  return simName;
}

function resolveNamespaces(
  options: DeploymentOptions,
  platform: ResolvedOptions["platform"],
): Pick<ResolvedOptions, "namespace" | "virtualNsPrefix"> {
  const namespace =
    options.namespace ?? (platform === "knative" ? DEFAULT_KNATIVE_NAMESPACE : DEFAULT_OPENFAAS_NAMESPACE);
  if (!isDns1123Label(namespace)) {
    rejectOption(`namespace "${namespace}" is not a valid namespace name (DNS-1123 label)`);
  }
  const virtualNsPrefix = options.virtualNsPrefix ?? DEFAULT_VIRTUAL_NS_PREFIX;
  if (!isDns1123Label(virtualNsPrefix))
    rejectOption(`virtualNsPrefix "${virtualNsPrefix}" is not a DNS-1123 label`);
  // The functions' own pods must never pass through mutate-create: a scale-from-zero would wait on itself.
  if (namespace.startsWith(`${virtualNsPrefix}-`)) {
    rejectOption(`namespace "${namespace}" starts with the virtual namespace prefix "${virtualNsPrefix}-"`);
  }
  return { namespace, virtualNsPrefix };
}

/**
 * The base name, and which functions are deployed: reschedule-delete unless rescheduling is turned off
 * (--no-reschedule). SimKube's controller adds the DELETE rule per Simulation from its spec; a rendering cannot
 * read that spec, so it registers reschedule-delete, which reads it per review (docs/deploying.md).
 */
function resolveFunctions(
  options: DeploymentOptions,
): Pick<ResolvedOptions, "name" | "reschedule" | "functions"> {
  const name = options.name ?? DEFAULT_BASE_NAME;
  const reschedule = options.rescheduleInterruptedBarePods ?? true;
  const functions: DeployedFunction[] = reschedule ? [...DEPLOYED_FUNCTIONS] : ["mutate-create"];
  for (const fn of DEPLOYED_FUNCTIONS) {
    const resourceName = functionResourceName(name, fn);
    if (!isDns1035Label(resourceName) || resourceName.length + KNATIVE_REVISION_SUFFIX > 63) {
      rejectOption(
        `name "${name}" gives "${resourceName}", which must be a DNS-1035 label of at most ${63 - KNATIVE_REVISION_SUFFIX} characters`,
      );
    }
  }
  return { name, reschedule, functions };
}

/** The functions' own settings: driver users, log level, sequence store, where pods are read. */
function resolveRuntime(
  options: DeploymentOptions,
): Pick<ResolvedOptions, "driverUsers" | "logLevel" | "logFormat" | "sequenceStore" | "podReads"> {
  const driverUsers = [...(options.driverUsers ?? DEFAULT_DRIVER_USERS)].map((u) => u.trim()).filter(Boolean);
  for (const user of driverUsers) {
    if (user.includes(","))
      rejectOption(`driver user "${user}" contains a comma (DRIVER_USERS is comma-separated)`);
  }
  const logLevel = options.logLevel ?? "info";
  if (!isLogLevel(logLevel))
    rejectOption(`logLevel must be one of ${LOG_LEVELS.join(", ")}, got "${logLevel}"`);
  const logFormat = options.logFormat;
  if (logFormat !== undefined && !isLogFormat(logFormat))
    rejectOption(`logFormat must be one of ${LOG_FORMATS.join(", ")}, got "${logFormat}"`);
  const sequenceStore = options.sequenceStore ?? "cluster";
  if (sequenceStore !== "cluster" && sequenceStore !== "memory") {
    rejectOption(`sequenceStore must be "cluster" or "memory", got "${String(sequenceStore)}"`);
  }
  const podReads = options.podReads ?? "cluster";
  if (!POD_READS.includes(podReads)) {
    rejectOption(`podReads must be one of ${POD_READS.join(", ")}, got "${String(podReads)}"`);
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
    rejectOption(`webhookMode must be "url" or "service", got "${String(webhookMode)}"`);
  }
  const service = options.webhookService ?? {};
  const webhookService: Required<WebhookServiceOptions> = {
    namespace: service.namespace ?? namespace,
    name: service.name ?? "{name}-webhook",
    port: service.port ?? 443,
    path: service.path ?? (platform === "knative" ? "/" : "/function/{name}"),
  };
  if (!Number.isInteger(webhookService.port) || webhookService.port < 1 || webhookService.port > 65535) {
    rejectOption(`webhookService.port must be a port number, got ${webhookService.port}`);
  }
  checkPathSecretValue(options.pathSecret, webhookMode);
  return { webhookMode, webhookService };
}

/** Replica bounds and per-function tuning, within what the chosen OpenFaaS edition allows. */
function resolveScaling(
  options: DeploymentOptions,
  platform: ResolvedOptions["platform"],
): Pick<ResolvedOptions, "openfaasEdition" | "tuning" | "maxScale" | "replicas"> {
  if (options.minScale !== undefined) checkScale(options.minScale, "minScale");
  const openfaasEdition = resolveEdition(options);
  const tuning = resolveAllTuning(options);
  const ce = platform === "openfaas" && openfaasEdition === "ce";
  const maxScale = resolveMaxScale(options, platform, ce, tuning);
  const replicas = {} as Record<DeployedFunction, number>;
  for (const fn of DEPLOYED_FUNCTIONS) replicas[fn] = Math.max(1, tuning[fn].minScale);
  return { openfaasEdition, tuning, maxScale, replicas };
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
    if (!isDns1123Label(value)) rejectOption(`${what} "${value}" is not a valid namespace name`);
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
    rejectOption(
      "clientCaSecret needs clusterPlatform kubernetes: Knative and OpenFaaS terminate TLS before the function, so it never sees the API server's client certificate",
    );
  }
  if (!isDns1123Subdomain(secret)) rejectOption(`clientCaSecret "${secret}" is not a valid Secret name`);
  return secret;
}

/** CLIENT_CERT_SUBJECTS entries: each one name (no comma), and only where the client CA is checked. */
function resolveClientCertSubjects(options: DeploymentOptions): string[] {
  const subjects = (options.clientCertSubjects ?? []).map((s) => s.trim()).filter((s) => s !== "");
  if (subjects.length > 0 && options.clientCaSecret === undefined) {
    rejectOption("clientCertSubjects needs clientCaSecret: they narrow the certificates that CA signed");
  }
  for (const subject of subjects) {
    if (subject.includes(",")) rejectOption(`clientCertSubjects "${subject}" holds a comma: one name each`);
  }
  return subjects;
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
    clientCertSubjects: resolveClientCertSubjects(options),
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
    ...resolveMonitors(options, platform),
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
