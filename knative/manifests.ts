// Deployment manifests as plain objects: Knative Services, the MutatingWebhookConfiguration that points the
// API server at the functions, and their RBAC; rendered to YAML for `kubectl apply -f`. Pure builders.
//
// The shapes are typed with the kubernetes-models interfaces (generated from the Kubernetes OpenAPI schema
// and from Knative's CRD schema), so a misspelt field is a compile error; test/unit/manifests.test.ts also
// validates every generated object against the same schemas at run time.

import type { IService as KnativeService } from "@kubernetes-models/knative/serving.knative.dev/v1/Service";
import type { IMutatingWebhook } from "kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhook";
import type { IMutatingWebhookConfiguration } from "kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration";
import type { ISecret } from "kubernetes-models/v1/Secret";
import { stringify } from "yaml";
import { SIMULATION_LABEL_KEY, TEARDOWN_CONTROLLER_USERS, VIRTUAL_LABEL_KEY } from "../shared/base/index.js";
import { resolveOptions } from "./deployment-options.js";
import { CONTAINER_PORT, functionContainer, pathSecretRevisionAnnotation } from "./function-container.js";
import { buildGatewayRoutes } from "./gateway-route.js";
import { buildMonitors } from "./monitors.js";
import { buildStack } from "./openfaas-stack.js";
import {
  type DeployedFunction,
  type DeploymentOptions,
  DeploymentOptionsError,
  type ResolvedOptions,
} from "./options.js";
import { PATH_SECRET_KEY, pathSecretName } from "./path-secret-options.js";
import { buildPodCreatePolicy, celString } from "./pod-create-policy.js";
import { buildPodReadObjects } from "./pod-reads.js";
import { buildFunctionRbac, type RbacObject, serviceAccountName } from "./rbac.js";
import { KNATIVE_DEFAULT_ACTIVATION_SCALE } from "./scale-bounds.js";
import { functionResourceName, webhookClientConfig } from "./webhook-endpoints.js";
import { buildDeployment, buildFunctionService, tlsSecretName } from "./workloads.js";

export { isDeploymentTarget } from "./deployment-options.js";
export {
  DEPLOYED_FUNCTIONS,
  DEPLOYMENT_TARGETS,
  type DeployedFunction,
  type DeploymentOptions,
  DeploymentOptionsError,
  type DeploymentTarget,
} from "./options.js";
export { type RbacObject, serviceAccountName } from "./rbac.js";
export { CONTAINER_PORT };

/** Any manifest we emit: plain JSON-compatible data. */
export type Manifest = { apiVersion: string; kind: string; metadata?: { name?: string } } & Record<
  string,
  unknown
>;

/** Knative's revision request timeout: at least the longest webhook timeout (the API server's max is 30 s). */
const REVISION_TIMEOUT_SECONDS = 30;
const WEBHOOK_DOMAIN = "simkube.io";

/**
 * Concurrency per replica, set from memory (npm run bench:memory, docs/safety.md, "Memory per in-flight review"): a
 * review can be ~3 MiB, and 32 such CREATEs at once peaked at 521 MiB RSS (100 at once: 1,094 MiB). A trace
 * load peaks at ~4x its file, and mutate-create serving every Simulation may load one during a burst: 32
 * CREATEs while a 64 MiB trace (the cap, TRACE_MAX_MIB) reloaded, its old copy held, peaked at 720 and 744
 * MiB in two runs (96 MiB: 890, 128 MiB: 1,053). So the 1Gi limit (the default resources,
 * deployment-options.ts) keeps over a quarter in reserve at the cap; 768Mi would fit a 32 MiB cap (555 MiB). DELETE reviews carry the same pod, so
 * the same concurrency holds for reschedule-delete (which loads no trace). `target` is the autoscaler's soft goal:
 * reschedule-delete scales out earlier, because a teardown sends bursts and each review holds up a pod delete.
 */
