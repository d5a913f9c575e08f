// The pure parts of `cluster up --cert-manager`: which objects of cert-manager's rendered chart are taken (and
// a chart lacking one is refused), our own Deployments and Service, and when --knative brings cert-manager.

import assert from "node:assert/strict";
import { test } from "node:test";
import { parseClusterArgs } from "../../functions/cli/cluster/command.js";
import {
  CERT_MANAGER_NAMES,
  CERT_MANAGER_NAMESPACE,
  certManagerObjects,
  chartObjects,
} from "../../functions/local-cluster/cert-manager/objects.js";
import { probeCertificate } from "../../functions/local-cluster/cert-manager/ready.js";
import { NODE_SELECTOR_ANNOTATION } from "../../functions/local-cluster/real-node/placement.js";

const doc = (kind: string, name: string, apiVersion = "v1", namespace?: string) =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ""}`;

/** The shape of cert-manager's chart rendered for release cert-manager: what the install relies on, and more. */
const CHART = [
  doc("CustomResourceDefinition", "certificates.cert-manager.io", "apiextensions.k8s.io/v1"),
  doc("CustomResourceDefinition", "clusterissuers.cert-manager.io", "apiextensions.k8s.io/v1"),
  doc("ServiceAccount", "cert-manager", "v1", "cert-manager"),
  doc("ServiceAccount", "cert-manager-webhook", "v1", "cert-manager"),
  doc("ServiceAccount", "cert-manager-cainjector", "v1", "cert-manager"),
  doc("ClusterRole", "cert-manager-controller-issuers", "rbac.authorization.k8s.io/v1"),
  doc("Role", "cert-manager:leaderelection", "rbac.authorization.k8s.io/v1", "kube-system"),
  doc("ValidatingWebhookConfiguration", "cert-manager-webhook", "admissionregistration.k8s.io/v1"),
  doc("MutatingWebhookConfiguration", "cert-manager-webhook", "admissionregistration.k8s.io/v1"),
  doc("Deployment", "cert-manager", "apps/v1", "cert-manager"),
  doc("Service", "cert-manager-webhook", "v1", "cert-manager"),
].join("---\n");

test("the chart's CRDs, accounts, RBAC and webhook configurations are taken; its Deployments and Services are not", () => {
  const kinds = chartObjects(CHART).map((o) => o.kind);
  assert.equal(kinds.length, 9);
  assert.ok(!kinds.includes("Deployment") && !kinds.includes("Service"));
});

test("a rendered chart lacking what the install relies on is refused, naming it", () => {
  const without = CHART.split("---\n")
    .filter((d) => !d.includes("ValidatingWebhookConfiguration"))
    .join("---\n");
  assert.throws(() => chartObjects(without), /lacks ValidatingWebhookConfiguration cert-manager-webhook/);
});

test("our objects: the namespace on the real node, the webhook's Service, three Deployments of local images", () => {
  const objects = certManagerObjects(CHART);
  const ns = objects.find((o) => o.kind === "Namespace");
  assert.equal(ns?.metadata.name, CERT_MANAGER_NAMESPACE);
  assert.ok((ns?.metadata.annotations as Record<string, string> | undefined)?.[NODE_SELECTOR_ANNOTATION]);
  const deployments = objects.filter((o) => o.kind === "Deployment");
  assert.deepEqual(
    deployments.map((d) => d.metadata.name),
    Object.values(CERT_MANAGER_NAMES),
  );
  for (const d of deployments) {
    const pod = (d.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    assert.equal(pod.serviceAccountName, d.metadata.name, "the chart's account, bound by its RBAC");
    const [c] = pod.containers as { image: string; imagePullPolicy: string; args: string[] }[];
    assert.match(c?.image ?? "", /^dev\.local\/cert-manager-[a-z]+:v1\.21\.1$/);
    assert.equal(c?.imagePullPolicy, "Never");
  }
  const webhook = deployments.find((d) => d.metadata.name === CERT_MANAGER_NAMES.webhook);
  const args = JSON.stringify(webhook?.spec);
  assert.match(args, /--dynamic-serving-ca-secret-name=cert-manager-webhook-ca/);
  const service = objects.find((o) => o.kind === "Service");
  assert.equal(service?.metadata.name, CERT_MANAGER_NAMES.webhook);
});

test("--knative brings cert-manager unless --no-cert-manager; --cert-manager alone too", () => {
  assert.equal(parseClusterArgs(["up", "--knative"]).certManager, true);
  assert.equal(parseClusterArgs(["up", "--knative", "--no-cert-manager"]).certManager, false);
  assert.equal(parseClusterArgs(["up", "--cert-manager"]).certManager, true);
  assert.equal(parseClusterArgs(["up", "--real-node"]).certManager, false);
  assert.throws(() => parseClusterArgs(["up", "--cert-manager", "--no-cert-manager"]), /exclude each other/);
});

test("the readiness probe Certificate names its issuer and lives in cert-manager's namespace", () => {
  const cert = probeCertificate({ kind: "ClusterIssuer", name: "ca" }, "p");
  assert.equal(cert.metadata.namespace, CERT_MANAGER_NAMESPACE);
  assert.deepEqual((cert.spec as { issuerRef: unknown }).issuerRef, {
    group: "cert-manager.io",
    kind: "ClusterIssuer",
    name: "ca",
  });
});
