import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Service as KnativeServiceModel } from "@kubernetes-models/knative/serving.knative.dev/v1/Service";
import { evaluate } from "@marcbachmann/cel-js";
import { MutatingWebhookConfiguration } from "kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration";
import { ValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import { ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { Secret } from "kubernetes-models/v1/Secret";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { parse, parseAllDocuments } from "yaml";
import { resolveOptions } from "../../knative/deployment-options.js";
import {
  buildAllManifests,
  buildRbac,
  buildServices,
  buildWebhookConfiguration,
  DeploymentOptionsError,
  type Manifest,
  matchConditionsFor,
  renderDeployment,
  renderManifests,
} from "../../knative/manifests.js";
import type { DeploymentOptions } from "../../knative/options.js";
import { newPathSecret } from "../../knative/path-secret-options.js";
import {
  CONTROLLER_MANAGER_USER,
  DEFAULT_DRIVER_USERS,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
} from "../../shared/base/identities.js";

// ---------------------------------------------------------------------------------------------------------
// Validation against the published schemas: kubernetes-models (Kubernetes 1.27 OpenAPI) and
// @kubernetes-models/knative (Knative Serving's CRD openAPIV3Schema). Each model's validate() throws on a
// schema violation.

type Validator = (object: unknown) => void;
const VALIDATORS: Record<string, Validator> = {
  "v1/ServiceAccount": (o) => new ServiceAccount(o as ServiceAccount).validate(),
  "rbac.authorization.k8s.io/v1/ClusterRole": (o) => new ClusterRole(o as ClusterRole).validate(),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": (o) =>
    new ClusterRoleBinding(o as ClusterRoleBinding).validate(),
  "rbac.authorization.k8s.io/v1/Role": (o) => new Role(o as Role).validate(),
  "rbac.authorization.k8s.io/v1/RoleBinding": (o) => new RoleBinding(o as RoleBinding).validate(),
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": (o) =>
    new MutatingWebhookConfiguration(o as MutatingWebhookConfiguration).validate(),
  "serving.knative.dev/v1/Service": (o) => new KnativeServiceModel(o as KnativeServiceModel).validate(),
  "v1/Secret": (o) => new Secret(o as Secret).validate(),
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": (o) =>
    new ValidatingAdmissionPolicy(o as ValidatingAdmissionPolicy).validate(),
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": (o) =>
    new ValidatingAdmissionPolicyBinding(o as ValidatingAdmissionPolicyBinding).validate(),
};

function validateAgainstSchema(object: Manifest): void {
  const validator = VALIDATORS[`${object.apiVersion}/${object.kind}`];
  assert.ok(validator, `no schema for ${object.apiVersion}/${object.kind}`);
  validator(object);
}

/** The API server's own checks on webhooks that the OpenAPI schema does not carry. */
function checkWebhookRules(config: MutatingWebhookConfiguration | Manifest): void {
  const webhooks = (config as MutatingWebhookConfiguration).webhooks ?? [];
  const names = new Set<string>();
  for (const wh of webhooks) {
    assert.ok(wh.name.split(".").length >= 3, `webhook name ${wh.name} must be fully qualified`);
    assert.ok(!names.has(wh.name), `duplicate webhook name ${wh.name}`);
    names.add(wh.name);
    assert.ok(["None", "NoneOnDryRun"].includes(wh.sideEffects), "v1 accepts only None and NoneOnDryRun");
    assert.ok(wh.timeoutSeconds !== undefined && wh.timeoutSeconds >= 1 && wh.timeoutSeconds <= 30);
    assert.deepEqual(wh.admissionReviewVersions, ["v1"]);
    const cc = wh.clientConfig;
    assert.ok(Boolean(cc.url) !== Boolean(cc.service), "exactly one of url and service");
    if (cc.url) {
      const url = new URL(cc.url);
      assert.equal(url.protocol, "https:");
      assert.equal(url.search, "");
      assert.equal(url.hash, "");
    }
    assert.ok((wh.matchConditions ?? []).length <= 64);
    for (const mc of wh.matchConditions ?? [])
      assert.match(mc.name, /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/);
  }
}

const BASE: DeploymentOptions = {
  simName: "test-sim",
  webhookUrlBase: "https://fn.example.com",
  image: "registry.example.com/simkube-fn:0.1.0",
};
// Lowercase, digits and -: a Service path segment the API server accepts (service mode renders it too).
const SECRET = "s3cr3t-path-segment-0123456789abcdef";

const VARIANTS: Record<string, DeploymentOptions> = {
  "knative, url mode, mutate-create only (--no-reschedule: its Events role in default)": {
    ...BASE,
    rescheduleInterruptedBarePods: false,
  },
  "knative, url mode, by default": BASE,
  "knative, url mode, with reschedule-delete, a trace and a path secret": {
    ...BASE,
    rescheduleInterruptedBarePods: true,
    tracePath: "https://traces.example.com/sim.sktrace",
    minScale: 1,
    pathSecret: SECRET,
  },
  "knative, service mode with caBundle and cert-manager": {
    simName: "test-sim",
    webhookMode: "service",
    caBundle: Buffer.from("-----BEGIN CERTIFICATE-----\n").toString("base64"),
    caInjectFrom: "simkube/simkube-fn-cert",
    rescheduleInterruptedBarePods: true,
    pathSecret: SECRET,
  },
  "openfaas, url mode through the gateway": {
    ...BASE,
    target: "openfaas",
    webhookUrlBase: "https://gateway.example.com",
    rescheduleInterruptedBarePods: true,
    pathSecret: SECRET,
  },
};

function byKind(objects: Manifest[], kind: string): Manifest[] {
  return objects.filter((o) => o.kind === kind);
}

describe("generated manifests pass the published schemas", () => {
  for (const [variant, options] of Object.entries(VARIANTS)) {
    it(`${variant}: every object as rendered to YAML`, () => {
      const yaml = renderManifests(buildAllManifests(options));
      const docs = parseAllDocuments(yaml).map((doc) => {
        assert.deepEqual(doc.errors, []);
        return doc.toJS() as Manifest;
      });
      assert.deepEqual(docs, buildAllManifests(options), "the YAML round-trips to the same objects");
      for (const doc of docs) {
        validateAgainstSchema(doc);
        if (doc.kind === "MutatingWebhookConfiguration") checkWebhookRules(doc);
      }
    });
  }

  // A validator that accepts everything proves nothing: the same checks must reject broken copies.
  it("rejects broken objects (the validation can fail)", () => {
    const objects = buildAllManifests(
      VARIANTS["knative, url mode, with reschedule-delete, a trace and a path secret"] as DeploymentOptions,
    );
    const ksvc = structuredClone(byKind(objects, "Service")[0]) as Record<string, unknown>;
    const template = (ksvc.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    template.containerConcurrency = "100";
    assert.throws(() => validateAgainstSchema(ksvc as Manifest), /containerConcurrency must be integer/);

    const badPort = structuredClone(byKind(objects, "Service")[0]) as Record<string, unknown>;
    const container = (badPort.spec as { template: { spec: { containers: Record<string, unknown>[] } } })
      .template.spec.containers[0] as Record<string, unknown>;
    container.ports = [{ containerPort: "8080" }];
    assert.throws(() => validateAgainstSchema(badPort as Manifest), /containerPort must be integer/);

    const webhook = structuredClone(byKind(objects, "MutatingWebhookConfiguration")[0]) as Manifest;
    const hooks = (webhook as unknown as { webhooks: Record<string, unknown>[] }).webhooks;
    delete hooks[0]?.sideEffects;
    assert.throws(() => validateAgainstSchema(webhook), /must have required property sideEffects/);

    const badPolicy = structuredClone(byKind(objects, "MutatingWebhookConfiguration")[0]) as Manifest;
    (badPolicy as unknown as { webhooks: Record<string, unknown>[] }).webhooks[1] = {
      ...(badPolicy as unknown as { webhooks: Record<string, unknown>[] }).webhooks[1],
      failurePolicy: "Sometimes",
    };
    assert.throws(
      () => validateAgainstSchema(badPolicy),
      /failurePolicy must be equal to one of the allowed values/,
    );

    const policy = structuredClone(byKind(objects, "ValidatingAdmissionPolicy")[0]) as Manifest;
    (policy as unknown as { spec: { failurePolicy: string } }).spec.failurePolicy = "Maybe";
    assert.throws(
      () => validateAgainstSchema(policy),
      /failurePolicy must be equal to one of the allowed values/,
    );

    const role = structuredClone(byKind(objects, "ClusterRole")[0]) as Manifest;
    (role as unknown as { rules: Record<string, unknown>[] }).rules[0] = {
      apiGroups: [""],
      resources: ["pods"],
      verbs: "get",
    };
    assert.throws(() => validateAgainstSchema(role), /verbs must be array/);

    const slow = structuredClone(byKind(objects, "MutatingWebhookConfiguration")[0]) as Manifest;
    (slow as unknown as { webhooks: { timeoutSeconds: number }[] }).webhooks.forEach((w) => {
      w.timeoutSeconds = 31;
    });
    assert.throws(() => checkWebhookRules(slow));
  });
});

describe("webhook configuration", () => {
  it("mutate-create: CREATE and UPDATE of pods and pods/status, fail closed, only virtual namespaces", () => {
    const config = buildWebhookConfiguration({ ...BASE, rescheduleInterruptedBarePods: false });
    assert.equal(config.webhooks?.length, 1, "no DELETE webhook with rescheduling turned off");
    const [wh] = config.webhooks ?? [];
    assert.ok(wh);
    assert.equal(wh.name, "mutate-create.simkube-fn.simkube.io");
    assert.deepEqual(wh.rules, [
      {
        apiGroups: [""],
        apiVersions: ["v1"],
        operations: ["CREATE", "UPDATE"],
        resources: ["pods", "pods/status"],
        scope: "Namespaced",
      },
    ]);
    assert.equal(wh.failurePolicy, "Fail");
    assert.equal(wh.reinvocationPolicy, "Never");
    assert.equal(wh.timeoutSeconds, 30);
    assert.deepEqual(wh.clientConfig, { url: "https://simkube-fn-mutate-create.simkube-fn.fn.example.com/" });
  });

  it("reschedule-delete: DELETE of pods, never blocks, side effects only off dry-run, short timeout", () => {
    const config = buildWebhookConfiguration({ ...BASE, rescheduleInterruptedBarePods: true });
    const wh = config.webhooks?.find((w) => w.name.startsWith("reschedule-delete."));
    assert.ok(wh);
    assert.deepEqual(wh.rules?.[0]?.operations, ["DELETE"]);
    assert.deepEqual(wh.rules?.[0]?.resources, ["pods"]);
    assert.equal(wh.failurePolicy, "Ignore");
    assert.equal(wh.sideEffects, "NoneOnDryRun");
    assert.equal(
      wh.timeoutSeconds,
      15,
      "a scale from zero plus the handler's 3.5 s answer cap (knative/tuning.ts)",
    );
    assert.deepEqual(wh.clientConfig, {
      url: "https://simkube-fn-reschedule-delete.simkube-fn.fn.example.com/",
    });
  });

  it("url templates, explicit URLs, service mode, caBundle and cert-manager injection", () => {
    const templated = buildWebhookConfiguration({
      ...BASE,
      webhookUrlBase: "https://{function}.sims.example.com/{namespace}",
    });
    assert.equal(
      templated.webhooks?.[0]?.clientConfig.url,
      "https://mutate-create.sims.example.com/simkube-fn",
    );

    const explicit = buildWebhookConfiguration({
      ...BASE,
      webhookUrls: { "mutate-create": "https://mc.example.com/review" },
      caBundle: "Y2E=",
    });
    assert.deepEqual(explicit.webhooks?.[0]?.clientConfig, {
      url: "https://mc.example.com/review",
      caBundle: "Y2E=",
    });

    const service = buildWebhookConfiguration({
      simName: "s",
      webhookMode: "service",
      caInjectFrom: "simkube/fn-cert",
      webhookService: { port: 8443 },
    });
    assert.deepEqual(service.webhooks?.[0]?.clientConfig, {
      service: { namespace: "simkube-fn", name: "simkube-fn-mutate-create-webhook", port: 8443, path: "/" },
    });
    assert.equal(service.metadata?.annotations?.["cert-manager.io/inject-ca-from"], "simkube/fn-cert");

    const openfaas = buildWebhookConfiguration({
      ...BASE,
      target: "openfaas",
      webhookUrlBase: "https://gw.example.com/",
    });
    assert.equal(
      openfaas.webhooks?.[0]?.clientConfig.url,
      "https://gw.example.com/function/simkube-fn-mutate-create",
    );
    const otherNs = buildWebhookConfiguration({ ...BASE, target: "openfaas", namespace: "fns" });
    assert.equal(
      otherNs.webhooks?.[0]?.clientConfig.url,
      "https://fn.example.com/function/simkube-fn-mutate-create.fns",
    );
  });

  it("refuses endpoints the API server would reject or could never reach", () => {
    const cases: [string, DeploymentOptions, RegExp][] = [
      ["no URL in url mode", { simName: "s" }, /the webhooks need an address: add --platform/],
      ["plain http", { simName: "s", webhookUrlBase: "http://fn.example.com" }, /must use https/],
      [
        "a query",
        { simName: "s", webhookUrls: { "mutate-create": "https://x.example.com/?a=1" } },
        /query or fragment/,
      ],
      [
        "user info",
        { simName: "s", webhookUrls: { "mutate-create": "https://u:p@x.example.com/" } },
        /user info/,
      ],
      ["timeout above 30 s", { ...BASE, mutateTimeoutSeconds: 31 }, /from 1 to 30/],
      ["function namespace is virtual", { ...BASE, namespace: "virtual-fns" }, /virtual namespace prefix/],
      ["name too long for a revision", { ...BASE, name: "a".repeat(40) }, /DNS-1035 label/],
      ["maxScale below minScale", { ...BASE, minScale: 4 }, /max-scale 3 .* is below --min-scale 4/],
      ["unknown log level", { ...BASE, logLevel: "loud" }, /logLevel must be one of/],
      ["unknown sequence store", { ...BASE, sequenceStore: "redis" as never }, /sequenceStore must be/],
    ];
    for (const [label, options, message] of cases) {
      assert.throws(
        () => buildAllManifests(options),
        (err: unknown) => {
          assert.ok(err instanceof DeploymentOptionsError, label);
          assert.match(err.message, message, label);
          return true;
        },
      );
    }
  });
});

describe("match conditions (evaluated as CEL, with the variables the API server binds)", () => {
  const o = resolveOptions({
    ...BASE,
    rescheduleInterruptedBarePods: true,
    driverUsers: ["driver", "it's-me"],
  });
  const pod = (namespace: string) => ({ metadata: { name: "the-pod", namespace } });
  function matches(fn: "mutate-create" | "reschedule-delete", vars: Record<string, unknown>): boolean {
    // The API server calls the webhook only when every condition is true.
    return matchConditionsFor(o, fn).every((mc) => evaluate(mc.expression, vars) === true);
  }

  it("mutate-create sees pods in virtual namespaces only", () => {
    const request = { operation: "CREATE", userInfo: { username: "driver" } };
    assert.equal(
      matches("mutate-create", { object: pod("virtual-test-namespace"), oldObject: null, request }),
      true,
    );
    assert.equal(
      matches("mutate-create", { object: pod("test-namespace"), oldObject: null, request }),
      false,
    );
    assert.equal(matches("mutate-create", { object: pod("virtualx-ns"), oldObject: null, request }), false);
  });

  it("reschedule-delete reads oldObject (object is null on DELETE) and skips the driver's own deletes", () => {
    const del = (username: string, namespace: string) => ({
      object: null,
      oldObject: pod(namespace),
      request: { operation: "DELETE", userInfo: { username } },
    });
    assert.equal(matches("reschedule-delete", del("system:node:n1", "virtual-ns")), true);
    assert.equal(matches("reschedule-delete", del("system:node:n1", "default")), false);
    assert.equal(matches("reschedule-delete", del("driver", "virtual-ns")), false);
    assert.equal(matches("reschedule-delete", del("it's-me", "virtual-ns")), false, "quotes are escaped");
    // What the DELETE condition would do if it read `object` like mutate-create's: an evaluation error.
    assert.throws(() => evaluate("object.metadata.namespace.startsWith('virtual-')", del("x", "virtual-ns")));
  });

  it("reschedule-delete skips the teardown controllers' first-phase deletes and undisrupted final phases", () => {
    const disrupted = { conditions: [{ type: "DisruptionTarget", status: "True" }] };
    const del = (username: string, deletionTimestamp?: string, status: object = { phase: "Running" }) => ({
      object: null,
      oldObject: {
        metadata: { ...pod("virtual-ns").metadata, ...(deletionTimestamp ? { deletionTimestamp } : {}) },
        status,
      },
      request: { operation: "DELETE", userInfo: { username } },
    });
    const terminating = "2024-01-01T00:00:30Z";
    for (const controller of [GARBAGE_COLLECTOR_USER, NAMESPACE_CONTROLLER_USER]) {
      assert.equal(matches("reschedule-delete", del(controller)), false, `${controller}, first phase`);
      assert.equal(
        matches("reschedule-delete", del(controller, terminating)),
        false,
        `${controller}, final phase`,
      );
      assert.equal(
        matches("reschedule-delete", del(controller, terminating, disrupted)),
        true,
        `${controller}, final phase of a disrupted pod`,
      );
    }
    assert.equal(matches("reschedule-delete", del("kubernetes-admin")), true, "a user's delete");
    assert.equal(matches("reschedule-delete", del(KWOK_USER, terminating)), false, "KWOK's final delete");
    assert.equal(
      matches("reschedule-delete", del(KWOK_USER, terminating, disrupted)),
      true,
      "KWOK's final delete of an evicted pod",
    );
    assert.equal(
      matches("reschedule-delete", del(KWOK_USER, terminating, {})),
      false,
      "no status: has() is false, not an error",
    );
    assert.equal(
      matches("reschedule-delete", del(CONTROLLER_MANAGER_USER)),
      true,
      "judged on its conditions",
    );
    assert.equal(matches("reschedule-delete", del("driver")), false, "the driver's, as before");
  });
});

describe("Knative Services", () => {
  it("one per function, scale-to-zero by default, port 8080 http1, /readyz readiness, /healthz liveness, env for serve", () => {
    const services = buildServices({
      ...BASE,
      rescheduleInterruptedBarePods: true,
      tracePath: "https://t/x.sktrace",
    });
    assert.deepEqual(
      services.map((s) => s.metadata?.name),
      ["simkube-fn-mutate-create", "simkube-fn-reschedule-delete"],
    );
    const [mc, rd] = services;
    assert.ok(mc?.spec?.template && rd?.spec?.template);
    const annotations = mc.spec.template.metadata?.annotations ?? {};
    assert.equal(annotations["autoscaling.knative.dev/min-scale"], "0");
    assert.equal(annotations["autoscaling.knative.dev/max-scale"], "3");
    assert.equal(rd.spec.template.metadata?.annotations?.["autoscaling.knative.dev/max-scale"], "10");
    const spec = mc.spec.template.spec;
    assert.ok(spec);
    assert.equal(spec.serviceAccountName, "simkube-fn-mutate-create");
    assert.equal(rd.spec.template.spec?.serviceAccountName, "simkube-fn-reschedule-delete");
    const [container] = spec.containers;
    assert.ok(container);
    assert.deepEqual(container.args, ["serve", "mutate-create"]);
    assert.deepEqual(container.ports, [{ name: "http1", containerPort: 8080 }]);
    assert.deepEqual(container.readinessProbe, { httpGet: { path: "/readyz" } });
    assert.deepEqual(container.livenessProbe, {
      httpGet: { path: "/healthz" },
      periodSeconds: 10,
      timeoutSeconds: 5,
      failureThreshold: 3,
    });
    assert.deepEqual(container.env, [
      { name: "SIM_NAME", value: "test-sim" },
      { name: "TRACE_PATH", value: "https://t/x.sktrace" },
      { name: "LOG_LEVEL", value: "info" },
      { name: "DRIVER_USERS", value: DEFAULT_DRIVER_USERS.join(",") },
      { name: "SEQUENCE_STORE", value: "cluster" },
      { name: "POD_NAMESPACE", value: "simkube-fn" },
      { name: "RESCHEDULE_SERVED", value: "true" },
    ]);
    assert.ok(!container.env?.some((e) => e.name === "PORT"), "PORT is Knative's to set");
    assert.equal(mc.metadata?.labels?.["networking.knative.dev/visibility"], undefined, "url mode: external");
  });

  it("memory per replica bounds concurrency: 32 reviews of up to 3 MiB and a trace load at the cap under a 1Gi limit (measured peak 720 MiB)", () => {
    for (const svc of buildServices({ ...BASE, rescheduleInterruptedBarePods: true })) {
      const spec = svc.spec?.template?.spec;
      assert.equal(spec?.containerConcurrency, 32, svc.metadata?.name);
      assert.deepEqual(spec?.containers[0]?.resources?.limits, { memory: "1Gi" });
    }
  });

  it("service mode keeps the Services cluster-local; minScale and maxScale are options", () => {
    const [svc] = buildServices({
      simName: "s",
      webhookMode: "service",
      minScale: 2,
      maxScale: { "mutate-create": 5 },
    });
    assert.equal(svc?.metadata?.labels?.["networking.knative.dev/visibility"], "cluster-local");
    assert.equal(svc?.spec?.template?.spec?.serviceAccountName, "simkube-fn-mutate-create");
    assert.equal(svc?.spec?.template?.metadata?.annotations?.["autoscaling.knative.dev/min-scale"], "2");
    assert.equal(svc?.spec?.template?.metadata?.annotations?.["autoscaling.knative.dev/max-scale"], "5");
  });
});

describe("RBAC (structure; the verbs are derived from the functions' calls in rbac.test.ts)", () => {
  const objects = buildRbac({ ...BASE, namespace: "sims", rescheduleInterruptedBarePods: true });
  const named = (kind: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata?.name === name) as Manifest | undefined;

  it("one ServiceAccount per function, each bound to its own ClusterRole only", () => {
    assert.deepEqual(
      objects
        .filter((o) => o.kind === "ServiceAccount")
        .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
      ["sims/simkube-fn-mutate-create", "sims/simkube-fn-reschedule-delete"],
    );
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const name = `simkube-fn-${fn}`;
      const binding = named("ClusterRoleBinding", name) as unknown as ClusterRoleBinding;
      assert.deepEqual(binding.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name });
      assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name, namespace: "sims" }]);
    }
  });

  it("only mutate-create may touch ConfigMaps, and only in its own namespace", () => {
    const roles = objects.filter((o) => o.kind === "Role") as Role[];
    assert.deepEqual(
      roles.map((r) => `${r.metadata?.namespace}/${r.metadata?.name}`),
      ["sims/simkube-fn-mutate-create-sequences"],
    );
    const binding = named("RoleBinding", "simkube-fn-mutate-create-sequences") as unknown as RoleBinding;
    assert.deepEqual(binding.subjects, [
      { kind: "ServiceAccount", name: "simkube-fn-mutate-create", namespace: "sims" },
    ]);
    for (const o of objects.filter((x) => x.kind === "ClusterRole") as ClusterRole[]) {
      assert.ok(
        !(o.rules ?? []).some((r) => r.resources?.includes("configmaps")),
        `${o.metadata?.name}: no cluster-wide ConfigMaps`,
      );
    }
    const memory = buildRbac({ ...BASE, sequenceStore: "memory" });
    assert.ok(!memory.some((o) => o.kind === "Role"), "no sequence Role with the memory store");
  });

  it("only reschedule-delete may create pods; nobody may list, watch, delete or update them", () => {
    const podVerbs = (fn: string) =>
      ((named("ClusterRole", `simkube-fn-${fn}`) as unknown as ClusterRole).rules ?? [])
        .filter((r) => r.apiGroups?.includes("") && r.resources?.includes("pods"))
        .flatMap((r) => r.verbs);
    assert.deepEqual(podVerbs("mutate-create"), []);
    assert.deepEqual(podVerbs("reschedule-delete").sort(), ["create", "get"]);
  });

  it("extra rules for custom owner kinds go to mutate-create, the one that follows owner chains", () => {
    const extra = { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["get"] };
    const rbac = buildRbac({ ...BASE, rescheduleInterruptedBarePods: true, extraRules: [extra] });
    const rules = (name: string) =>
      (rbac.find((o) => o.kind === "ClusterRole" && o.metadata?.name === name) as ClusterRole).rules ?? [];
    assert.deepEqual(rules("simkube-fn-mutate-create").at(-1), extra);
    assert.ok(!rules("simkube-fn-reschedule-delete").some((r) => r.apiGroups?.includes("example.com")));
  });
});