export const CONCURRENCY: Record<DeployedFunction, { hard: number; target: number }> = {
  "mutate-create": { hard: 32, target: 24 },
  "reschedule-delete": { hard: 32, target: 16 },
};

function commonLabels(o: ResolvedOptions, component?: string): Record<string, string> {
  const labels: Record<string, string> = {
    "app.kubernetes.io/name": "simkube-fn",
    "app.kubernetes.io/instance": o.name,
    "app.kubernetes.io/part-of": "simkube",
  };
  if (o.simName) labels[SIMULATION_LABEL_KEY] = o.simName;
  if (component) labels["app.kubernetes.io/component"] = component;
  return labels;
}

export { PATH_SECRET_KEY, pathSecretName } from "./path-secret-options.js";

/** The Secret with the path secret; none when there is no secret, or it lives in an existing Secret. */
export function buildPathSecret(o: ResolvedOptions): ISecret | undefined {
  if (o.pathSecret === undefined || o.pathSecretFrom !== undefined) return undefined;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: pathSecretName(o), namespace: o.namespace, labels: commonLabels(o) },
    type: "Opaque",
    stringData: { [PATH_SECRET_KEY]: o.pathSecret },
  };
}

/**
 * activation-scale only above Knative's own default of 1: its webhook refuses the annotation below 2
 * (knative/scale-bounds.ts has the rule and fits the value between min-scale and max-scale).
 */
function activationAnnotation(o: ResolvedOptions, fn: DeployedFunction): Record<string, string> {
  const scale = o.tuning[fn].activationScale;
  if (scale === KNATIVE_DEFAULT_ACTIVATION_SCALE) return {};
  return { "autoscaling.knative.dev/activation-scale": String(scale) };
}

/** The revision's scaling annotations. */
function revisionAnnotations(o: ResolvedOptions, fn: DeployedFunction): Record<string, string> {
  return {
    // 0 = scale to zero when idle; then a cold start (schedule, image pull, start, trace load) must
    // fit inside the webhook timeout. minScale >= 1 trades an always-on pod for no cold starts.
    "autoscaling.knative.dev/min-scale": String(o.tuning[fn].minScale),
    "autoscaling.knative.dev/max-scale": String(o.maxScale[fn]),
    "autoscaling.knative.dev/target": String(CONCURRENCY[fn].target),
    // Replicas started when waking from zero, and how long they outlive the last request
    // (knative/tuning.ts says why each function gets its values).
    ...activationAnnotation(o, fn),
    "autoscaling.knative.dev/scale-down-delay": o.tuning[fn].scaleDownDelay,
    ...pathSecretRevisionAnnotation(o),
  };
}

export function buildService(o: ResolvedOptions, fn: DeployedFunction): KnativeService {
  const name = functionResourceName(o.name, fn);
  const labels = commonLabels(o, fn);
  // Cluster-local keeps the Service off the external gateway; url mode needs it there, because the API
  // server cannot resolve cluster DNS (kubernetes/api admissionregistration/v1/types.go,
  // WebhookClientConfig.url) and so calls an external https URL.
  const serviceLabels = o.clusterLocal
    ? { ...labels, "networking.knative.dev/visibility": "cluster-local" }
    : labels;
  return {
    apiVersion: "serving.knative.dev/v1",
    kind: "Service",
    metadata: { name, namespace: o.namespace, labels: serviceLabels },
    spec: {
      template: {
        metadata: { labels, annotations: revisionAnnotations(o, fn) },
        spec: {
          serviceAccountName: serviceAccountName(o, fn),
          containerConcurrency: CONCURRENCY[fn].hard,
          timeoutSeconds: REVISION_TIMEOUT_SECONDS,
          containers: [functionContainer(o, fn)],
        },
      },
    },
  };
}

/** One Knative Service per deployed function (reschedule-delete only with rescheduleInterruptedBarePods). */
export function buildServices(options: DeploymentOptions): KnativeService[] {
  const o = resolveOptions(options);
  return o.functions.map((fn) => buildService(o, fn));
}

