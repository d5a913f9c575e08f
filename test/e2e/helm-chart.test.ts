// charts/simkube-fn against the builders: helm (built from helm.sh/helm/v4) lints the chart and templates it
// for every platform and the settings that reach an object, and each rendering must equal `simkube-fn
// manifests` for the same settings object by object (only Helm's own two labels removed). So the chart
// (templates generated from knative/*.ts, helpers by hand) cannot drift from the builders unseen. What the
// CLI refuses, the chart refuses.
// Helm 3 (helm.sh/helm/v3), which many platforms still run, lints the chart, applies its draft-07 values schema
// and renders every case the same. Needs Go for helm's first build: skipped loudly without it, failed under
// CI=true.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parse } from "yaml";
import {
  byKey,
  CHART,
  helmBinary,
  type KubeDoc,
  parseDocs,
  ROOT,
  renderManifests,
  runHelm,
  withoutHelmLabels,
} from "../support/helm.js";

const helm = helmBinary();
const helm3 = helmBinary(3);
for (const h of [helm, helm3])
  if ("skip" in h)
    process.stderr.write(`\n*** SKIPPED Helm chart tests (helm-chart.test.ts): ${h.skip} ***\n\n`);
const skip = "skip" in helm ? helm.skip : false;
const binary = "binary" in helm ? helm.binary : "";
const skip3 = "skip" in helm3 ? helm3.skip : false;
const binary3 = "binary" in helm3 ? helm3.binary : "";

const RELEASE = "rel";
const NAMESPACE = "fns";
const SECRET = "0123456789abcdef".repeat(4);
const PEM =
  "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZm9yLXRlc3RzLW9ubHk=\n-----END CERTIFICATE-----\n";
const tmp = mkdtempSync(path.join(tmpdir(), "simkube-fn-chart-"));
const CA_FILE = path.join(tmp, "ca.pem");
writeFileSync(CA_FILE, PEM);
after(() => rmSync(tmp, { recursive: true, force: true }));

interface Case {
  name: string;
  values: Record<string, unknown>;
  /** The manifests flags for the same settings (--name, --namespace, --path-secret are added). */
  flags: string[];
  release?: string;
  namespace?: string;
  /** Leave out --path-secret and pathSecret.value. */
  noSecret?: boolean;
}

const SIM = { simName: "s1", reschedule: true };
const SIM_FLAGS = ["--sim-name", "s1", "--reschedule"];

