// The placeholders the chart generator renders the builders with, one per value-like chart value, and the
// Helm expression each becomes in the templates. Strings are `zq<word>qz` (a DNS label, so names built from
// them pass the builders' checks and can be told apart again); numbers are 777xxxx. Pure data.

import { pathSecretDigest } from "../function-container.js";

export interface Placeholder {
  /** What the builders are given. */
  text: string;
  /** The Helm expression it stands for (a pipeline, without braces). */
  helm: string;
  /** Inside a CEL string literal ('...'), when it stands for a whole list of literals. */
  celList?: string;
}

const t = (word: string, helm: string, celList?: string): Placeholder => ({
  text: `zq${word}qz`,
  helm,
  ...(celList ? { celList } : {}),
});

/** Variables every generated template defines first (the prelude in generate.ts). */
export const TUNING_VARIABLE = {
  "mutate-create": "$tuneCreate",
  "reschedule-delete": "$tuneDelete",
} as const;

export const P = {
  name: t("name", "$full"),
  namespace: t("ns", ".Release.Namespace"),
  simName: t("sim", ".Values.simName"),
  image: t("image", `include "simkube-fn.image" .`),
  tracePath: t("trace", "trim .Values.tracePath"),
  traceLocations: t("tracelocations", `join "," .Values.allowTraceLocations`),
  logLevel: t("loglevel", ".Values.logLevel"),
  logFormat: t("logformat", ".Values.logFormat"),
  driverUsers: t(
    "driverusers",
    `join "," .Values.driverUsers`,
    `include "simkube-fn.celList" .Values.driverUsers`,
  ),
  virtualNsPrefix: t("prefix", ".Values.virtualNsPrefix"),
  kourierNamespace: t("kourierns", ".Values.kourierNamespace"),
  traefikNamespace: t("traefikns", ".Values.traefikNamespace"),
  traefikService: t("traefikservice", `first (splitList ":" .Values.traefikInternalService)`),
  certManagerNamespace: t("certmanagerns", ".Values.certManagerNamespace"),
  issuer: t("issuer", ".Values.issuer"),
  caInjectFrom: t("cainjectfrom", ".Values.caInjectFrom"),
  /** The caBundle's PEM text; the builders are given its base64 (CA_BUNDLE). */
  caPem: t("capem", `printf "%s\\n" (trim .Values.caBundle)`),
  // 24 characters: a path secret must be at least that long.
  pathSecret: { text: "zqpathsecretpathsecretqz", helm: "$pathSecret" },
  existingSecret: t("existingsecret", ".Values.pathSecret.existingSecret"),
  domain: t("domain", "lower (trim .Values.domain)"),
  gateway: t("gateway", `trimPrefix "https://" (trimSuffix "/" .Values.openfaas.webhookGatewayUrl)`),
  releaseService: t("releaseservice", ".Release.Service"),
  chart: t("chart", `printf "%s-%s" .Chart.Name .Chart.Version`),
  delayCreate: t("delaycreate", `${TUNING_VARIABLE["mutate-create"]}.scaleDownDelay`),
  delayDelete: t("delaydelete", `${TUNING_VARIABLE["reschedule-delete"]}.scaleDownDelay`),
} satisfies Record<string, Placeholder>;

/** Numbers: the builders copy them into integer fields, or into strings with String(n). */
const n = (value: number, helm: string) => ({ value, helm });
const tune = (fn: keyof typeof TUNING_VARIABLE, field: string) => `${TUNING_VARIABLE[fn]}.${field}`;

export const N = {
  minScaleCreate: n(7770001, tune("mutate-create", "minScale")),
  maxScaleCreate: n(7770002, tune("mutate-create", "maxScale")),
  activationCreate: n(7770003, tune("mutate-create", "activationScale")),
  timeoutCreate: n(7770004, tune("mutate-create", "timeoutSeconds")),
  replicasCreate: n(7770005, tune("mutate-create", "replicas")),
  minScaleDelete: n(7770011, tune("reschedule-delete", "minScale")),
  maxScaleDelete: n(7770012, tune("reschedule-delete", "maxScale")),
  activationDelete: n(7770013, tune("reschedule-delete", "activationScale")),
  timeoutDelete: n(7770014, tune("reschedule-delete", "timeoutSeconds")),
  replicasDelete: n(7770015, tune("reschedule-delete", "replicas")),
  traefikPort: n(7770021, `include "simkube-fn.traefikPort" . | int`),
} satisfies Record<string, { value: number; helm: string }>;

/** Whole values that are maps or lists in the chart, given to the builders as a one-key marker object. */
export const WHOLE = {
  resources: { marker: "zqresourcesqz", helm: ".Values.resources" },
  /** A list item that stands for every item of a list (range in the template). */
  ownerRules: { marker: "zqownerrulesqz", helm: `include "simkube-fn.ownerRules" . | fromYamlArray` },
  /** A map key that stands for every entry of a map, which win over the builders' own (range). */
  monitorLabels: { marker: "zqmonitorlabelsqz", helm: ".Values.metrics.labels" },
} as const;

export function marker(key: keyof typeof WHOLE): Record<string, true> {
  return { [WHOLE[key].marker]: true };
}

/** The caBundle as the builders take it: base64 of the PEM. */
export const CA_BUNDLE = Buffer.from(P.caPem.text).toString("base64");

/** Text the builders compute from a placeholder, and the same computation in Helm. */
export const DERIVED: readonly { text: string; helm: string }[] = [
  { text: CA_BUNDLE, helm: `include "simkube-fn.caBundle" .` },
  {
    text: pathSecretDigest(P.pathSecret.text),
    helm: "sha256sum $pathSecret | trunc 16",
  },
];
