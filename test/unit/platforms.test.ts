// Every rendered stream per --platform and OpenFaaS edition, from the command line's flags to the YAML:
// each document against its published schema, then the rules the API server, Knative, cert-manager and
// OpenFaaS CE apply that a schema does not carry.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { caBundleFromPem } from "../../functions/cli/manifests/command.js";
import { renderDeployment, renderSimulationWebhook } from "../../knative/manifests.js";
import type { StackFile } from "../../knative/openfaas-stack.js";
import { DeploymentOptionsError } from "../../knative/options.js";
import { validateAgainstSchema } from "../support/manifest-schemas.js";

type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: webhooks are read field by field below
  webhooks?: any[];
  subjects?: { name: string; namespace: string }[];
};

const SECRET = "0123456789abcdef0123456789abcdef";
const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const CA_BUNDLE = caBundleFromPem("ca.pem", CA_PEM);

/** The CLI's own parsing, then the renderer, as `simkube-fn manifests ARGS` would print it. */
function render(args: string[]): Doc[] {
  const command = parseManifestsArgs([...args, "--path-secret", SECRET]);
  assert.notEqual(command.kind, "help");
  if (command.kind === "help") return [];
  const options = { ...command.options, ...(command.caBundleFile ? { caBundle: CA_BUNDLE } : {}) };
  const text = command.kind === "webhook" ? renderSimulationWebhook(options) : renderDeployment(options);
  return parseAllDocuments(text).map((d) => d.toJSON() as Doc);
}

function only(docs: Doc[], kind: string, name?: string): Doc {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `one ${kind} ${name ?? ""}`);
  return found[0] as Doc;
}

const PLATFORM_NAMESPACES = ["knative-serving", "kourier-system", "cert-manager", "kube-system"];

/** No webhook may see the functions' own pods (a scale from zero would wait on itself) or the platform's. */
function assertScoped(config: Doc, functionsNamespace: string, platform: string[]): void {
  for (const wh of config.webhooks ?? []) {
    const excluded = wh.namespaceSelector.matchExpressions.find(
      (e: { key: string }) => e.key === "kubernetes.io/metadata.name",
    );
    assert.equal(excluded.operator, "NotIn");
    for (const ns of [functionsNamespace, ...platform])
      assert.ok(excluded.values.includes(ns), `${wh.name} excludes ${ns}`);
    assert.deepEqual(wh.namespaceSelector.matchLabels, { "simkube.io/virtual": "true" });
  }
}

/** The API server trusts the endpoint: a caBundle on every webhook, or cert-manager's injection. */
function trustOf(config: Doc): "caBundle" | "injector" | "system roots" {
  const bundles = (config.webhooks ?? []).map((w) => w.clientConfig.caBundle);
  if (bundles.every((b: unknown) => typeof b === "string" && b.length > 0)) return "caBundle";
  if (config.metadata.annotations?.["cert-manager.io/inject-ca-from"]) return "injector";
  return "system roots";
}

/**
 * What OpenFaaS CE's gateway refuses, restated from faas-netes pkg/handlers/validate.go (validateScalingLabels)
 * and replica_reader.go (MaxReplicas = 5): scale to zero, its duration, target and type, and min or max above 5.
 */
function ceRefusal(labels: Record<string, string>): string | undefined {
  if (labels["com.openfaas.scale.zero"] === "true") return "scale.zero";
  for (const key of ["zero-duration", "target", "type"]) {
    if (`com.openfaas.scale.${key}` in labels) return `scale.${key}`;
  }
  for (const key of ["max", "min"]) {
    const value = Number.parseInt(labels[`com.openfaas.scale.${key}`] ?? "", 10);
    if (value > 5) return `scale.${key} above 5`;
  }
  return undefined;
}

