// The pure parts of `cluster up --openfaas`: the objects written for CE's gateway and faas-netes (namespaces
// on the real node, basic auth mounted where both read it, the environment each program reads), the
// Authorization header, and how a function's pods are judged when faas-netes cannot start them.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ClusterUsageError, parseClusterArgs } from "../../functions/cli/cluster/command.js";
import {
  describePod,
  type FunctionPod,
  fatalPodState,
} from "../../functions/local-cluster/openfaas/function-status.js";
import { basicAuthorization } from "../../functions/local-cluster/openfaas/gateway-client.js";
import {
  OPENFAAS_FUNCTION_NAMESPACE,
  OPENFAAS_NAMESPACE,
  openfaasObjects,
} from "../../functions/local-cluster/openfaas/objects.js";
import { NODE_SELECTOR_ANNOTATION } from "../../functions/local-cluster/real-node/placement.js";

const objects = openfaasObjects({
  images: { gateway: "dev.local/gw:1", faasNetes: "dev.local/fn:1", watchdog: "dev.local/wd:1" },
  password: "pw",
  timeout: "65s",
});

type Container = {
  name: string;
  image: string;
  env: { name: string; value: string }[];
  volumeMounts: unknown[];
};
const containers = () => {
  const d = objects.find((o) => o.kind === "Deployment") as unknown as {
    spec: { template: { spec: { containers: Container[] } } };
  };
  return d.spec.template.spec.containers;
};
const envOf = (c: Container) => Object.fromEntries(c.env.map((e) => [e.name, e.value]));

test("both namespaces are placed on the real node and come first", () => {
  assert.deepEqual(
    objects.slice(0, 2).map((o) => [o.kind, o.metadata.name]),
    [
      ["Namespace", OPENFAAS_NAMESPACE],
      ["Namespace", OPENFAAS_FUNCTION_NAMESPACE],
    ],
  );
  for (const ns of objects.slice(0, 2))
    assert.ok((ns.metadata.annotations as Record<string, string>)[NODE_SELECTOR_ANNOTATION]);
});

test("the gateway forwards to faas-netes on the pod's loopback, both with basic auth from the mounted Secret", () => {
  const [gateway, provider] = containers();
  assert.ok(gateway && provider);
  const g = envOf(gateway);
  const p = envOf(provider);
  assert.equal(g.functions_provider_url, `http://127.0.0.1:${p.port}/`);
  assert.equal(g.basic_auth, "true");
  assert.equal(p.basic_auth, "true");
  assert.equal(g.secret_mount_path, p.secret_mount_path);
  assert.equal(p.function_namespace, OPENFAAS_FUNCTION_NAMESPACE);
  assert.equal(p.http_probe, "true");
  const secret = objects.find((o) => o.kind === "Secret") as unknown as {
    stringData: Record<string, string>;
  };
  assert.deepEqual(secret.stringData, { "basic-auth-user": "admin", "basic-auth-password": "pw" });
});

test("faas-netes closes an idle connection only after the gateway's 90 s, so the gateway never writes on one being closed", () => {
  const [gateway, provider] = containers();
  assert.ok(gateway && provider);
  const seconds = (v: string | undefined) => Number(/^(\d+)s$/.exec(v ?? "")?.[1]);
  assert.ok(seconds(envOf(provider).read_timeout) > 90, "faas-netes' read (and so idle) timeout past 90 s");
  assert.equal(envOf(gateway).read_timeout, "65s", "the gateway's own timeouts unchanged");
});

test("the gateway's Prometheus queries get an empty vector from the stand-in in its pod", () => {
  const [gateway, , standIn] = containers();
  assert.ok(gateway && standIn);
  const s = envOf(standIn);
  assert.equal(envOf(gateway).faas_prometheus_port, s.port);
  assert.equal(s.mode, "static");
  const cm = objects.find((o) => o.kind === "ConfigMap") as unknown as { data: Record<string, string> };
  assert.deepEqual(JSON.parse(cm.data.query ?? ""), {
    status: "success",
    data: { resultType: "vector", result: [] },
  });
});

test("faas-netes may manage Deployments and Services only in the function namespace", () => {
  const role = objects.find((o) => o.kind === "Role");
  assert.equal(role?.metadata.namespace, OPENFAAS_FUNCTION_NAMESPACE);
  assert.ok(!objects.some((o) => o.kind === "ClusterRole" && JSON.stringify(o).includes("deployments")));
});

test("the Authorization header is admin:<password> in base64", () => {
  assert.equal(basicAuthorization("pw"), `Basic ${Buffer.from("admin:pw").toString("base64")}`);
});

const pod = (reason?: string, ready = false): FunctionPod => ({
  metadata: { name: "fn-1" },
  status: {
    phase: reason ? "Pending" : "Running",
    containerStatuses: [
      { name: "fn", ready, ...(reason ? { state: { waiting: { reason, message: "pull refused" } } } : {}) },
    ],
  },
});

test("a missing image or a crash loop is fatal at once; a pod still starting is not", () => {
  assert.match(
    fatalPodState([pod("ErrImagePull")]) ?? "",
    /fn-1 Pending: fn: waiting ErrImagePull \(pull refused\)/,
  );
  assert.match(fatalPodState([pod("CrashLoopBackOff")]) ?? "", /CrashLoopBackOff/);
  assert.equal(fatalPodState([pod("ContainerCreating")]), undefined);
  assert.equal(fatalPodState([pod()]), undefined);
  assert.equal(describePod(pod()), "pod fn-1 Running: fn: running, not ready");
});

test("cluster up takes --openfaas, and not with --knative", () => {
  assert.equal(parseClusterArgs(["up", "--openfaas"]).values.openfaas, true);
  assert.throws(() => parseClusterArgs(["up", "--knative", "--openfaas"]), ClusterUsageError);
});