const DISRUPTION_TARGET_TRUE =
  "has(oldObject.status) && has(oldObject.status.conditions) && oldObject.status.conditions.exists(c, has(c.type) && c.type == 'DisruptionTarget' && has(c.status) && c.status == 'True')";
const FINAL_PHASE_ONLY_WHEN_DISRUPTED = `!has(oldObject.metadata.deletionTimestamp) || (${DISRUPTION_TARGET_TRUE})`;

/** True except for a first-phase delete by one of `users` (`has` on an absent key is false, not an error). */
function notFirstPhaseDeleteBy(users: readonly string[]): string {
  return `has(oldObject.metadata.deletionTimestamp) || !(request.userInfo.username in [${users.map(celString).join(", ")}])`;
}

/** Exported for tests: the match conditions each webhook carries. */
export function matchConditionsFor(
  o: ResolvedOptions,
  fn: DeployedFunction,
): { name: string; expression: string }[] {
  const prefix = celString(`${o.virtualNsPrefix}-`);
  if (fn === "mutate-create") {
    // CREATE and UPDATE always carry `object`; only simulated pods (virtual namespaces) are sent.
    return [
      { name: "virtual-namespaces-only", expression: `object.metadata.namespace.startsWith(${prefix})` },
    ];
  }
  // DELETE: `object` is null and `oldObject` is the pod (kubernetes/api admissionregistration/v1/types.go).
  const conditions = [
    { name: "virtual-namespaces-only", expression: `oldObject.metadata.namespace.startsWith(${prefix})` },
  ];
  if (o.driverUsers.length > 0) {
    // The driver's own deletes replay production and are never interruptions: filtering them here saves an
    // HTTP call (and maybe a cold start) per replayed delete. The handler checks DRIVER_USERS again, and, as
    // it does, only in the first phase: the driver's grace-0 delete of a pod already evicted is still one.
    conditions.push({ name: "not-driver-deletes", expression: notFirstPhaseDeleteBy(o.driverUsers) });
  }
  // Teardown: the garbage collector's and the namespace controller's first-phase deletes are never
  // interruptions (the handler says so too), and the namespace controller's DeleteCollection sends its pods
  // through the webhook one at a time. Their final-phase reviews are left to the next condition.
  conditions.push({
    name: "not-teardown-controller-deletes",
    expression: notFirstPhaseDeleteBy(TEARDOWN_CONTROLLER_USERS),
  });
  // Final-phase reviews (KWOK's or the kubelet's grace-0 delete, the namespace controller's repeated
  // DeleteCollection over terminating pods) interrupt a pod only when it carries DisruptionTarget=True (an
  // eviction shows no review of its own): judgeDeletion skips every other one, so they are not sent. At
  // teardown that is every review left, two or more per pod.
  conditions.push({ name: "final-phase-only-when-disrupted", expression: FINAL_PHASE_ONLY_WHEN_DISRUPTED });
  return conditions;
}

/** Namespaces no webhook may ever see: the functions' own (a scale-from-zero would wait on itself) and the platform's. */
export function excludedNamespaces(o: ResolvedOptions): string[] {
  const ingress = o.ingress === "traefik" ? o.traefikNamespace : o.kourierNamespace;
  const platform = o.platform === "knative" ? ["knative-serving", ingress] : ["openfaas"];
  return [...new Set([o.namespace, ...platform, o.certManagerNamespace, "kube-system"])];
}

/**
 * Only namespaces SimKube labels virtual, never the excluded ones: scoping that holds even on an API server
 * that ignores matchConditions. kubernetes.io/metadata.name is set by the API server on every namespace.
 */
export function namespaceSelectorFor(o: ResolvedOptions) {
  return {
    matchLabels: { [VIRTUAL_LABEL_KEY]: "true" },
    matchExpressions: [
      { key: "kubernetes.io/metadata.name", operator: "NotIn", values: excludedNamespaces(o) },
    ],
  };
}