describe("--platform kind and k3s: gateway Service, DomainMapping and certificate per function", () => {
  for (const platform of ["kind", "k3s"]) {
    it(`${platform}: every document passes its schema; names line up from Service to webhook`, () => {
      const docs = render(["--platform", platform, "--sim-name", "s1", "--reschedule"]);
      for (const doc of docs) validateAgainstSchema(doc);
      const config = only(docs, "MutatingWebhookConfiguration");
      assert.equal(config.webhooks?.length, 2);
      for (const wh of config.webhooks ?? []) {
        const { name, namespace, port, path } = wh.clientConfig.service;
        assert.equal(namespace, "kourier-system");
        assert.equal(port, 443);
        assert.equal(path, `/${SECRET}`);
        const host = `${name}.${namespace}.svc`;
        const service = only(
          docs.filter((d) => d.apiVersion === "v1"),
          "Service",
          name,
        );
        assert.equal(service.metadata.namespace, "kourier-system");
        assert.deepEqual(service.spec?.selector, { app: "3scale-kourier-gateway" });
        assert.deepEqual(service.spec?.ports, [
          { name: "https", port: 443, targetPort: 8443, protocol: "TCP" },
        ]);
        assert.equal(
          (only(docs, "ClusterDomainClaim", host).spec as { namespace: string }).namespace,
          "simkube-fn",
        );
        const mapping = only(docs, "DomainMapping", host);
        assert.equal(
          mapping.metadata.namespace,
          "simkube-fn",
          "in the ksvc's namespace, which the claim allows",
        );
        const spec = mapping.spec as { ref: { name: string; kind: string }; tls: { secretName: string } };
        assert.equal(spec.ref.kind, "Service");
        const ksvc = docs.find(
          (d) => d.apiVersion === "serving.knative.dev/v1" && d.metadata.name === spec.ref.name,
        );
        assert.ok(ksvc, "the DomainMapping points at a rendered Knative Service");
        const cert = docs.find((d) => d.kind === "Certificate" && d.spec?.secretName === spec.tls.secretName);
        assert.ok(cert, "the DomainMapping serves a Certificate's Secret");
        assert.deepEqual(cert.spec?.dnsNames, [host], "for exactly the name the API server sends as SNI");
        assert.equal(cert.metadata.namespace, "simkube-fn");
      }
      assertScoped(config, "simkube-fn", PLATFORM_NAMESPACES);
    });
  }

  it("a CA of its own, injected from its Certificate; --issuer uses the user's and injects from a leaf", () => {
    const docs = render(["--platform", "kind", "--sim-name", "s1"]);
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(trustOf(config), "injector");
    const [ns, name] = (config.metadata.annotations?.["cert-manager.io/inject-ca-from"] ?? "").split("/");
    const ca = only(docs, "Certificate", name);
    assert.equal(ca.metadata.namespace, ns);
    assert.equal(ca.metadata.namespace, "cert-manager", "a ClusterIssuer reads its CA Secret there");
    assert.equal(ca.spec?.isCA, true);
    const issuer = only(docs, "ClusterIssuer", name);
    assert.deepEqual(issuer.spec, { ca: { secretName: ca.spec?.secretName } });
    const leaf = only(docs, "Certificate", "simkube-fn-mutate-create-tls");
    assert.equal((leaf.spec?.issuerRef as { name?: string } | undefined)?.name, name);

    const own = render(["--platform", "k3s", "--sim-name", "s1", "--issuer", "corp-ca"]);
    assert.equal(own.filter((d) => d.kind === "ClusterIssuer").length, 0, "no CA of our own");
    assert.equal(
      (
        only(own, "Certificate", "simkube-fn-mutate-create-tls").spec?.issuerRef as
          | { name?: string }
          | undefined
      )?.name,
      "corp-ca",
    );
    assert.equal(
      only(own, "MutatingWebhookConfiguration").metadata.annotations?.["cert-manager.io/inject-ca-from"],
      "simkube-fn/simkube-fn-mutate-create-tls",
    );
  });

  it("flags move the namespaces; --ca-bundle replaces the injector; a url mode is refused", () => {
    const docs = render([
      "--platform",
      "kind",
      "--sim-name",
      "s1",
      "--namespace",
      "sims",
      "--kourier-namespace",
      "ingress",
      "--cert-manager-namespace",
      "cm",
      "--ca-bundle",
      "ca.pem",
    ]);
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(config.webhooks?.[0]?.clientConfig.service.namespace, "ingress");
    assert.equal(trustOf(config), "caBundle");
    assert.equal(config.metadata.annotations, undefined);
    assertScoped(config, "sims", ["knative-serving", "ingress", "cm", "kube-system"]);
    assert.equal(only(docs, "Certificate", "simkube-fn-ca").metadata.namespace, "cm");
    assert.throws(
      () => render(["--platform", "kind", "--sim-name", "s", "--webhook-mode", "url"]),
      /service/,
    );
    assert.throws(() => render(["--platform", "kind", "--sim-name", "s", "--target", "openfaas"]), /knative/);
  });
});

