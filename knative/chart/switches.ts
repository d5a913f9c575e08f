// The chart values that change the shape of the objects (which objects, which fields), as switches the
// generator renders every combination of; each with the Helm test of its value. Value-like settings
// (names, images, numbers) are placeholders instead (placeholders.ts). Pure data.

import type { Switch } from "./conditions.js";

export const PLATFORMS = ["kind", "k3s", "managed", "kubernetes", "openfaas"] as const;

function oneOf(helmValue: string, all: readonly string[]) {
  return (values: readonly string[]) => {
    if (values.length === all.length) return "true";
    if (values.length === 1) return `eq ${helmValue} ${JSON.stringify(values[0])}`;
    return `has ${helmValue} (list ${values.map((v) => JSON.stringify(v)).join(" ")})`;
  };
}

/** A yes/no switch: "on" when `helm` is true. */
function onOff(name: string, helm: string): Switch {
  return {
    name,
    values: ["on", "off"],
    helm: (values) => {
      if (values.length === 2) return "true";
      return values[0] === "on" ? helm : `not (${helm})`;
    },
  };
}

function enumSwitch(name: string, helmValue: string, values: readonly string[]): Switch {
  return { name, values, helm: oneOf(helmValue, values) };
}

export const SWITCHES: readonly Switch[] = [
  enumSwitch("platform", ".Values.platform", PLATFORMS),
  enumSwitch("ingress", ".Values.ingress", ["kourier", "traefik"]),
  enumSwitch("edition", ".Values.openfaas.edition", ["ce", "pro"]),
  onOff("openfaasFn", `eq .Release.Namespace "openfaas-fn"`),
  onOff("reschedule", `include "simkube-fn.reschedule" .`),
  onOff("sim", ".Values.simName"),
  onOff("webhook", ".Values.webhook.enabled"),
  onOff("existingSecret", ".Values.pathSecret.existingSecret"),
  onOff("secretKnown", "$pathSecret"),
  onOff("caBundle", ".Values.caBundle"),
  onOff("caInjectFrom", ".Values.caInjectFrom"),
  onOff("issuer", ".Values.issuer"),
  enumSwitch("podReads", ".Values.podReads", ["cluster", "virtual-namespaces"]),
  enumSwitch("sequenceStore", ".Values.sequenceStore", ["cluster", "memory"]),
  onOff("tracePath", "trim .Values.tracePath"),
  onOff("logFormat", ".Values.logFormat"),
  onOff("traceLocations", ".Values.allowTraceLocations"),
  onOff("driverUsers", ".Values.driverUsers"),
  onOff("clusterLocal", `include "simkube-fn.clusterLocal" .`),
  onOff("podMonitor", ".Values.metrics.podMonitor.enabled"),
  onOff("serviceMonitor", ".Values.metrics.serviceMonitor.enabled"),
  onOff("activationCreate", "ne (int $tuneCreate.activationScale) 1"),
  onOff("activationDelete", "ne (int $tuneDelete.activationScale) 1"),
];

export const SWITCH_BY_NAME: ReadonlyMap<string, Switch> = new Map(SWITCHES.map((s) => [s.name, s]));

/** The chart's defaults (values.yaml), from which the local switches are tried one at a time. */
export const BASE: Readonly<Record<string, string>> = {
  platform: "kind",
  ingress: "kourier",
  edition: "ce",
  openfaasFn: "off",
  reschedule: "on",
  sim: "off",
  webhook: "on",
  existingSecret: "off",
  secretKnown: "on",
  caBundle: "off",
  caInjectFrom: "off",
  issuer: "off",
  podReads: "cluster",
  sequenceStore: "cluster",
  tracePath: "off",
  logFormat: "off",
  traceLocations: "off",
  driverUsers: "on",
  clusterLocal: "on",
  podMonitor: "off",
  serviceMonitor: "off",
  activationCreate: "off",
  activationDelete: "on",
};
