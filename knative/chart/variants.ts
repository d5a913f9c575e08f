// One variant: the builders' objects for one combination of the switches, every value-like option a
// placeholder (placeholders.ts). The options go through resolveOptions like the CLI's, so a combination
// the CLI refuses is no variant; numbers and the values resolveOptions would refuse as placeholders are
// set on the resolved options afterwards. Helm's own labels are added to every object's metadata.

import { resolveOptions } from "../deployment-options.js";
import { buildAllManifestsFrom } from "../manifests.js";
import {
  type DeployedFunction,
  type DeploymentOptions,
  DeploymentOptionsError,
  type ResolvedOptions,
} from "../options.js";
import type { Assignment } from "./conditions.js";
import type { Json } from "./merge.js";
import { CA_BUNDLE, marker, N, P, WHOLE } from "./placeholders.js";

const on = (a: Assignment, name: string) => a[name] === "on";
const when = <T>(condition: boolean, value: T): T | undefined => (condition ? value : undefined);

function platformOptions(a: Assignment): Partial<DeploymentOptions> {
  const platform = a.platform as NonNullable<DeploymentOptions["clusterPlatform"]>;
  const gatewayRoute = platform === "kind" || platform === "k3s";
  return {
    clusterPlatform: platform,
    ...(gatewayRoute ? { ingress: a.ingress as "kourier" | "traefik" } : {}),
    ...(gatewayRoute && a.ingress === "traefik" ? { traefikNamespace: P.traefikNamespace.text } : {}),
    ...(platform === "managed" ? { domain: `${P.domain.text}.example` } : {}),
    ...(platform === "openfaas"
      ? { webhookGateway: `https://${P.gateway.text}`, openfaasEdition: a.edition as "ce" | "pro" }
      : {}),
  };
}

function optionsOf(a: Assignment): DeploymentOptions {
  return {
    ...platformOptions(a),
    name: P.name.text,
    namespace: on(a, "openfaasFn") ? "openfaas-fn" : P.namespace.text,
    simName: when(on(a, "sim"), P.simName.text),
    webhookConfiguration: on(a, "webhook"),
    rescheduleInterruptedBarePods: on(a, "reschedule"),
    pathSecret: when(on(a, "secretKnown"), P.pathSecret.text),
    pathSecretFrom: when(on(a, "existingSecret"), P.existingSecret.text),
    caBundle: when(on(a, "caBundle"), CA_BUNDLE),
    podMonitor: on(a, "podMonitor"),
    serviceMonitor: on(a, "serviceMonitor"),
    caInjectFrom: when(on(a, "caInjectFrom"), P.caInjectFrom.text),
    issuer: when(on(a, "issuer"), P.issuer.text),
    podReads: a.podReads as "cluster" | "virtual-namespaces",
    sequenceStore: a.sequenceStore as "cluster" | "memory",
    driverUsers: on(a, "driverUsers") ? [P.driverUsers.text] : [],
    virtualNsPrefix: P.virtualNsPrefix.text,
    kourierNamespace: P.kourierNamespace.text,
    certManagerNamespace: P.certManagerNamespace.text,
    clusterLocal: on(a, "clusterLocal"),
  };
}

const TUNING: Record<
  DeployedFunction,
  { min: number; max: number; act: number; timeout: number; replicas: number; delay: string; switch: string }
> = {
  "mutate-create": {
    min: N.minScaleCreate.value,
    max: N.maxScaleCreate.value,
    act: N.activationCreate.value,
    timeout: N.timeoutCreate.value,
    replicas: N.replicasCreate.value,
    delay: P.delayCreate.text,
    switch: "activationCreate",
  },
  "reschedule-delete": {
    min: N.minScaleDelete.value,
    max: N.maxScaleDelete.value,
    act: N.activationDelete.value,
    timeout: N.timeoutDelete.value,
    replicas: N.replicasDelete.value,
    delay: P.delayDelete.text,
    switch: "activationDelete",
  },
};

/** What resolveOptions checks or computes from a number or a free-form value: placeholders set afterwards. */
function withPlaceholders(o: ResolvedOptions, a: Assignment): ResolvedOptions {
  const tuning = { ...o.tuning };
  const maxScale = { ...o.maxScale };
  const replicas = { ...o.replicas };
  for (const fn of Object.keys(TUNING) as DeployedFunction[]) {
    const t = TUNING[fn];
    const activationScale = on(a, t.switch) ? t.act : 1;
    tuning[fn] = { minScale: t.min, timeoutSeconds: t.timeout, activationScale, scaleDownDelay: t.delay };
    maxScale[fn] = t.max;
    replicas[fn] = t.replicas;
  }
  return {
    ...o,
    tuning,
    maxScale,
    replicas,
    image: P.image.text,
    logLevel: P.logLevel.text,
    logFormat: when(on(a, "logFormat"), P.logFormat.text),
    tracePath: when(on(a, "tracePath"), P.tracePath.text),
    traceAllowedLocations: on(a, "traceLocations") ? [P.traceLocations.text] : [],
    resources: marker("resources") as unknown as ResolvedOptions["resources"],
    extraRules: [marker("ownerRules") as unknown as ResolvedOptions["extraRules"][number]],
    monitors: { ...o.monitors, labels: { [WHOLE.monitorLabels.marker]: "" } },
    traefikInternalService: { name: P.traefikService.text, port: N.traefikPort.value },
    ...(a.platform === "managed" ? { webhookUrlBase: `https://${P.domain.text}` } : {}),
  };
}

function helmLabels(object: Record<string, Json>): Json {
  const metadata = object.metadata as Record<string, Json>;
  const labels = {
    ...(metadata.labels as Record<string, Json>),
    "app.kubernetes.io/managed-by": P.releaseService.text,
    "helm.sh/chart": P.chart.text,
  };
  return { ...object, metadata: { ...metadata, labels } };
}

/** The objects of one variant (JSON, Helm's labels on), or undefined when the CLI refuses the combination. */
export function renderVariant(a: Assignment): Json[] | undefined {
  if (!on(a, "existingSecret") && !on(a, "secretKnown")) return undefined;
  let o: ResolvedOptions;
  try {
    o = resolveOptions(optionsOf(a));
  } catch (err) {
    // A refusal (the CLI's one-line error) means no such variant; anything else is a bug to see.
    if (err instanceof DeploymentOptionsError) return undefined;
    throw err;
  }
  const objects = buildAllManifestsFrom(withPlaceholders(o, a));
  // The namespace openfaas-fn is tried as itself (the gateway's URLs differ there), then named like any other.
  const json = JSON.stringify(objects).replaceAll('"openfaas-fn"', JSON.stringify(P.namespace.text));
  const withNamespace = json.replaceAll("openfaas-fn", P.namespace.text);
  return (JSON.parse(withNamespace) as Record<string, Json>[]).map(helmLabels);
}