const CASES: Case[] = [
  // By default reschedule-delete and its DELETE webhook, as manifests renders them without a flag.
  { name: "kind, every simulation", values: { platform: "kind" }, flags: ["--platform", "kind"] },
  {
    name: "kind, every simulation, rescheduling turned off (mutate-create's Events role in default)",
    values: { platform: "kind", reschedule: false },
    flags: ["--platform", "kind", "--no-reschedule"],
  },
  {
    name: "kind, one simulation, rescheduling turned off",
    values: { platform: "kind", simName: "s1", reschedule: false },
    flags: ["--platform", "kind", "--sim-name", "s1", "--no-reschedule"],
  },
  {
    name: "kind, one simulation, reschedule",
    values: { platform: "kind", ...SIM },
    flags: ["--platform", "kind", ...SIM_FLAGS],
  },
  {
    name: "k3s with an issuer and other add-on namespaces",
    values: {
      platform: "k3s",
      ...SIM,
      issuer: "my-ca",
      kourierNamespace: "ingress",
      certManagerNamespace: "certs",
    },
    flags: [
      "--platform",
      "k3s",
      ...SIM_FLAGS,
      "--issuer",
      "my-ca",
      "--kourier-namespace",
      "ingress",
      "--cert-manager-namespace",
      "certs",
    ],
  },
  {
    name: "kind behind Traefik",
    values: { platform: "kind", ...SIM, ingress: "traefik" },
    flags: ["--platform", "kind", ...SIM_FLAGS, "--ingress", "traefik"],
  },
  {
    name: "k3s behind Traefik elsewhere, with an issuer",
    values: {
      platform: "k3s",
      ...SIM,
      ingress: "traefik",
      traefikNamespace: "kube-system",
      traefikInternalService: "traefik-private:8081",
      issuer: "my-ca",
    },
    flags: [
      "--platform",
      "k3s",
      ...SIM_FLAGS,
      "--ingress",
      "traefik",
      "--traefik-namespace",
      "kube-system",
      "--traefik-internal-service",
      "traefik-private:8081",
      "--issuer",
      "my-ca",
    ],
  },
  {
    name: "kind with a caBundle, its own webhook left out",
    values: { platform: "kind", ...SIM, caBundle: PEM, webhook: { enabled: false } },
    flags: ["--platform", "kind", ...SIM_FLAGS, "--ca-bundle", CA_FILE, "--without-webhook"],
  },
  {
    name: "managed, every function setting",
    values: {
      platform: "managed",
      ...SIM,
      domain: "fn.example.com",
      clusterLocal: true,
      image: "registry.example.com/team/simkube-fn:1.2.3",
      resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "512Mi" } },
      logLevel: "debug",
      logFormat: "gcp",
      tracePath: "https://traces.example.com/t.sktrace",
      allowTraceLocations: ["s3://bucket/", "https://traces.example.com/"],
      driverUsers: ["system:serviceaccount:simkube:sk-ctrl-sa", "admin"],
      virtualNsPrefix: "sim",
      ownerResources: ["widgets.example.com", "gadgets.apps.example.com"],
      caInjectFrom: "certs/public-ca",
    },
    flags: [
      "--platform",
      "managed",
      ...SIM_FLAGS,
      "--domain",
      "fn.example.com",
      "--cluster-local",
      "true",
      "--image",
      "registry.example.com/team/simkube-fn:1.2.3",
      "--cpu-request",
      "250m",
      "--memory-request",
      "256Mi",
      "--cpu-limit",
      "1",
      "--memory-limit",
      "512Mi",
      "--log-level",
      "debug",
      "--log-format",
      "gcp",
      "--trace-path",
      "https://traces.example.com/t.sktrace",
      "--allow-trace-location",
      "s3://bucket/",
      "--allow-trace-location",
      "https://traces.example.com/",
      "--driver-users",
      "system:serviceaccount:simkube:sk-ctrl-sa,admin",
      "--virtual-ns-prefix",
      "sim",
      "--owner-resource",
      "widgets.example.com",
      "--owner-resource",
      "gadgets.apps.example.com",
      "--ca-inject-from",
      "certs/public-ca",
    ],
  },
  {
    name: "kind, replica and timeout knobs",
    values: {
      platform: "kind",
      ...SIM,
      minScale: 1,
      functions: {
        "mutate-create": {
          minScale: 2,
          maxScale: 5,
          activationScale: 3,
          timeoutSeconds: 10,
          scaleDownDelay: "1h",
        },
        "reschedule-delete": { maxScale: 1, timeoutSeconds: 30, scaleDownDelay: "0s" },
      },
    },
    flags: [
      "--platform",
      "kind",
      ...SIM_FLAGS,
      "--min-scale",
      "1",
      "--min-scale-mutate-create",
      "2",
      "--max-scale-mutate-create",
      "5",
      "--activation-scale-mutate-create",
      "3",
      "--timeout-mutate-create",
      "10",
      "--scale-down-delay-mutate-create",
      "1h",
      "--max-scale-reschedule-delete",
      "1",
      "--timeout-reschedule-delete",
      "30",
      "--scale-down-delay-reschedule-delete",
      "0s",
    ],
  },
  {
    name: "kubernetes, pod reads only in virtual namespaces",
    values: { platform: "kubernetes", ...SIM, caBundle: PEM, podReads: "virtual-namespaces" },
    flags: [
      "--platform",
      "kubernetes",
      ...SIM_FLAGS,
      "--ca-bundle",
      CA_FILE,
      "--pod-reads",
      "virtual-namespaces",
    ],
  },
  {
    name: "openfaas CE, pod reads only in virtual namespaces (the shared default account)",
    values: {
      platform: "openfaas",
      ...SIM,
      podReads: "virtual-namespaces",
      openfaas: { webhookGatewayUrl: "https://gw.example.com/" },
    },
    flags: [
      "--platform",
      "openfaas",
      ...SIM_FLAGS,
      "--webhook-gateway-url",
      "https://gw.example.com/",
      "--pod-reads",
      "virtual-namespaces",
    ],
  },
  {
    name: "kind, unbounded max-scale keeps the activation scale",
    values: { platform: "kind", ...SIM, functions: { "reschedule-delete": { maxScale: 0 } } },
    flags: ["--platform", "kind", ...SIM_FLAGS, "--max-scale-reschedule-delete", "0"],
  },
  {
    name: "kubernetes (Deployments), memory sequence store, replicas",
    values: { platform: "kubernetes", ...SIM, caBundle: PEM, sequenceStore: "memory", minScale: 2 },
    flags: [
      "--platform",
      "kubernetes",
      ...SIM_FLAGS,
      "--ca-bundle",
      CA_FILE,
      "--sequence-store",
      "memory",
      "--min-scale",
      "2",
    ],
  },
  {
    name: "kubernetes, every simulation",
    values: { platform: "kubernetes", caBundle: PEM },
    flags: ["--platform", "kubernetes", "--ca-bundle", CA_FILE],
  },
  {
    name: "openfaas CE outside openfaas-fn",
    values: { platform: "openfaas", ...SIM, openfaas: { webhookGatewayUrl: "https://gw.example.com/" } },
    flags: ["--platform", "openfaas", ...SIM_FLAGS, "--webhook-gateway-url", "https://gw.example.com/"],
  },
  {
    name: "openfaas Pro in openfaas-fn",
    namespace: "openfaas-fn",
    values: {
      platform: "openfaas",
      ...SIM,
      openfaas: { webhookGatewayUrl: "https://gw.example.com", edition: "pro" },
    },
    flags: [
      "--platform",
      "openfaas",
      ...SIM_FLAGS,
      "--webhook-gateway-url",
      "https://gw.example.com",
      "--openfaas-edition",
      "pro",
    ],
  },
  {
    name: "an existing Secret, no webhook configuration (its value not needed)",
    noSecret: true,
    values: {
      platform: "kubernetes",
      reschedule: true,
      caBundle: PEM,
      pathSecret: { existingSecret: "my-path-secret" },
    },
    flags: [
      "--platform",
      "kubernetes",
      "--reschedule",
      "--ca-bundle",
      CA_FILE,
      "--path-secret-from",
      "my-path-secret",
    ],
  },
  {
    name: "an existing Secret with its value, for the webhook paths",
    values: { platform: "kind", ...SIM, pathSecret: { existingSecret: "my-path-secret" } },
    flags: ["--platform", "kind", ...SIM_FLAGS, "--path-secret-from", "my-path-secret"],
  },
  {
    name: "kind with a PodMonitor per function and a label for Prometheus's selector",
    values: {
      platform: "kind",
      ...SIM,
      metrics: { podMonitor: { enabled: true }, labels: { release: "prom", "example.com/team": "sim" } },
    },
    flags: [
      "--platform",
      "kind",
      ...SIM_FLAGS,
      "--pod-monitor",
      "--monitor-label",
      "release=prom",
      "--monitor-label",
      "example.com/team=sim",
    ],
  },
  {
    name: "kubernetes with PodMonitors and ServiceMonitors checking TLS with the caBundle",
    values: {
      platform: "kubernetes",
      ...SIM,
      caBundle: PEM,
      metrics: { podMonitor: { enabled: true }, serviceMonitor: { enabled: true } },
    },
    flags: [
      "--platform",
      "kubernetes",
      ...SIM_FLAGS,
      "--ca-bundle",
      CA_FILE,
      "--pod-monitor",
      "--service-monitor",
    ],
  },
  {
    name: "kubernetes with ServiceMonitors checking TLS with cert-manager's ca.crt, mutate-create alone",
    values: {
      platform: "kubernetes",
      simName: "s1",
      reschedule: false,
      caInjectFrom: "certs/ca",
      metrics: { serviceMonitor: { enabled: true } },
    },
    flags: [
      "--platform",
      "kubernetes",
      "--sim-name",
      "s1",
      "--no-reschedule",
      "--ca-inject-from",
      "certs/ca",
      "--service-monitor",
    ],
  },
  {
    name: "a release named simkube-fn keeps the builders' default names",
    release: "simkube-fn",
    values: { platform: "kind", ...SIM },
    flags: ["--platform", "kind", ...SIM_FLAGS],
  },
];