describe("--platform managed: url mode under --domain", () => {
  it("passes the schemas; Knative's host names; public CA by default, caBundle or injector on request", () => {
    const docs = render([
      "--platform",
      "managed",
      "--sim-name",
      "s1",
      "--domain",
      "fn.example.com",
      "--reschedule",
    ]);
    for (const doc of docs) validateAgainstSchema(doc);
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(
      config.webhooks?.[0]?.clientConfig.url,
      `https://simkube-fn-mutate-create.simkube-fn.fn.example.com/${SECRET}`,
    );
    assert.equal(trustOf(config), "system roots");
    assert.equal(docs.filter((d) => d.kind === "DomainMapping" || d.kind === "Certificate").length, 0);
    assertScoped(config, "simkube-fn", PLATFORM_NAMESPACES);
    const withCa = render([
      "--platform",
      "managed",
      "--sim-name",
      "s",
      "--domain",
      "fn.example.com",
      "--ca-bundle",
      "x",
    ]);
    assert.equal(trustOf(only(withCa, "MutatingWebhookConfiguration")), "caBundle");
    const injected = render([
      "--platform",
      "managed",
      "--sim-name",
      "s",
      "--domain",
      "d.io",
      "--ca-inject-from",
      "a/b",
    ]);
    assert.equal(trustOf(only(injected, "MutatingWebhookConfiguration")), "injector");
    assert.throws(() => render(["--platform", "managed", "--sim-name", "s"]), /--domain/);
    assert.throws(
      () => render(["--platform", "managed", "--sim-name", "s", "--domain", "not a domain"]),
      /DNS name/,
    );
  });
});