type WebhookRule = NonNullable<IMutatingWebhook["rules"]>[number];

function podRule(operations: WebhookRule["operations"], resources: string[]): WebhookRule {
  return { apiGroups: [""], apiVersions: ["v1"], operations, resources, scope: "Namespaced" };
}

function buildWebhook(o: ResolvedOptions, fn: DeployedFunction): IMutatingWebhook {
  const name = `${fn}.${o.name}.${WEBHOOK_DOMAIN}`;
  const clientConfig = webhookClientConfig(o, fn);
  const matchConditions = matchConditionsFor(o, fn);
  const namespaceSelector = namespaceSelectorFor(o);
  // Never (SimKube's default): a second call would spend another sequence number and another round trip;
  // later webhooks do not touch what we set (node selector, tolerations, lifecycle annotations).
  const reinvocationPolicy = "Never";
  if (fn === "mutate-create") {
    return {
      name,
      admissionReviewVersions: ["v1"],
      clientConfig,
      // UPDATE too: KWOK's Pending -> Running status write is when lifecycle annotations land.
      rules: [podRule(["CREATE", "UPDATE"], ["pods", "pods/status"])],
      matchPolicy: "Equivalent",
      namespaceSelector,
      matchConditions,
      // Fail closed: a simulated pod that could not be mutated must not reach a real node.
      failurePolicy: "Fail",
      // The cluster sequence store writes a ConfigMap per new pod: that is a side effect, to be skipped on
      // dry-run (the API server calls None and NoneOnDryRun webhooks alike; this declares what we do).
      sideEffects: "NoneOnDryRun",
      // Cold start + owner lookups + sequence reservation; the API server's maximum by default.
      timeoutSeconds: o.tuning[fn].timeoutSeconds,
      reinvocationPolicy,
    };
  }
  return {
    name,
    admissionReviewVersions: ["v1"],
    clientConfig,
    rules: [podRule(["DELETE"], ["pods"])],
    matchPolicy: "Equivalent",
    namespaceSelector,
    matchConditions,
    // Never block a delete: an unreachable, slow or failing function lets it through.
    failurePolicy: "Ignore",
    // Creates clone pods; skipped when request.dryRun is true.
    sideEffects: "NoneOnDryRun",
    // Short: every pod delete waits for this call. A cold start longer than this is ignored (the delete
    // proceeds, a reschedule may be missed); set minScale >= 1 when that matters.
    timeoutSeconds: o.tuning[fn].timeoutSeconds,
    reinvocationPolicy,
  };
}

export function buildWebhookConfigurationFrom(
  o: ResolvedOptions,
  name: string = o.name,
): IMutatingWebhookConfiguration {
  const annotations = o.caInjectFrom ? { "cert-manager.io/inject-ca-from": o.caInjectFrom } : undefined;
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name, labels: commonLabels(o), ...(annotations ? { annotations } : {}) },
    webhooks: o.functions.map((fn) => buildWebhook(o, fn)),
  };
}

export function buildWebhookConfiguration(options: DeploymentOptions): IMutatingWebhookConfiguration {
  return buildWebhookConfigurationFrom(resolveOptions(options));
}

/** The name SimKube's controller gives a Simulation's webhook configuration (sk-ctrl objects.rs). */
export function simulationWebhookName(simName: string): string {
  return `sk-${simName}-mutatepods`;
}

/**
 * The per-simulation configuration stock SimKube adopts: named sk-<sim>-mutatepods, so its controller finds
 * it instead of creating its own (pointing at its driver). The controller starts the driver only once the
 * FIRST webhook has a non-empty caBundle, so one must be given or injected; without either this refuses.
 */