function withSecret(c: Case): Record<string, unknown> {
  if (c.noSecret) return c.values;
  const pathSecret = { ...(c.values.pathSecret as object | undefined), value: SECRET };
  return { ...c.values, pathSecret };
}

function helmTemplate(
  c: Pick<Case, "values" | "release" | "namespace">,
  helmBin = binary,
): {
  docs: KubeDoc[];
  stderr: string;
  status: number | null;
} {
  const release = c.release ?? RELEASE;
  const run = runHelm(
    helmBin,
    ["template", release, CHART, "--namespace", c.namespace ?? NAMESPACE],
    c.values,
  );
  return { docs: run.status === 0 ? parseDocs(run.stdout) : [], stderr: run.stderr, status: run.status };
}

/** `helm template` of case `c` with `helmBin` gives `manifests`' objects for the same settings, Helm's labels on each. */
async function assertRendersAsManifests(c: Case, helmBin: string): Promise<void> {
  const release = c.release ?? RELEASE;
  const flags = [...c.flags, "--name", fullname(release), "--namespace", c.namespace ?? NAMESPACE];
  if (!c.noSecret) flags.push("--path-secret", SECRET);
  const expected = byKey(await renderManifests(flags));
  const rendered = helmTemplate({ ...c, values: withSecret(c) }, helmBin);
  assert.equal(rendered.status, 0, rendered.stderr);
  const actual = byKey(rendered.docs.map(withoutHelmLabels));
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
  for (const [key, object] of expected) assert.deepEqual(actual.get(key), object, key);
  // Helm's labels are on every object the chart owns.
  for (const doc of rendered.docs)
    assert.equal(doc.metadata.labels?.["app.kubernetes.io/managed-by"], "Helm");
}