describe("--platform openfaas: the gateway, Community Edition and Pro", () => {
  const OPENFAAS_NAMESPACES = ["openfaas", "cert-manager", "kube-system"];

  it("kubectl output passes the schemas; CE binds the roles to openfaas-fn:default and creates no account", () => {
    const docs = render([
      "--platform",
      "openfaas",
      "--sim-name",
      "s1",
      "--gateway-url",
      "https://gw.example.com",
      "--reschedule",
    ]);
    for (const doc of docs) validateAgainstSchema(doc);
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(
      config.webhooks?.[1]?.clientConfig.url,
      `https://gw.example.com/function/simkube-fn-reschedule-delete/${SECRET}`,
    );
    assertScoped(config, "openfaas-fn", OPENFAAS_NAMESPACES);
    assert.equal(
      docs.filter((d) => d.kind === "ServiceAccount").length,
      0,
      "CE ignores com.openfaas.serviceaccount",
    );
    for (const binding of docs.filter((d) => d.kind.endsWith("RoleBinding"))) {
      assert.deepEqual(binding.subjects, [
        { kind: "ServiceAccount", name: "default", namespace: "openfaas-fn" },
      ]);
    }
    const policy = only(docs, "ValidatingAdmissionPolicy");
    assert.match(
      JSON.stringify(policy.spec),
      /system:serviceaccount:openfaas-fn:default'\]/,
      "the policy fences that account",
    );
  });

  it("Pro: an account per function, bound; the policy names both", () => {
    const docs = render([
      "--platform",
      "openfaas",
      "--sim-name",
      "s1",
      "--gateway-url",
      "https://gw",
      "--reschedule",
      "--openfaas-edition",
      "pro",
    ]);
    for (const doc of docs) validateAgainstSchema(doc);
    assert.deepEqual(
      docs.filter((d) => d.kind === "ServiceAccount").map((d) => d.metadata.name),
      ["simkube-fn-mutate-create", "simkube-fn-reschedule-delete"],
    );
  });

  it("CE stack.yml: labels its gateway accepts, whatever the scale flags ask; larger asks are refused", () => {
    for (const extra of [
      [],
      ["--min-scale", "0"],
      ["--min-scale-reschedule-delete", "5", "--max-scale-reschedule-delete", "5"],
    ]) {
      const [stack] = render([
        "--platform",
        "openfaas",
        "--target",
        "openfaas-stack",
        "--sim-name",
        "s",
        "--reschedule",
        ...extra,
      ]) as unknown as StackFile[];
      assert.ok(stack);
      for (const [name, fn] of Object.entries(stack.functions)) {
        assert.equal(ceRefusal(fn.labels), undefined, `${name}: ${JSON.stringify(fn.labels)}`);
        assert.deepEqual(fn.annotations, {}, "no Pro-only service account annotation");
      }
    }
    assert.throws(
      () =>
        render([
          "--platform",
          "openfaas",
          "--target",
          "openfaas-stack",
          "--sim-name",
          "s",
          "--max-scale-mutate-create",
          "6",
        ]),
      /Community Edition allows at most 5/,
    );
    assert.throws(
      () =>
        render([
          "--platform",
          "openfaas",
          "--target",
          "openfaas-stack",
          "--sim-name",
          "s",
          "--min-scale",
          "6",
          "--max-scale-mutate-create",
          "6",
        ]),
      /Community Edition/,
    );
  });

  it("Pro stack.yml keeps scale to zero, which CE's rules would refuse (the check can fail)", () => {
    const [stack] = render([
      "--platform",
      "openfaas",
      "--target",
      "openfaas-stack",
      "--sim-name",
      "s",
      "--reschedule",
      "--openfaas-edition",
      "pro",
    ]) as unknown as StackFile[];
    const mc = stack?.functions["simkube-fn-mutate-create"];
    assert.equal(mc?.labels["com.openfaas.scale.zero"], "true");
    assert.equal(ceRefusal(mc?.labels ?? {}), "scale.zero");
    assert.equal(stack?.functions["simkube-fn-reschedule-delete"]?.labels["com.openfaas.scale.max"], "10");
    assert.equal(mc?.annotations["com.openfaas.serviceaccount"], "simkube-fn-mutate-create");
  });

  it("faas-cli's gateway and the API server's are two addresses: http for one, https for the other", () => {
    const base = ["--platform", "openfaas", "--sim-name", "s1", "--reschedule"];
    const both = [
      "--gateway-url",
      "http://127.0.0.1:8080",
      "--webhook-gateway-url",
      "https://gw.example.com",
    ];
    const config = only(render([...base, ...both]), "MutatingWebhookConfiguration");
    assert.equal(
      config.webhooks?.[0]?.clientConfig.url,
      `https://gw.example.com/function/simkube-fn-mutate-create/${SECRET}`,
    );
    const [stack] = render([...base, ...both, "--target", "openfaas-stack"]) as unknown as StackFile[];
    assert.equal(stack?.provider.gateway, "http://127.0.0.1:8080");
    // The usual in-cluster address alone: refused, naming the flag the API server's address goes in.
    assert.throws(
      () => render([...base, "--gateway-url", "http://gateway.openfaas:8080"]),
      /needs --webhook-gateway-url https:\/\/GATEWAY.*--gateway-url http:\/\/gateway\.openfaas:8080 is faas-cli's/,
    );
  });

  it("needs the gateway URL for the webhooks; refuses a Knative target", () => {
    assert.throws(() => render(["--platform", "openfaas", "--sim-name", "s"]), /--webhook-gateway-url/);
    assert.throws(
      () => render(["--platform", "openfaas", "--sim-name", "s", "--target", "knative"]),
      /openfaas/,
    );
  });
});

