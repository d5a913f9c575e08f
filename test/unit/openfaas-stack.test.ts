import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { MAX_REVIEW_BYTES } from "../../knative/defaults.js";
import { renderDeployment } from "../../knative/manifests.js";
import { buildStack, openfaasImage, type StackFile } from "../../knative/openfaas-stack.js";
import { DeploymentOptionsError } from "../../knative/options.js";

describe("OpenFaaS stack.yml", () => {
  it("one function per deployed function, built from the bundle folder with the node template", () => {
    const stack = buildStack({
      simName: "test-sim",
      rescheduleInterruptedBarePods: true,
      image: "ghcr.io/me/fn:1.0",
      openfaasEdition: "pro",
    });
    assert.equal(stack.version, "1.0");
    assert.deepEqual(stack.provider, { name: "openfaas", gateway: "http://127.0.0.1:8080" });
    assert.deepEqual(Object.keys(stack.functions), [
      "simkube-fn-mutate-create",
      "simkube-fn-reschedule-delete",
    ]);
    const mc = stack.functions["simkube-fn-mutate-create"];
    assert.ok(mc);
    assert.equal(mc.lang, "node22", "a supported Node.js LTS template");
    assert.equal(mc.handler, "./dist/openfaas/mutate-create");
    assert.equal(mc.image, "ghcr.io/me/fn-mutate-create:1.0");
    assert.equal(mc.namespace, "openfaas-fn");
    assert.equal(
      mc.annotations["com.openfaas.serviceaccount"],
      "simkube-fn-mutate-create",
      "its own account (Pro)",
    );
    assert.equal(mc.readonly_root_filesystem, true);
    assert.deepEqual(mc.limits, { memory: "1Gi" });
    assert.deepEqual(mc.requests, { memory: "128Mi", cpu: "100m" });
  });

  it("reschedule-delete by default; --no-reschedule leaves it out and tells mutate-create (RESCHEDULE_SERVED)", () => {
    const byDefault = buildStack({ simName: "test-sim" });
    assert.deepEqual(Object.keys(byDefault.functions), [
      "simkube-fn-mutate-create",
      "simkube-fn-reschedule-delete",
    ]);
    assert.equal(byDefault.functions["simkube-fn-mutate-create"]?.environment.RESCHEDULE_SERVED, "true");
    assert.equal(
      byDefault.functions["simkube-fn-reschedule-delete"]?.environment.RESCHEDULE_SERVED,
      undefined,
    );
    const off = buildStack({ rescheduleInterruptedBarePods: false });
    assert.deepEqual(Object.keys(off.functions), ["simkube-fn-mutate-create"]);
    assert.equal(off.functions["simkube-fn-mutate-create"]?.environment.RESCHEDULE_SERVED, "false");
  });

  it("environment: what serve reads, a JSON body limit that fits a ~3 MiB review, watchdog timeouts past the webhook's", () => {
    const stack = buildStack({
      simName: "test-sim",
      tracePath: "https://t.example.com/a.sktrace",
      rescheduleInterruptedBarePods: true,
    });
    const mc = stack.functions["simkube-fn-mutate-create"];
    const rd = stack.functions["simkube-fn-reschedule-delete"];
    assert.ok(mc && rd);
    assert.equal(mc.environment.SIM_NAME, "test-sim");
    assert.equal(mc.environment.TRACE_PATH, "https://t.example.com/a.sktrace");
    assert.equal(mc.environment.SEQUENCE_STORE, "cluster");
    assert.equal(
      mc.environment.POD_NAMESPACE,
      "openfaas-fn",
      "the sequence ConfigMaps live where the Role is",
    );
    assert.equal(Number(mc.environment.MAX_JSON_SIZE), MAX_REVIEW_BYTES);
    assert.equal(mc.environment.exec_timeout, "31s");
    assert.equal(rd.environment.exec_timeout, "16s");
  });

  it("readiness: the watchdog's /_/ready asks GET /readyz; Pro probes /_/ready, CE has no such setting", () => {
    const pro = buildStack({ simName: "s", openfaasEdition: "pro" }).functions["simkube-fn-mutate-create"];
    const ce = buildStack({ simName: "s", openfaasEdition: "ce" }).functions["simkube-fn-mutate-create"];
    assert.ok(pro && ce);
    assert.equal(pro.environment.ready_path, "/readyz");
    assert.equal(ce.environment.ready_path, "/readyz");
    assert.equal(pro.annotations["com.openfaas.ready.http.path"], "/_/ready");
    assert.equal(ce.annotations["com.openfaas.ready.http.path"], undefined);
  });

  it("Pro: scale to zero by default; minScale >= 1 turns it off and becomes scale.min", () => {
    const idle = buildStack({ simName: "s", openfaasEdition: "pro" }).functions["simkube-fn-mutate-create"];
    assert.equal(idle?.labels["com.openfaas.scale.zero"], "true");
    assert.equal(idle?.labels["com.openfaas.scale.zero-duration"], "15m");
    assert.equal(idle?.labels["com.openfaas.scale.min"], "1");
    assert.equal(idle?.labels["com.openfaas.scale.max"], "3");
    const warm = buildStack({ simName: "s", minScale: 2, openfaasEdition: "pro" }).functions[
      "simkube-fn-mutate-create"
    ];
    assert.equal(warm?.labels["com.openfaas.scale.zero"], undefined);
    assert.equal(warm?.labels["com.openfaas.scale.zero-duration"], undefined);
    assert.equal(warm?.labels["com.openfaas.scale.min"], "2");
  });

  it("needs no webhook URL (the stack has no webhook) and renders as one YAML document", () => {
    const text = renderDeployment({
      simName: "s",
      target: "openfaas-stack",
      gateway: "https://gw.example.com",
    });
    const stack = parse(text) as StackFile;
    assert.equal(stack.provider.gateway, "https://gw.example.com");
    assert.doesNotMatch(text, /com.openfaas.scale.zero/, "Community Edition by default");
    assert.match(text, /Community Edition: no scale to zero/);
    assert.throws(() => buildStack({ simName: "a".repeat(64) }), DeploymentOptionsError);
  });

  it("derives per-function image names", () => {
    assert.equal(openfaasImage("simkube-fn:latest", "mutate-create"), "simkube-fn-mutate-create:latest");
    assert.equal(openfaasImage("localhost:5000/fn", "mutate-create"), "localhost:5000/fn-mutate-create");
    assert.equal(
      openfaasImage("reg.io/a/{function}:v2", "reschedule-delete"),
      "reg.io/a/reschedule-delete:v2",
    );
    assert.equal(openfaasImage("reg.io/fn@sha256:abc", "mutate-create"), "reg.io/fn-mutate-create");
  });
});