describe("webhook scoping: namespaceSelector as well as match conditions", () => {
  it("selects namespaces labelled simkube.io/virtual=true and excludes the functions' and the platform's", () => {
    const config = buildWebhookConfiguration({
      ...BASE,
      namespace: "fns",
      rescheduleInterruptedBarePods: true,
    });
    for (const wh of config.webhooks ?? []) {
      assert.deepEqual(wh.namespaceSelector, {
        matchLabels: { "simkube.io/virtual": "true" },
        matchExpressions: [
          {
            key: "kubernetes.io/metadata.name",
            operator: "NotIn",
            values: ["fns", "knative-serving", "kourier-system", "cert-manager", "kube-system"],
          },
        ],
      });
    }
    const openfaas = buildWebhookConfiguration({ ...BASE, target: "openfaas" });
    assert.deepEqual(openfaas.webhooks?.[0]?.namespaceSelector?.matchExpressions?.[0]?.values, [
      "openfaas-fn",
      "openfaas",
      "cert-manager",
      "kube-system",
    ]);
  });

  it("the selector as the API server applies it: labels and the name both decide", () => {
    const selector = buildWebhookConfiguration(BASE).webhooks?.[0]?.namespaceSelector;
    assert.ok(selector);
    const selects = (name: string, labels: Record<string, string>) => {
      const all: Record<string, string> = { ...labels, "kubernetes.io/metadata.name": name };
      const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => all[k] === v);
      const byExpressions = (selector.matchExpressions ?? []).every((e) =>
        e.operator === "NotIn" ? !(e.values ?? []).includes(all[e.key] ?? "") : false,
      );
      return byLabels && byExpressions;
    };
    assert.equal(selects("virtual-ns", { "simkube.io/virtual": "true" }), true);
    assert.equal(selects("virtual-ns", {}), false, "unlabelled");
    assert.equal(
      selects("kube-system", { "simkube.io/virtual": "true" }),
      false,
      "excluded even if labelled",
    );
    assert.equal(selects("simkube-fn", { "simkube.io/virtual": "true" }), false, "the functions' own");
  });

  it("--virtual-ns-prefix drives the match conditions", () => {
    const o = resolveOptions({ ...BASE, virtualNsPrefix: "sim", rescheduleInterruptedBarePods: true });
    const request = { operation: "CREATE", userInfo: { username: "u" } };
    const passes = (ns: string) =>
      matchConditionsFor(o, "mutate-create").every(
        (mc) =>
          evaluate(mc.expression, { object: { metadata: { namespace: ns } }, oldObject: null, request }) ===
          true,
      );
    assert.equal(passes("sim-a"), true);
    assert.equal(passes("virtual-a"), false);
    assert.throws(() => buildAllManifests({ ...BASE, virtualNsPrefix: "Not_A_Label" }), /DNS-1123/);
  });
});