describe("manifests webhook: the per-simulation configuration stock SimKube adopts", () => {
  it("named sk-NAME-mutatepods, only that object, caBundle on the first webhook; DELETE unless --no-reschedule", () => {
    const args = [
      "webhook",
      "--platform",
      "managed",
      "--domain",
      "fn.example.com",
      "--sim-name",
      "sim-a",
      "--ca-bundle",
      "ca.pem",
    ];
    const docs = render(args);
    assert.equal(docs.length, 1);
    const config = only(docs, "MutatingWebhookConfiguration", "sk-sim-a-mutatepods");
    validateAgainstSchema(config);
    assert.deepEqual(
      config.webhooks?.map((w) => w.rules[0].operations),
      [["CREATE", "UPDATE"], ["DELETE"]],
      "the DELETE webhook by default: reschedule-delete decides per Simulation",
    );
    assert.equal(config.webhooks?.[0]?.clientConfig.caBundle, CA_BUNDLE);
    assert.ok(CA_BUNDLE.length > 0);
    assert.deepEqual(only(render([...args, "--reschedule"]), "MutatingWebhookConfiguration"), config);
    const createOnly = only(render([...args, "--no-reschedule"]), "MutatingWebhookConfiguration");
    assert.deepEqual(
      createOnly.webhooks?.map((w) => w.rules[0].operations),
      [["CREATE", "UPDATE"]],
    );
    assertScoped(config, "simkube-fn", PLATFORM_NAMESPACES);
  });

  it("kind: injected by cert-manager (SimKube waits until it is filled); no bundle and no injector is refused", () => {
    const config = only(
      render(["webhook", "--platform", "kind", "--sim-name", "sim-a"]),
      "MutatingWebhookConfiguration",
    );
    assert.equal(config.metadata.name, "sk-sim-a-mutatepods");
    assert.equal(trustOf(config), "injector");
    assert.equal(
      config.webhooks?.[0]?.clientConfig.service.path,
      `/${SECRET}`,
      "the deployment's path secret",
    );
    assert.throws(
      () => render(["webhook", "--platform", "managed", "--domain", "fn.example.com", "--sim-name", "sim-a"]),
      (err: unknown) =>
        err instanceof DeploymentOptionsError && /caBundle on its first webhook/.test(err.message),
    );
  });

  it("its header says to create it before skctl run, with create, and how to remove it; never apply", () => {
    const text = renderSimulationWebhook({
      clusterPlatform: "kind",
      simName: "sim-a",
      pathSecret: SECRET,
    });
    assert.match(text, /Create it BEFORE `skctl run sim-a`, with kubectl create \(not apply\)/);
    assert.match(text, /kubectl delete mutatingwebhookconfiguration sk-sim-a-mutatepods/);
    assert.doesNotMatch(text, /kubectl apply/);
  });

  it("the deployment can leave its own configuration out (--without-webhook), so pods are not mutated twice", () => {
    const docs = render(["--platform", "kind", "--sim-name", "s1", "--without-webhook"]);
    assert.equal(docs.filter((d) => d.kind === "MutatingWebhookConfiguration").length, 0);
    assert.ok(
      docs.some((d) => d.kind === "DomainMapping"),
      "the rest is still there",
    );
  });
});

describe("schema validators can fail", () => {
  it("a DomainMapping without ref, a Certificate without issuerRef and a claim without namespace are refused", () => {
    const bad = [
      {
        apiVersion: "serving.knative.dev/v1beta1",
        kind: "DomainMapping",
        metadata: { name: "a.b.svc" },
        spec: {},
      },
      {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: "c" },
        spec: { secretName: "c" },
      },
      {
        apiVersion: "networking.internal.knative.dev/v1alpha1",
        kind: "ClusterDomainClaim",
        metadata: { name: "a" },
        spec: {},
      },
    ];
    for (const doc of bad) assert.throws(() => validateAgainstSchema(doc), `${doc.kind} must be refused`);
  });
});

