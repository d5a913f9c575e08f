// The optional Prometheus Operator monitors for the functions' GET /metrics (docs/configuration.md, Metrics),
// one per function. /metrics is open like the probes (no path secret, no client certificate), so a scraper
// needs only the port, and on plain Kubernetes the server name and CA of the function's TLS. Pure builders.
// - Knative: a PodMonitor on the user container's port, which Knative renames "user-port" in the pod it
//   makes (knative.dev/serving pkg/apis/serving/v1/revision_helpers.go, UserPortName; revision/resources/
//   deploy.go, buildContainerPorts), plain http. Straight to the pod, not through queue-proxy: a scrape is no
//   request, so it neither wakes a function at zero nor keeps one up; a function at zero has no target.
// - kubernetes: a PodMonitor and/or a ServiceMonitor on port "https", checking the certificate as the API
//   server does: server name <name>-<function>.<namespace>.svc, CA from the --ca-bundle (a ConfigMap this
//   output holds, as Prometheus takes a CA only by reference) or, with cert-manager, the TLS Secret's ca.crt.

import type { IPodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import type { IServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { functionResourceName } from "./webhook-endpoints.js";
import { selectorOf, tlsSecretName } from "./workloads.js";

/** The user container's port name in the pods Knative makes, whatever the Service names it. */
export const KNATIVE_USER_PORT = "user-port";
const METRICS_PATH = "/metrics";
/** The key of the CA, in the ConfigMap made from --ca-bundle and in a cert-manager TLS Secret alike. */
const CA_KEY = "ca.crt";

/** The ConfigMap holding the --ca-bundle PEM for the monitors' tlsConfig. */
export function metricsCaName(o: ResolvedOptions): string {
  return `${o.name}-metrics-ca`;
}

function tlsEndpoint(o: ResolvedOptions, fn: DeployedFunction) {
  const ca = o.caBundle
    ? { configMap: { name: metricsCaName(o), key: CA_KEY } }
    : { secret: { name: tlsSecretName(o, fn), key: CA_KEY } };
  const serverName = `${functionResourceName(o.name, fn)}.${o.namespace}.svc`;
  return { port: "https", path: METRICS_PATH, scheme: "https" as const, tlsConfig: { ca, serverName } };
}

function metadataFor(o: ResolvedOptions, fn: DeployedFunction, labels: Record<string, string>) {
  return {
    name: functionResourceName(o.name, fn),
    namespace: o.namespace,
    labels: { ...labels, ...o.monitors.labels },
  };
}

export function buildPodMonitor(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): IPodMonitor {
  const endpoint =
    o.clusterPlatform === "kubernetes"
      ? tlsEndpoint(o, fn)
      : { port: KNATIVE_USER_PORT, path: METRICS_PATH, scheme: "http" as const };
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: metadataFor(o, fn, labels),
    spec: { selector: { matchLabels: selectorOf(o, fn) }, podMetricsEndpoints: [endpoint] },
  };
}

export function buildServiceMonitor(
  o: ResolvedOptions,
  fn: DeployedFunction,
  labels: Record<string, string>,
): IServiceMonitor {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "ServiceMonitor",
    metadata: metadataFor(o, fn, labels),
    spec: { selector: { matchLabels: selectorOf(o, fn) }, endpoints: [tlsEndpoint(o, fn)] },
  };
}

/** The --ca-bundle as a ConfigMap, when a monitor checks the functions' TLS with it. */
function buildMetricsCa(o: ResolvedOptions, labels: Record<string, string>): IConfigMap[] {
  if (o.clusterPlatform !== "kubernetes" || !o.caBundle) return [];
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: metricsCaName(o), namespace: o.namespace, labels },
      data: { [CA_KEY]: Buffer.from(o.caBundle, "base64").toString("utf8") },
    },
  ];
}

/** Every monitor asked for, and the CA they read; nothing when none is. */
export function buildMonitors(
  o: ResolvedOptions,
  labelsFor: (fn?: DeployedFunction) => Record<string, string>,
): (IPodMonitor | IServiceMonitor | IConfigMap)[] {
  if (!o.monitors.pod && !o.monitors.service) return [];
  return [
    ...buildMetricsCa(o, labelsFor()),
    ...o.functions.flatMap((fn) => [
      ...(o.monitors.pod ? [buildPodMonitor(o, fn, labelsFor(fn))] : []),
      ...(o.monitors.service ? [buildServiceMonitor(o, fn, labelsFor(fn))] : []),
    ]),
  ];
}
