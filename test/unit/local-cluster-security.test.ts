// `cluster up`'s security modes, the pure parts: what kube-apiserver is given to present to the functions,
// which rendered objects are applied in each mode, and what the ready line says. The whole setup on a real
// API server: test/cluster/production-security.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";
import { readyLine } from "../../functions/cli/cluster/command.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { objectsToApply } from "../../functions/local-cluster/deployment.js";
import {
  admissionConfiguration,
  newPathSecret,
  webhookClientKubeconfig,
} from "../../functions/local-cluster/security.js";
import { buildAllManifests } from "../../knative/manifests.js";
import { loadConfig } from "../../shared/config/config.js";

test("kube-apiserver presents the client certificate to each function's host:port and to nothing else", () => {
  const cert = { certFile: "/d/c.crt", keyFile: "/d/c.key" };
  const kc = webhookClientKubeconfig(["127.0.0.1:4001", "127.0.0.1:4002"], cert) as {
    users: { name: string; user: Record<string, string> }[];
    "current-context"?: string;
  };
  assert.deepEqual(
    kc.users.map((u) => u.name),
    ["127.0.0.1:4001", "127.0.0.1:4002"],
  );
  assert.deepEqual(kc.users[0]?.user, { "client-certificate": "/d/c.crt", "client-key": "/d/c.key" });
  assert.equal(kc["current-context"], undefined, "no fallback identity for other endpoints");
  const admission = admissionConfiguration("/d/k") as {
    plugins: { name: string; configuration: { kubeConfigFile: string } }[];
  };
  assert.deepEqual(
    admission.plugins.map((p) => [p.name, p.configuration.kubeConfigFile]),
    [
      ["MutatingAdmissionWebhook", "/d/k"],
      ["ValidatingAdmissionWebhook", "/d/k"],
    ],
  );
});

test("the path secret is one the functions accept, new every run", () => {
  const secret = newPathSecret();
  assert.notEqual(secret, newPathSecret());
  assert.equal(loadConfig({ WEBHOOK_PATH_SECRET: secret }).pathSecret, secret);
});

test("production applies the rendered policy first, then the RBAC; insecure-dev only the RBAC", () => {
  const manifests = buildAllManifests({
    simName: "s",
    namespace: "simkube",
    webhookMode: "url",
    webhookUrls: { "mutate-create": "https://127.0.0.1:1/", "reschedule-delete": "https://127.0.0.1:2/" },
    caBundle: Buffer.from("ca").toString("base64"),
    rescheduleInterruptedBarePods: true,
  });
  const kinds = (mode: "production" | "insecure-dev") => objectsToApply(manifests, mode).map((m) => m.kind);
  const rbac = manifests.filter((m) =>
    ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(m.kind ?? ""),
  );
  assert.deepEqual(kinds("production"), [
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    ...rbac.map((m) => m.kind),
  ]);
  assert.deepEqual(
    kinds("insecure-dev"),
    rbac.map((m) => m.kind),
  );
});

test("the ready line says which security mode is on", () => {
  const cluster = {
    kubeconfig: "k",
    server: "s",
    simName: "n",
    virtualNamespacePrefix: "virtual",
    functions: {},
    driverKubeconfig: "d",
    logDir: "l",
    timings: { ready: 1 },
    security: "insecure-dev",
  } as unknown as LocalCluster;
  assert.equal(readyLine(cluster).security, "insecure-dev");
  assert.equal(readyLine({ ...cluster, security: "production" } as LocalCluster).security, "production");
});