describe("--platform kubernetes: a Deployment serving TLS and a ClusterIP Service per function, no Knative", () => {
  const docs = render([
    "--platform",
    "kubernetes",
    "--sim-name",
    "s1",
    "--reschedule",
    "--ca-bundle",
    "ca.pem",
  ]);

  it("validates every document against its schema and renders no Knative or cert-manager object", () => {
    for (const doc of docs) validateAgainstSchema(doc);
    assert.deepEqual(
      docs.filter((d) => /knative|cert-manager/.test(d.apiVersion)),
      [],
      "nothing for Knative or cert-manager",
    );
  });

  it("points each webhook at its function's Service, which selects exactly that function's pods", () => {
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(trustOf(config), "caBundle");
    assertScoped(config, "simkube-fn", ["kube-system"]);
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const webhook = config.webhooks?.find((w) => w.name.startsWith(`${fn}.`));
      assert.deepEqual(webhook.clientConfig.service, {
        namespace: "simkube-fn",
        name: `simkube-fn-${fn}`,
        port: 443,
        path: `/${SECRET}`,
      });
      const service = only(docs, "Service", `simkube-fn-${fn}`);
      const deployment = only(docs, "Deployment", `simkube-fn-${fn}`);
      // biome-ignore lint/suspicious/noExplicitAny: the pod template is read field by field
      const template = (deployment.spec as any).template;
      const selector = service.spec?.selector as Record<string, string>;
      for (const [key, value] of Object.entries(selector)) assert.equal(template.metadata.labels[key], value);
      assert.deepEqual(service.spec?.ports, [{ name: "https", port: 443, targetPort: "https" }]);
      const container = template.spec.containers[0];
      assert.deepEqual(container.args, ["serve", fn]);
      assert.equal(template.spec.serviceAccountName, `simkube-fn-${fn}`);
      assert.equal(template.spec.volumes[0].secret.secretName, `simkube-fn-${fn}-tls`);
      const env = Object.fromEntries(
        container.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
      );
      assert.equal(env.PORT, "8443");
      assert.equal(env.TLS_CERT_FILE, "/etc/simkube-fn/tls/tls.crt");
      assert.ok("WEBHOOK_PATH_SECRET" in env);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    }
  });

  it("without --client-ca-secret mounts no client CA; with it, the Secret's ca.crt is CLIENT_CA_FILE", () => {
    type Env = { name: string; value?: string }[];
    const envOf = (d: Doc) => {
      const template = (d.spec as { template: { spec: { containers: { env: Env }[] } } }).template;
      return new Map(template.spec.containers[0]?.env.map((e) => [e.name, e.value]));
    };
    assert.equal(envOf(only(docs, "Deployment", "simkube-fn-mutate-create")).has("CLIENT_CA_FILE"), false);
    const withCa = render([
      "--platform",
      "kubernetes",
      "--sim-name",
      "s1",
      "--ca-bundle",
      "ca.pem",
      "--reschedule",
      "--client-ca-secret",
      "apiserver-webhook-client-ca",
    ]);
    for (const doc of withCa) validateAgainstSchema(doc);
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const deployment = only(withCa, "Deployment", `simkube-fn-${fn}`);
      // biome-ignore lint/suspicious/noExplicitAny: the pod template is read field by field
      const spec = (deployment.spec as any).template.spec;
      const file = envOf(deployment).get("CLIENT_CA_FILE") as string;
      const mount = spec.containers[0].volumeMounts.find((m: { name: string }) => m.name === "client-ca");
      assert.equal(file, `${mount.mountPath}/ca.crt`);
      assert.equal(mount.readOnly, true);
      const volume = spec.volumes.find((v: { name: string }) => v.name === "client-ca");
      assert.deepEqual(volume.secret, {
        secretName: "apiserver-webhook-client-ca",
        items: [{ key: "ca.crt", path: "ca.crt" }],
      });
    }
  });

  it("--client-cert-subject pins the client certificate: CLIENT_CERT_SUBJECTS, only with --client-ca-secret", () => {
    const base = ["--platform", "kubernetes", "--sim-name", "s1", "--ca-bundle", "ca.pem"];
    const pinned = render([
      ...base,
      "--client-ca-secret",
      "apiserver-webhook-client-ca",
      "--client-cert-subject",
      "CN=kube-apiserver-webhook-client",
      "--client-cert-subject",
      "DNS:apiserver.example.com",
    ]);
    for (const doc of pinned) validateAgainstSchema(doc);
    const deployment = only(pinned, "Deployment", "simkube-fn-mutate-create");
    // biome-ignore lint/suspicious/noExplicitAny: the pod template is read field by field
    const env = (deployment.spec as any).template.spec.containers[0].env as {
      name: string;
      value?: string;
    }[];
    assert.equal(
      env.find((e) => e.name === "CLIENT_CERT_SUBJECTS")?.value,
      "CN=kube-apiserver-webhook-client,DNS:apiserver.example.com",
    );
    assert.throws(
      () => render([...base, "--client-cert-subject", "CN=kube-apiserver"]),
      /clientCertSubjects needs clientCaSecret/,
    );
    assert.throws(
      () => render([...base, "--client-ca-secret", "ca", "--client-cert-subject", "CN=a,CN=b"]),
      /clientCertSubjects "CN=a,CN=b"/,
    );
  });

  it("refuses --client-ca-secret where TLS ends before the function, and a name no Secret can have", () => {
    assert.throws(
      () => render(["--platform", "kind", "--sim-name", "s1", "--client-ca-secret", "ca"]),
      /clientCaSecret needs clusterPlatform kubernetes/,
    );
    assert.throws(
      () =>
        render([
          "--platform",
          "kubernetes",
          "--ca-bundle",
          "ca.pem",
          "--sim-name",
          "s1",
          "--client-ca-secret",
          "Bad_Name",
        ]),
      /clientCaSecret "Bad_Name" is not a valid Secret name/,
    );
  });

  it("needs the CA that signed the TLS Secrets, and refuses url mode", () => {
    assert.throws(() => render(["--platform", "kubernetes", "--sim-name", "s1"]), /--ca-bundle FILE/);
    assert.throws(
      () => render(["--platform", "kubernetes", "--ca-bundle", "ca.pem", "--webhook-mode", "url"]),
      /--webhook-mode service/,
    );
  });
});

