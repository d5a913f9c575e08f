// The options a deployment is rendered from (Knative Services, OpenFaaS stack, webhook configuration, RBAC)
// and the same options resolved: types, the lists of allowed values, and the error a bad option becomes.
// A leaf: every other knative/ module may import it, it imports none of them but the tuning types.

import { FUNCTION_NAMES, type FunctionName } from "../shared/base/index.js";
import type { FunctionTuning, ResolvedTuning } from "./tuning.js";

export const INGRESSES = ["kourier", "traefik"] as const;
export type Ingress = (typeof INGRESSES)[number];

export const POD_READS = ["cluster", "virtual-namespaces"] as const;
export type PodReads = (typeof POD_READS)[number];

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
  /** Knative: the simkube-fn image (Dockerfile), default DEFAULT_IMAGE. OpenFaaS: the image faas-cli builds; may contain {function}; default DEFAULT_OPENFAAS_IMAGE (DEFAULT_IMAGE with the function added). */
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
  /**
   * Deploy reschedule-delete and register its DELETE webhook, which serves each Simulation's
   * spec.rescheduleInterruptedBarePods (it reads the Simulation per review). Default true; false
   * (--no-reschedule) serves no Simulation's, and mutate-create says so on a Simulation that asks.
   */
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
  /**
   * With clientCaSecret: the API server's identity, as CLIENT_CERT_SUBJECTS entries (`CN=name`, `DNS:name`,
   * `URI:uri`): of the certificates that CA signed, only one naming one of these is taken.
   */
  clientCertSubjects?: readonly string[];
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
  /**
   * A Prometheus Operator PodMonitor per function for its GET /metrics (Knative and plain Kubernetes; needs
   * the monitoring.coreos.com CRDs). Default false.
   */
  podMonitor?: boolean;
  /** A ServiceMonitor per function's ClusterIP Service (clusterPlatform kubernetes only). Default false. */
  serviceMonitor?: boolean;
  /** Extra labels on the monitors, e.g. what the Prometheus's podMonitorSelector/serviceMonitorSelector matches. */
  monitorLabels?: Readonly<Record<string, string>>;
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

/** Throws the error every bad option becomes. */
export function rejectOption(message: string): never {
  throw new DeploymentOptionsError(message);
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
  clientCertSubjects: string[];
  maxScale: Record<DeployedFunction, number>;
  /** Plain Kubernetes Deployments: min-scale replicas, at least one (no scale to zero without Knative). */
  replicas: Record<DeployedFunction, number>;
  clusterLocal: boolean;
  resources: ResourceOptions;
  extraRules: PolicyRuleInput[];
  gateway: string;
  openfaasLang: string;
  openfaasHandlerDir: string;
  scaleToZeroDuration: string;
  monitors: { pod: boolean; service: boolean; labels: Record<string, string> };
}