describe("caller authentication: the path secret", () => {
  it("is the last segment of every webhook path, url and service mode, Knative and OpenFaaS", () => {
    const url = buildWebhookConfiguration({
      ...BASE,
      pathSecret: SECRET,
      rescheduleInterruptedBarePods: true,
    });
    assert.deepEqual(
      url.webhooks?.map((w) => w.clientConfig.url),
      [
        `https://simkube-fn-mutate-create.simkube-fn.fn.example.com/${SECRET}`,
        `https://simkube-fn-reschedule-delete.simkube-fn.fn.example.com/${SECRET}`,
      ],
    );
    const service = buildWebhookConfiguration({ simName: "s", webhookMode: "service", pathSecret: SECRET });
    assert.equal(service.webhooks?.[0]?.clientConfig.service?.path, `/${SECRET}`);
    const openfaas = buildWebhookConfiguration({ ...BASE, target: "openfaas", pathSecret: SECRET });
    assert.equal(
      openfaas.webhooks?.[0]?.clientConfig.url,
      `https://fn.example.com/function/simkube-fn-mutate-create/${SECRET}`,
    );
  });

  it("reaches the function from a Secret, never as a literal in the Service", () => {
    const objects = buildAllManifests({ ...BASE, pathSecret: SECRET, namespace: "fns" });
    const secret = byKind(objects, "Secret")[0] as unknown as Secret;
    assert.equal(secret.metadata?.namespace, "fns");
    assert.deepEqual(secret.stringData, { "path-secret": SECRET });
    const [svc] = byKind(objects, "Service") as unknown as KnativeServiceModel[];
    const env = svc?.spec?.template?.spec?.containers[0]?.env ?? [];
    assert.deepEqual(
      env.find((e) => e.name === "WEBHOOK_PATH_SECRET"),
      {
        name: "WEBHOOK_PATH_SECRET",
        valueFrom: { secretKeyRef: { name: secret.metadata?.name, key: "path-secret" } },
      },
    );
    assert.ok(!JSON.stringify(svc).includes(SECRET));
    // A new secret makes a new revision, so running pods never keep an old one the webhook no longer uses.
    const digest = (secret: string) =>
      (
        byKind(
          buildAllManifests({ ...BASE, pathSecret: secret }),
          "Service",
        )[0] as unknown as KnativeServiceModel
      ).spec?.template?.metadata?.annotations?.["simkube.io/webhook-path-secret-sha256"];
    assert.match(digest(SECRET) ?? "", /^[0-9a-f]{16}$/);
    assert.notEqual(digest(SECRET), digest(`${SECRET}-rotated`));
    assert.equal(byKind(buildAllManifests(BASE), "Secret").length, 0, "no secret asked for, none rendered");
  });

  it("refuses a secret that is short or not one URL path segment", () => {
    for (const bad of ["short", `${"a".repeat(30)}/x`, `${"a".repeat(30)}?x`, "a".repeat(257)]) {
      assert.throws(() => buildAllManifests({ ...BASE, pathSecret: bad }), /pathSecret must be/);
    }
  });

  it("in service mode takes only what the API server accepts in a Service path, and makes such secrets itself", () => {
    // The API server refused the base64url secrets once made here: "service.path ... a lowercase RFC 1123".
    const service = { ...BASE, webhookMode: "service" as const };
    for (const bad of [
      "MixedCase0123456789abcdefXYZ",
      "under_score_0123456789abcdef",
      "-starts-with-a-dash-0123456789",
    ]) {
      assert.throws(
        () => buildAllManifests({ ...service, pathSecret: bad }),
        /service mode must be lowercase/,
      );
    }
    for (let i = 0; i < 20; i += 1) {
      const secret = newPathSecret();
      assert.match(secret, /^[0-9a-f]{64}$/);
      assert.doesNotThrow(() => buildAllManifests({ ...service, pathSecret: secret }));
    }
  });
});

