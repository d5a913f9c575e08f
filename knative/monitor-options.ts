// The optional Prometheus Operator monitors (knative/monitors.ts): which kinds a platform can have, and their
// extra labels (what a Prometheus's podMonitorSelector or serviceMonitorSelector matches), checked.

import { isLabelKey, isLabelValue } from "../shared/base/index.js";
import type { DeploymentOptions, Platform, ResolvedOptions } from "./options.js";
import { rejectOption } from "./options.js";

function resolveMonitorLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelKey(key)) rejectOption(`monitorLabels: "${key}" is not a valid label name`);
    if (!isLabelValue(value)) {
      rejectOption(`monitorLabels: "${value}" (for ${key}) is not a valid label value`);
    }
  }
  return { ...labels };
}

/**
 * OpenFaaS has none: its template sends every path to the handler, so no function serves /metrics there. Knative
 * has no ServiceMonitor: the Services Knative makes for a revision lead to queue-proxy, not to the container.
 */
export function resolveMonitors(
  options: DeploymentOptions,
  platform: Platform,
): Pick<ResolvedOptions, "monitors"> {
  const pod = options.podMonitor ?? false;
  const service = options.serviceMonitor ?? false;
  const labels = options.monitorLabels ?? {};
  if (!pod && !service) {
    if (Object.keys(labels).length > 0) rejectOption("monitorLabels needs podMonitor or serviceMonitor");
    return { monitors: { pod, service, labels: {} } };
  }
  if (platform === "openfaas") {
    rejectOption(
      "podMonitor and serviceMonitor need Knative or plain Kubernetes: on OpenFaaS the template sends every path to the handler, so no function serves /metrics (the gateway's own metrics, gateway_function_invocation_total and gateway_functions_seconds, are scraped by OpenFaaS's Prometheus)",
    );
  }
  if (service && options.clusterPlatform !== "kubernetes") {
    rejectOption(
      "serviceMonitor needs clusterPlatform kubernetes: on Knative the Services lead to queue-proxy, not to the functions' /metrics; use podMonitor",
    );
  }
  return { monitors: { pod, service, labels: resolveMonitorLabels(labels) } };
}