export function buildSimulationWebhookConfiguration(
  options: DeploymentOptions,
): IMutatingWebhookConfiguration {
  const o = resolveOptions(options);
  if (!o.caBundle && !o.caInjectFrom) {
    throw new DeploymentOptionsError(
      "the per-simulation webhook needs a caBundle on its first webhook (SimKube's controller waits for one before it starts the driver): pass --ca-bundle FILE (for a public CA, its root certificate) or --ca-inject-from NAMESPACE/CERTIFICATE",
    );
  }
  if (!o.simName) {
    throw new DeploymentOptionsError(
      "the per-simulation webhook needs the Simulation's name: pass --sim-name NAME",
    );
  }
  return buildWebhookConfigurationFrom(o, simulationWebhookName(o.simName));
}

/** Per function: ServiceAccount, ClusterRole and binding, and (mutate-create) the sequence store's Role. */
export function buildRbacFrom(o: ResolvedOptions): RbacObject[] {
  return o.functions.flatMap((fn) => buildFunctionRbac(o, fn, commonLabels(o, fn)));
}

export function buildRbac(options: DeploymentOptions): RbacObject[] {
  return buildRbacFrom(resolveOptions(options));
}

/**
 * Everything `kubectl apply -f` needs, in apply order: the pod-create policy, RBAC, the path secret, the
 * functions (Knative Services, or Deployments and Services on plain Kubernetes; OpenFaaS functions come from
 * stack.yml), their Prometheus monitors when asked for, the route to them (kind/k3s), and last
 * the webhook configuration, so the API server is pointed at the functions only after they exist.
 */
export function buildAllManifests(options: DeploymentOptions): Manifest[] {
  return buildAllManifestsFrom(resolveOptions(options));
}

/** buildAllManifests from resolved options (knative/chart renders them with placeholders). */
export function buildAllManifestsFrom(o: ResolvedOptions): Manifest[] {
  // The policy first: no function account may create a pod before the guard on those creates is in place.
  const objects: object[] = [
    ...buildPodCreatePolicy(o, commonLabels(o)),
    // The fence on pod-read bindings before the RBAC that lets reschedule-delete create them.
    ...buildPodReadObjects(o, commonLabels(o)),
    ...buildRbacFrom(o),
  ];
  const secret = buildPathSecret(o);
  if (secret) objects.push(secret);
  if (o.clusterPlatform === "kubernetes") {
    for (const fn of o.functions) {
      objects.push(
        buildDeployment(o, fn, commonLabels(o, fn)),
        buildFunctionService(o, fn, commonLabels(o, fn)),
      );
    }
  } else if (o.platform === "knative") for (const fn of o.functions) objects.push(buildService(o, fn));
  objects.push(...buildMonitors(o, (fn) => commonLabels(o, fn)));
  objects.push(...buildGatewayRoutes(o, commonLabels(o)));
  if (o.webhookConfiguration) objects.push(buildWebhookConfigurationFrom(o));
  return objects as Manifest[];
}