describe("pod-create policy (ValidatingAdmissionPolicy, CEL evaluated as the API server binds it)", () => {
  const objects = buildAllManifests({ ...BASE, namespace: "fns", rescheduleInterruptedBarePods: true });
  const policy = byKind(objects, "ValidatingAdmissionPolicy")[0] as unknown as ValidatingAdmissionPolicy;
  const binding = byKind(
    objects,
    "ValidatingAdmissionPolicyBinding",
  )[0] as unknown as ValidatingAdmissionPolicyBinding;
  const spec = policy.spec;
  assert.ok(spec);
  const fnUser = "system:serviceaccount:fns:simkube-fn-reschedule-delete";
  const virtualNs = { metadata: { name: "virtual-a", labels: { "simkube.io/virtual": "true" } } };
  const clone = {
    metadata: { name: "p-clone-1" },
    spec: { nodeSelector: { type: "virtual" }, containers: [] },
  };

  function judged(username: string): boolean {
    return (spec?.matchConditions ?? []).every(
      (mc) => evaluate(mc.expression, { request: { userInfo: { username } } }) === true,
    );
  }
  function admitted(object: unknown, namespaceObject: unknown): boolean {
    return (spec?.validations ?? []).every(
      (v) => evaluate(v.expression, { object, namespaceObject }) === true,
    );
  }

  it("judges pod CREATEs of the functions' accounts only, and denies what fails", () => {
    assert.deepEqual(spec.matchConstraints?.resourceRules, [
      { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
    ]);
    assert.equal(spec.failurePolicy, "Fail");
    assert.deepEqual(binding.spec?.policyName, policy.metadata?.name);
    assert.deepEqual(binding.spec?.validationActions, ["Deny"]);
    assert.equal(judged(fnUser), true);
    assert.equal(judged("system:serviceaccount:fns:simkube-fn-mutate-create"), true);
    assert.equal(judged("system:serviceaccount:simkube:sk-ctrl-sa"), false, "the driver is not judged");
    assert.equal(judged("system:serviceaccount:other:simkube-fn-reschedule-delete"), false);
  });

  it("allows a clone pinned to virtual nodes in a virtual namespace", () => {
    assert.equal(admitted(clone, virtualNs), true);
  });

  it("refuses the escalated clone: kube-system, an unlabelled or falsely labelled namespace", () => {
    const kubeSystem = {
      metadata: { name: "kube-system", labels: { "kubernetes.io/metadata.name": "kube-system" } },
    };
    assert.equal(admitted(clone, kubeSystem), false);
    assert.equal(admitted(clone, { metadata: { name: "bare" } }), false, "no labels at all");
    assert.equal(
      admitted(clone, { metadata: { name: "x", labels: { "simkube.io/virtual": "false" } } }),
      false,
    );
  });

  it("refuses a pod without the virtual node selector, or pinned elsewhere", () => {
    assert.equal(admitted({ spec: { containers: [] } }, virtualNs), false);
    assert.equal(admitted({ spec: { nodeSelector: { type: "real" } } }, virtualNs), false);
    assert.equal(admitted({ spec: { nodeSelector: { zone: "virtual" } } }, virtualNs), false);
  });

  it("is rendered before the accounts it guards", () => {
    const kinds = objects.map((o) => o.kind);
    assert.ok(kinds.indexOf("ValidatingAdmissionPolicyBinding") < kinds.indexOf("ServiceAccount"));
  });
});

describe("one deployment for every simulation (no simName)", () => {
  const { simName: _sim, ...EVERY } = BASE;

  it("sets no SIM_NAME and no simulation label, renders no webhook configuration, and says how to add one", () => {
    const out = renderDeployment({ ...EVERY, rescheduleInterruptedBarePods: true });
    const objects = parseAllDocuments(out).map((d) => d.toJS() as Manifest);
    assert.ok(!objects.some((o) => o.kind === "MutatingWebhookConfiguration"));
    assert.doesNotMatch(out, /SIM_NAME|simkube.io\/simulation/);
    assert.match(out, /every simulation/);
    assert.match(out, /manifests webhook --sim-name NAME/);
    assert.ok(
      objects.some((o) => o.kind === "Service"),
      "the functions are still deployed",
    );
  });

  it("lets mutate-create read namespaces only then (a virtual namespace's Simulation is read from it)", () => {
    const rulesOf = (options: DeploymentOptions) =>
      buildRbac(options)
        .filter((o) => o.kind === "ClusterRole" && o.metadata?.name?.endsWith("mutate-create"))
        .flatMap((o) => ("rules" in o ? (o.rules ?? []) : []));
    const readsNamespaces = (options: DeploymentOptions) =>
      rulesOf(options).some((rule) => rule.resources?.includes("namespaces"));
    assert.equal(readsNamespaces(EVERY), true);
    assert.equal(readsNamespaces(BASE), false);
  });
});

describe("rescheduling follows the Simulation: reschedule-delete by default, --no-reschedule leaves it out", () => {
  const { simName: _sim, ...EVERY } = BASE;
  const kinds = (objects: readonly Manifest[]) => objects.map((o) => `${o.kind}/${o.metadata?.name ?? ""}`);
  const envOf = (options: DeploymentOptions) =>
    buildServices(options)[0]?.spec?.template?.spec?.containers?.[0]?.env ?? [];

  for (const [what, options] of [
    ["every simulation", EVERY],
    ["one simulation", BASE],
  ] as const) {
    it(`${what}: reschedule-delete and its DELETE webhook unless turned off, as with --reschedule`, () => {
      const byDefault = buildAllManifests(options);
      assert.ok(kinds(byDefault).includes("Service/simkube-fn-reschedule-delete"));
      assert.deepEqual(byDefault, buildAllManifests({ ...options, rescheduleInterruptedBarePods: true }));
      assert.deepEqual(
        buildWebhookConfiguration(options).webhooks?.map((w) => w.rules?.[0]?.operations),
        [["CREATE", "UPDATE"], ["DELETE"]],
      );
      assert.ok(envOf(options).some((e) => e.name === "RESCHEDULE_SERVED" && e.value === "true"));
      const off = buildAllManifests({ ...options, rescheduleInterruptedBarePods: false });
      assert.ok(!kinds(off).some((k) => k.includes("reschedule-delete")), kinds(off).join(", "));
      const offEnv = envOf({ ...options, rescheduleInterruptedBarePods: false });
      assert.ok(offEnv.some((e) => e.name === "RESCHEDULE_SERVED" && e.value === "false"));
    });
  }

  it("turned off: mutate-create may create Events in default, and only then (a Simulation's Events live there)", () => {
    const eventRoles = (options: DeploymentOptions) =>
      buildRbac(options).filter((o) => o.metadata?.name === "simkube-fn-mutate-create-simulation-events");
    assert.deepEqual(eventRoles(EVERY), [], "nothing to say when reschedule-delete is deployed");
    const [role, binding] = eventRoles({ ...EVERY, rescheduleInterruptedBarePods: false });
    assert.ok(role && binding && "rules" in role && "roleRef" in binding);
    assert.equal(role.kind, "Role");
    assert.equal(role.metadata?.namespace, "default");
    assert.deepEqual(role.rules, [{ apiGroups: [""], resources: ["events"], verbs: ["create"] }]);
    assert.equal(binding.metadata?.namespace, "default");
    assert.deepEqual(binding.subjects, [
      { kind: "ServiceAccount", name: "simkube-fn-mutate-create", namespace: "simkube-fn" },
    ]);
    new Role(role as Role).validate();
    new RoleBinding(binding as RoleBinding).validate();
  });
});

describe("renderDeployment", () => {
  it("knative: RBAC, then Services, then the webhook configuration", () => {
    const out = renderDeployment({ ...BASE, rescheduleInterruptedBarePods: true });
    assert.match(out, /^# Generated by simkube-fn manifests --target knative/);
    const kinds = parseAllDocuments(out).map((d) => (d.toJS() as Manifest).kind);
    assert.deepEqual(kinds, [
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Service",
      "Service",
      "MutatingWebhookConfiguration",
    ]);
    assert.match(out, /autoscaling.knative.dev\/min-scale: "0"/, "annotation values stay strings");
  });

  it("openfaas: RBAC and the webhook configuration, no Knative Services", () => {
    const out = renderDeployment({ ...BASE, target: "openfaas" });
    const kinds = parseAllDocuments(out).map((d) => (d.toJS() as Manifest).kind);
    assert.ok(!kinds.includes("Service"));
    assert.equal(kinds.at(-1), "MutatingWebhookConfiguration");
    assert.match(out, /namespace: openfaas-fn/);
  });

  it("openfaas-stack: one stack.yml document for faas-cli", () => {
    const out = renderDeployment({
      simName: "s",
      target: "openfaas-stack",
      rescheduleInterruptedBarePods: true,
    });
    const docs = parseAllDocuments(out);
    assert.equal(docs.length, 1);
    const stack = parse(out) as { provider: { name: string }; functions: Record<string, unknown> };
    assert.equal(stack.provider.name, "openfaas");
    assert.deepEqual(Object.keys(stack.functions), [
      "simkube-fn-mutate-create",
      "simkube-fn-reschedule-delete",
    ]);
  });

  it("bad options throw one clear error", () => {
    assert.throws(
      () => renderDeployment({ simName: "s", target: "lambda" as never }),
      /target must be one of/,
    );
  });
});
