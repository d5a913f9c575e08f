// Which generated template holds which of the builders' objects, and the switches those objects depend on:
// `core` ones are tried in every combination, `local` ones one at a time (generate.ts checks the lists).

import type { TemplateFile } from "./generate.js";
import { P } from "./placeholders.js";

const named = (suffix: string) => (o: { metadata: { name: string } }) => o.metadata.name.endsWith(suffix);
const RBAC_KINDS = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
const isPodReads = (o: { kind: string; metadata: { name: string } }) =>
  named("-pod-read-bindings")(o) || (o.kind === "ClusterRole" && named("-virtual-pod-reads")(o));
/** The functions' namespace as the variants render it (its placeholder). */
const FUNCTION_NAMESPACE = P.namespace.text;

export const TEMPLATE_FILES: readonly TemplateFile[] = [
  {
    file: "pod-create-policy.yaml",
    what: "The pod-create fence (knative/pod-create-policy.ts): the functions' accounts may create only clone-shaped pods.",
    holds: named("-pod-creates"),
    core: ["platform", "edition", "reschedule", "openfaasFn"],
    local: ["sim"],
  },
  {
    file: "pod-read-bindings.yaml",
    what: "podReads virtual-namespaces (knative/pod-reads.ts): the role reschedule-delete binds per virtual namespace, and its fence.",
    holds: isPodReads,
    core: ["platform", "edition", "reschedule", "podReads", "openfaasFn"],
    local: ["sim"],
  },
  {
    file: "rbac.yaml",
    what: "Per function: its account, only the verbs its code calls (knative/rbac.ts).",
    holds: (o) => RBAC_KINDS.has(o.kind) && !isPodReads(o),
    core: ["platform", "edition", "reschedule", "podReads", "sequenceStore", "sim"],
    local: ["openfaasFn"],
  },
  {
    file: "path-secret.yaml",
    what: "The path secret's Secret, unless an existing one is named (_helpers.tpl keeps its value across upgrades).",
    holds: (o) => o.kind === "Secret",
    core: ["existingSecret", "secretKnown", "sim"],
    local: [],
  },
  {
    file: "functions.yaml",
    what: "The functions: Knative Services, or Deployments and Services on plain Kubernetes (knative/manifests.ts, workloads.ts).",
    holds: (o) =>
      o.kind === "Deployment" ||
      (o.kind === "Service" &&
        (o.apiVersion.startsWith("serving.knative.dev") || o.metadata.namespace === FUNCTION_NAMESPACE)),
    core: ["platform", "reschedule", "sim", "existingSecret", "secretKnown", "podReads"],
    local: [
      "tracePath",
      "logFormat",
      "traceLocations",
      "driverUsers",
      "clusterLocal",
      "activationCreate",
      "activationDelete",
      "sequenceStore",
    ],
  },
  {
    file: "gateway-route.yaml",
    what: "kind and k3s: the route from the API server to the functions, and their certificates (knative/gateway-route.ts, traefik-route.ts).",
    holds: (o) =>
      [
        "ClusterIssuer",
        "Certificate",
        "ClusterDomainClaim",
        "DomainMapping",
        "Middleware",
        "IngressRoute",
      ].includes(o.kind) ||
      (o.kind === "Service" && o.apiVersion === "v1" && o.metadata.namespace !== FUNCTION_NAMESPACE),
    core: ["platform", "ingress", "issuer", "reschedule", "sim"],
    local: [],
  },
  {
    file: "monitors.yaml",
    what: "Optional Prometheus Operator monitors for the functions' GET /metrics, one per function (knative/monitors.ts).",
    holds: (o) =>
      o.kind === "PodMonitor" ||
      o.kind === "ServiceMonitor" ||
      (o.kind === "ConfigMap" && named("-metrics-ca")(o)),
    core: ["platform", "podMonitor", "serviceMonitor", "caBundle", "reschedule"],
    local: ["sim"],
  },
  {
    file: "webhook.yaml",
    what: "The MutatingWebhookConfiguration (knative/manifests.ts), for one Simulation.",
    holds: (o) => o.kind === "MutatingWebhookConfiguration",
    core: [
      "platform",
      "ingress",
      "edition",
      "openfaasFn",
      "reschedule",
      "sim",
      "webhook",
      "existingSecret",
      "secretKnown",
      "caBundle",
      "caInjectFrom",
      "issuer",
    ],
    local: ["driverUsers"],
  },
];