function fullname(release: string): string {
  return release.includes("simkube-fn") ? release : `${release}-simkube-fn`;
}

describe("charts/simkube-fn (helm v4 from the Go module)", { skip }, () => {
  it("refuses a misspelt value instead of ignoring it (values.schema.json)", () => {
    const rendered = helmTemplate({ values: { platfrom: "kind" } });
    assert.notEqual(rendered.status, 0);
    assert.match(rendered.stderr, /additional properties 'platfrom' not allowed/);
  });

  it("lints, strict", () => {
    const run = runHelm(binary, ["lint", "--strict", CHART, "--namespace", NAMESPACE]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it("follows package.json's version: chart and default image", () => {
    const chart = parse(readFileSync(path.join(CHART, "Chart.yaml"), "utf8")) as {
      version: string;
      appVersion: string;
    };
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    assert.equal(chart.version, pkg.version);
    assert.equal(chart.appVersion, pkg.version);
  });

  for (const c of CASES)
    it(`renders what manifests renders: ${c.name}`, () => assertRendersAsManifests(c, binary));

  it("without a cluster (helm template) makes no path secret: refuses unless pathSecret.value or existingSecret is given", () => {
    const refused = helmTemplate({ values: { platform: "kubernetes", ...SIM, caBundle: PEM } });
    assert.notEqual(refused.status, 0);
    assert.match(
      refused.stderr,
      /no cluster to read the path secret from \(helm template\): give pathSecret\.value/,
    );
    // Without simName and with an existing Secret there is nothing to read: it renders.
    const existing = helmTemplate({ values: { platform: "kind", pathSecret: { existingSecret: "mine" } } });
    assert.equal(existing.status, 0, existing.stderr);
  });

  it("the same values render byte-identical YAML twice, the one secret in the Secret, every webhook path and the digest", () => {
    for (const values of [
      { platform: "kubernetes", ...SIM, caBundle: PEM, pathSecret: { value: SECRET } },
      { platform: "kind", ...SIM, pathSecret: { value: SECRET } },
      { platform: "kind", pathSecret: { existingSecret: "mine" } },
    ]) {
      const [first, second] = [0, 1].map(() =>
        runHelm(binary, ["template", RELEASE, CHART, "--namespace", NAMESPACE], values),
      );
      assert.equal(first?.status, 0, first?.stderr);
      assert.ok((first?.stdout.length ?? 0) > 1000);
      assert.equal(second?.stdout, first?.stdout, JSON.stringify(values));
    }
    const { docs } = helmTemplate({
      values: { platform: "kubernetes", ...SIM, caBundle: PEM, pathSecret: { value: SECRET } },
    });
    const data = docs.find((d) => d.kind === "Secret")?.stringData as Record<string, string> | undefined;
    assert.equal(data?.["path-secret"], SECRET);
    const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration") as unknown as {
      webhooks: { clientConfig: { service: { path: string } } }[];
    };
    assert.deepEqual(
      config.webhooks.map((w) => w.clientConfig.service.path),
      [`/${SECRET}`, `/${SECRET}`],
    );
    const digests = docs
      .filter((d) => d.kind === "Deployment")
      .map(
        (d) =>
          (d as unknown as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec
            .template.metadata.annotations["simkube.io/webhook-path-secret-sha256"],
      );
    assert.equal(digests.length, 2);
    assert.equal(new Set(digests).size, 1);
  });

  it("scopes every cluster-wide name to the release", () => {
    const names = (release: string) =>
      helmTemplate({ release, values: { platform: "kind", ...SIM, pathSecret: { value: SECRET } } })
        .docs.filter((d) => d.metadata.namespace === undefined || d.metadata.namespace !== NAMESPACE)
        .map((d) => `${d.kind}/${d.metadata.namespace ?? ""}/${d.metadata.name}`);
    const a = names("alpha");
    const b = names("beta");
    assert.ok(a.length >= 8, a.join(" "));
    assert.deepEqual(
      a.filter((n) => b.includes(n)),
      [],
    );
  });

  const REFUSED: {
    name: string;
    values: Record<string, unknown>;
    flags: string[];
    release?: string;
    chart: RegExp;
  }[] = [
    {
      name: "kubernetes without a CA",
      values: { platform: "kubernetes" },
      flags: ["--platform", "kubernetes"],
      chart: /needs caBundle/,
    },
    {
      name: "managed without a domain",
      values: { platform: "managed" },
      flags: ["--platform", "managed"],
      chart: /needs domain/,
    },
    {
      name: "openfaas without an https gateway",
      values: { platform: "openfaas", openfaas: { webhookGatewayUrl: "http://gw:8080" } },
      flags: ["--platform", "openfaas", "--webhook-gateway-url", "http://gw:8080"],
      chart: /webhookGatewayUrl https/,
    },
    {
      name: "an activation scale above max-scale",
      values: { platform: "kind", functions: { "mutate-create": { maxScale: 2, activationScale: 3 } } },
      flags: [
        "--platform",
        "kind",
        "--max-scale-mutate-create",
        "2",
        "--activation-scale-mutate-create",
        "3",
      ],
      chart: /activationScale 3 is above its max-scale 2/,
    },
    {
      name: "max-scale below min-scale",
      values: { platform: "kind", minScale: 4, functions: { "mutate-create": { maxScale: 2 } } },
      flags: ["--platform", "kind", "--min-scale", "4", "--max-scale-mutate-create", "2"],
      chart: /maxScale 2 is below its min-scale 4/,
    },
    {
      name: "a name too long for Knative's revisions",
      release: "r".repeat(40),
      values: { platform: "kind" },
      flags: ["--platform", "kind"],
      chart: /DNS-1035 label/,
    },
    {
      name: "a webhook timeout above the API server's 30 s (values.schema.json)",
      values: { platform: "kind", functions: { "mutate-create": { timeoutSeconds: 31 } } },
      flags: ["--platform", "kind", "--timeout-mutate-create", "31"],
      chart: /timeoutSeconds': maximum: got 31, want 30/,
    },
    {
      name: "Traefik as the ingress on a platform without gateway routes",
      values: { platform: "managed", domain: "fn.example.com", ingress: "traefik" },
      flags: ["--platform", "managed", "--domain", "fn.example.com", "--ingress", "traefik"],
      chart: /ingress traefik applies to platform kind or k3s/,
    },
    {
      name: "an unknown ingress (values.schema.json)",
      values: { platform: "kind", ingress: "envoy" },
      flags: ["--platform", "kind", "--ingress", "envoy"],
      chart: /ingress': value must be one of/,
    },
    {
      name: "an unknown log level (values.schema.json)",
      values: { platform: "kind", logLevel: "loud" },
      flags: ["--platform", "kind", "--log-level", "loud"],
      chart: /logLevel': value must be one of/,
    },
    {
      name: "a PodMonitor on OpenFaaS, whose functions serve no /metrics",
      values: {
        platform: "openfaas",
        openfaas: { webhookGatewayUrl: "https://gw.example.com" },
        metrics: { podMonitor: { enabled: true } },
      },
      flags: ["--platform", "openfaas", "--webhook-gateway-url", "https://gw.example.com", "--pod-monitor"],
      chart: /no function serves \/metrics/,
    },
    {
      name: "a ServiceMonitor on Knative, whose Services lead to queue-proxy",
      values: { platform: "kind", metrics: { serviceMonitor: { enabled: true } } },
      flags: ["--platform", "kind", "--service-monitor"],
      chart: /serviceMonitor needs platform kubernetes/,
    },
    {
      name: "monitor labels without a monitor",
      values: { platform: "kind", metrics: { labels: { release: "prom" } } },
      flags: ["--platform", "kind", "--monitor-label", "release=prom"],
      chart: /metrics.labels needs/,
    },
    {
      name: "a monitor label value no label may hold (values.schema.json)",
      values: { platform: "kind", metrics: { podMonitor: { enabled: true }, labels: { release: "a b" } } },
      flags: ["--platform", "kind", "--pod-monitor", "--monitor-label", "release=a b"],
      chart: /labels/,
    },
    {
      name: "an existing Secret whose value the webhook needs but nobody gave",
      values: { platform: "kind", simName: "s1", pathSecret: { existingSecret: "mine" } },
      flags: ["--platform", "kind", "--sim-name", "s1", "--path-secret-from", "mine"],
      chart: /give it as pathSecret.value/,
    },
  ];
  for (const r of REFUSED) {
    it(`refuses, like manifests: ${r.name}`, async () => {
      const release = r.release ?? RELEASE;
      // The secret given, so each case is refused for its own reason (a render makes none).
      const values = r.values.pathSecret ? r.values : { ...r.values, pathSecret: { value: SECRET } };
      const flags = r.flags.includes("--path-secret-from") ? r.flags : [...r.flags, "--path-secret", SECRET];
      const rendered = helmTemplate({ release, values });
      assert.notEqual(rendered.status, 0);
      assert.match(rendered.stderr, r.chart);
      await assert.rejects(
        renderManifests([...flags, "--name", fullname(release), "--namespace", NAMESPACE]),
      );
    });
  }
});

describe("charts/simkube-fn (helm v3 from the Go module)", { skip: skip3 }, () => {
  it("lints, strict", () => {
    const run = runHelm(binary3, ["lint", "--strict", CHART, "--namespace", NAMESPACE]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
  });

  it("applies the values schema: a misspelt value and a value of the wrong type are refused", () => {
    const misspelt = helmTemplate({ values: { platfrom: "kind" } }, binary3);
    assert.notEqual(misspelt.status, 0);
    assert.match(misspelt.stderr, /platfrom/);
    const wrongType = helmTemplate({ values: { platform: "kind", reschedule: "yes" } }, binary3);
    assert.notEqual(wrongType.status, 0);
    assert.match(wrongType.stderr, /reschedule/);
  });

  for (const c of CASES)
    it(`renders what manifests renders: ${c.name}`, () => assertRendersAsManifests(c, binary3));
});