/** Multi-document YAML; every annotation value is a string ("0", not 0), as the API requires. */
export function renderManifests(objects: readonly object[]): string {
  return objects
    .map((object) => stringify(object, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join("---\n");
}

function trustNote(o: ResolvedOptions): string[] {
  if (o.caBundle) return ["# The API server trusts the functions' certificate through the caBundle given."];
  if (o.caInjectFrom) {
    return [
      `# cert-manager's cainjector fills every webhook's caBundle from ${o.caInjectFrom} (cert-manager must be installed).`,
    ];
  }
  return [
    "# No caBundle: the functions' certificate must be from a CA in the API server's system trust roots.",
  ];
}

function header(o: ResolvedOptions, what: string): string {
  const platform = o.clusterPlatform ? ` --platform ${o.clusterPlatform}` : ` --target ${o.target}`;
  const serves = o.simName ? `simulation ${o.simName}` : "every simulation";
  const lines = [`# Generated by simkube-fn manifests${platform} (${what}, ${serves}).`];
  if (!o.simName && o.target !== "openfaas-stack") {
    lines.push(
      "# No webhook configuration: per simulation, render and create one with",
      "# simkube-fn manifests webhook --sim-name NAME (same flags as this deployment).",
    );
  }
  if (o.target === "openfaas-stack") {
    lines.push(
      "# Save as stack.yml at the repository root; npm run bundle:openfaas; faas-cli up -f stack.yml",
    );
    if (o.openfaasEdition === "ce") {
      lines.push(
        "# OpenFaaS Community Edition: no scale to zero, at most 5 replicas, functions run as the namespace's default account, public images only.",
      );
    }
    return `${lines.join("\n")}\n`;
  }
  lines.push(`# Apply with: kubectl create namespace ${o.namespace}; kubectl apply -f <this file>`);
  if (o.pathSecretFrom !== undefined) {
    lines.push(
      `# The functions read their path secret from the existing Secret ${o.namespace}/${o.pathSecretFrom} (key ${PATH_SECRET_KEY}); this output holds no Secret.`,
    );
    if (o.pathSecret !== undefined)
      lines.push("# The webhook paths end in that secret: keep this output private.");
  } else if (o.pathSecret !== undefined) {
    lines.push(
      `# The webhook paths end in this deployment's path secret (also in Secret ${o.namespace}/${pathSecretName(o)}):`,
      "# keep this output private. Re-rendering without --path-secret makes a new one; apply the whole output.",
    );
  }
  if (o.webhookMode === "service" && o.clusterPlatform === undefined) {
    lines.push(
      "# service mode: provide the ClusterIP Service(s) named in clientConfig.service, terminating TLS with a",
      "# certificate for <service>.<namespace>.svc, and set caBundle (or caInjectFrom for cert-manager).",
    );
  }
  if (o.clusterPlatform === "kubernetes") {
    for (const fn of o.functions) {
      const service = `${functionResourceName(o.name, fn)}.${o.namespace}.svc`;
      lines.push(
        `# First: kubectl -n ${o.namespace} create secret tls ${tlsSecretName(o, fn)} --cert CERT --key KEY (a certificate for ${service} from the --ca-bundle CA)`,
      );
    }
  }
  if (o.monitors.pod || o.monitors.service) {
    lines.push(
      "# The PodMonitor/ServiceMonitor objects need the Prometheus Operator's monitoring.coreos.com CRDs.",
    );
  }
  lines.push(...trustNote(o));
  return `${lines.join("\n")}\n`;
}

/**
 * The one entry the CLI calls for a deployment: `simkube-fn manifests --platform ...` or `--target ...`.
 * knative and openfaas give multi-document YAML for kubectl; openfaas-stack gives stack.yml for faas-cli.
 * Throws DeploymentOptionsError with one clear line for bad or missing options.
 */
export function renderDeployment(options: DeploymentOptions): string {
  const o = resolveOptions(options);
  if (o.target === "openfaas-stack") return header(o, "stack.yml") + renderManifests([buildStack(options)]);
  return header(o, "deployment") + renderManifests(buildAllManifests(options));
}

/** `simkube-fn manifests webhook`: only the per-simulation configuration SimKube's controller adopts. */
export function renderSimulationWebhook(options: DeploymentOptions): string {
  const config = buildSimulationWebhookConfiguration(options);
  const o = resolveOptions(options);
  const name = config.metadata?.name ?? "";
  const platform = o.clusterPlatform ? ` --platform ${o.clusterPlatform}` : ` --target ${o.target}`;
  const lines = [
    `# Generated by simkube-fn manifests webhook${platform} (per-simulation webhook ${name}).`,
    ...trustNote(o),
    "# Its webhook paths end in the deployment's path secret: keep this output private.",
    `# Create it BEFORE \`skctl run ${o.simName}\`, with kubectl create (not apply): SimKube's controller then adopts it`,
    "# instead of creating its own, and starts the driver once the first webhook's caBundle is non-empty.",
    `# Remove it after the simulation: kubectl delete mutatingwebhookconfiguration ${name}`,
  ];
  return `${lines.join("\n")}\n${renderManifests([config])}`;
}