describe("--ingress traefik: per function a Service, Certificate, Middleware and IngressRoute in Traefik's namespace", () => {
  /** traefik.io kinds have no published model here; the cluster test applies them to Traefik's own CRDs. */
  const isTraefik = (d: Doc) => d.apiVersion === "traefik.io/v1alpha1";

  it("the webhook's Service is Traefik's websecure; the route rewrites Host to the ksvc's cluster-local name", () => {
    const docs = render(["--platform", "kind", "--ingress", "traefik", "--sim-name", "s1", "--reschedule"]);
    for (const doc of docs.filter((d) => !isTraefik(d))) validateAgainstSchema(doc);
    assert.equal(docs.filter((d) => d.kind === "DomainMapping" || d.kind === "ClusterDomainClaim").length, 0);
    const config = only(docs, "MutatingWebhookConfiguration");
    assert.equal(config.webhooks?.length, 2);
    for (const wh of config.webhooks ?? []) {
      const { name, namespace, port } = wh.clientConfig.service;
      assert.equal(namespace, "traefik");
      assert.equal(port, 443);
      const host = `${name}.traefik.svc`;
      const service = only(
        docs.filter((d) => d.apiVersion === "v1"),
        "Service",
        name,
      );
      assert.equal(service.metadata.namespace, "traefik");
      assert.deepEqual(service.spec?.selector, { "app.kubernetes.io/name": "traefik" });
      assert.deepEqual(service.spec?.ports, [
        { name: "https", port: 443, targetPort: "websecure", protocol: "TCP" },
      ]);
      const route = only(docs, "IngressRoute", name);
      assert.equal(route.metadata.namespace, "traefik");
      // biome-ignore lint/suspicious/noExplicitAny: the IngressRoute is read field by field
      const spec = route.spec as any;
      assert.deepEqual(spec.entryPoints, ["websecure"]);
      assert.equal(spec.routes[0].match, `Host(\`${host}\`)`);
      assert.deepEqual(spec.routes[0].services, [{ name: "traefik-internal", port: 80 }]);
      const middleware = only(docs, "Middleware", spec.routes[0].middlewares[0].name);
      assert.equal(middleware.metadata.namespace, "traefik");
      const ksvc = docs.find((d) => d.apiVersion === "serving.knative.dev/v1" && d.metadata.name === name);
      assert.ok(ksvc, "the gateway Service is named after a rendered Knative Service");
      assert.deepEqual(middleware.spec, {
        headers: { customRequestHeaders: { Host: `${name}.simkube-fn.svc` } },
      });
      const cert = only(docs, "Certificate", spec.tls.secretName);
      assert.equal(cert.metadata.namespace, "traefik", "an IngressRoute's TLS Secret is in its namespace");
      assert.deepEqual(cert.spec?.dnsNames, [host]);
    }
    assertScoped(config, "simkube-fn", ["knative-serving", "traefik", "cert-manager", "kube-system"]);
    assert.equal(
      config.metadata.annotations?.["cert-manager.io/inject-ca-from"],
      "cert-manager/simkube-fn-ca",
    );
  });

  it("--traefik-namespace and --traefik-internal-service move the route; an issuer injects from Traefik's namespace", () => {
    const docs = render([
      ...["--platform", "k3s", "--ingress", "traefik", "--sim-name", "s1", "--issuer", "corp-ca"],
      ...["--traefik-namespace", "kube-system", "--traefik-internal-service", "private:8081"],
    ]);
    const route = only(docs, "IngressRoute", "simkube-fn-mutate-create");
    assert.equal(route.metadata.namespace, "kube-system");
    // biome-ignore lint/suspicious/noExplicitAny: the IngressRoute is read field by field
    assert.deepEqual((route.spec as any).routes[0].services, [{ name: "private", port: 8081 }]);
    assert.equal(
      only(docs, "MutatingWebhookConfiguration").metadata.annotations?.["cert-manager.io/inject-ca-from"],
      "kube-system/simkube-fn-mutate-create-tls",
    );
  });

  it("refuses the Traefik flags without --ingress traefik, off kind/k3s, and a malformed service", () => {
    assert.throws(() => render(["--platform", "kind", "--traefik-namespace", "t"]), /need --ingress traefik/);
    assert.throws(
      () => render(["--platform", "managed", "--domain", "fn.example.com", "--ingress", "traefik"]),
      /apply to --platform kind or k3s/,
    );
    assert.throws(() => render(["--platform", "kind", "--ingress", "envoy"]), /kourier or traefik/);
    assert.throws(
      () => render(["--platform", "kind", "--ingress", "traefik", "--traefik-internal-service", "a:99999"]),
      /NAME\[:PORT\]/,
    );
    assert.throws(
      () => render(["--platform", "kind", "--ingress", "kourier", "--traefik-namespace", "t"]),
      DeploymentOptionsError,
    );
  });

  it("--ingress kourier is today's output, byte for byte", () => {
    const plain = render(["--platform", "kind", "--sim-name", "s1", "--reschedule"]);
    const kourier = render([
      "--platform",
      "kind",
      "--ingress",
      "kourier",
      "--sim-name",
      "s1",
      "--reschedule",
    ]);
    assert.deepEqual(kourier, plain);
  });
});
