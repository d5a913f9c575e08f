// --pod-monitor, --service-monitor and --monitor-label, from the command line's flags to the YAML: each monitor
// against the Prometheus Operator's published CRD schema (@kubernetes-models/prometheus-operator), then what a
// schema does not carry: that each monitor selects its function's pods or Service, on a port they have, with
// the server name and CA the function's certificate is checked against; and what no platform can scrape is
// refused with one line.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { caBundleFromPem } from "../../functions/cli/manifests/command.js";
import { renderDeployment } from "../../knative/manifests.js";
import { KNATIVE_USER_PORT } from "../../knative/monitors.js";
import { DeploymentOptionsError } from "../../knative/options.js";
import { validateAgainstSchema } from "../support/manifest-schemas.js";

// biome-ignore lint/suspicious/noExplicitAny: rendered documents are read field by field
type Doc = { apiVersion: string; kind: string; metadata: any; spec?: any; data?: Record<string, string> };

const SECRET = "0123456789abcdef0123456789abcdef";
const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const FUNCTIONS = ["mutate-create", "reschedule-delete"];

/** The CLI's own parsing, then the renderer, as `simkube-fn manifests ARGS` would print it. */
function render(args: string[]): Doc[] {
  const command = parseManifestsArgs([...args, "--path-secret", SECRET]);
  if (command.kind !== "deployment") throw new Error(`not a deployment: ${command.kind}`);
  const caBundle = command.caBundleFile ? { caBundle: caBundleFromPem("ca.pem", CA_PEM) } : {};
  const text = renderDeployment({ ...command.options, ...caBundle });
  return parseAllDocuments(text).map((d) => d.toJSON() as Doc);
}

function find(docs: Doc[], kind: string, name: string, apiVersion?: string): Doc {
  const found = docs.filter(
    (d) =>
      d.kind === kind &&
      d.metadata.name === name &&
      (apiVersion === undefined || d.apiVersion === apiVersion),
  );
  assert.equal(found.length, 1, `one ${kind} ${name}`);
  return found[0] as Doc;
}

function monitors(docs: Doc[]): Doc[] {
  return docs.filter((d) => d.apiVersion === "monitoring.coreos.com/v1");
}

function assertSelects(selector: Record<string, string>, labels: Record<string, string>): void {
  assert.ok(Object.keys(selector).length > 0);
  for (const [key, value] of Object.entries(selector)) assert.equal(labels[key], value, key);
}

const KNATIVE = "serving.knative.dev/v1";
const KUBERNETES = ["--platform", "kubernetes", "--sim-name", "s1", "--reschedule"];

describe("Prometheus Operator monitors (--pod-monitor, --service-monitor)", () => {
  it("none by default, on any platform", () => {
    for (const args of [
      ["--platform", "kind"],
      [...KUBERNETES, "--ca-bundle", "ca.pem"],
    ]) {
      const docs = render(args);
      assert.deepEqual(monitors(docs), []);
      assert.equal(
        docs.some((d) => d.kind === "ConfigMap"),
        false,
      );
    }
  });

  it("Knative: a PodMonitor per function on the pod's user-port over http, selecting its revision's pods", () => {
    const args = ["--platform", "kind", "--sim-name", "s1", "--reschedule", "--pod-monitor"];
    const docs = render([...args, "--monitor-label", "release=prom", "--monitor-label", "team/x=a.b"]);
    for (const doc of docs) validateAgainstSchema(doc);
    assert.deepEqual(
      monitors(docs).map((d) => `${d.kind} ${d.metadata.name}`),
      FUNCTIONS.map((fn) => `PodMonitor simkube-fn-${fn}`),
    );
    for (const fn of FUNCTIONS) {
      const monitor = find(docs, "PodMonitor", `simkube-fn-${fn}`);
      assert.equal(monitor.metadata.namespace, "simkube-fn");
      assert.equal(monitor.metadata.labels.release, "prom");
      assert.equal(monitor.metadata.labels["team/x"], "a.b");
      assert.equal(monitor.metadata.labels["app.kubernetes.io/component"], fn);
      assert.deepEqual(monitor.spec.podMetricsEndpoints, [
        { port: KNATIVE_USER_PORT, path: "/metrics", scheme: "http" },
      ]);
      const service = find(docs, "Service", `simkube-fn-${fn}`, KNATIVE);
      assertSelects(monitor.spec.selector.matchLabels, service.spec.template.metadata.labels);
      const other = FUNCTIONS.find((f) => f !== fn) as string;
      const otherLabels = find(docs, "Service", `simkube-fn-${other}`, KNATIVE).spec.template.metadata.labels;
      assert.notEqual(
        monitor.spec.selector.matchLabels["app.kubernetes.io/component"],
        otherLabels["app.kubernetes.io/component"],
      );
    }
    assert.equal(KNATIVE_USER_PORT, "user-port", "knative.dev/serving v1.UserPortName");
  });

  it("kubernetes: PodMonitor and ServiceMonitor over https, checked against the Service's name and the --ca-bundle", () => {
    const docs = render([...KUBERNETES, "--ca-bundle", "ca.pem", "--pod-monitor", "--service-monitor"]);
    for (const doc of docs) validateAgainstSchema(doc);
    const ca = find(docs, "ConfigMap", "simkube-fn-metrics-ca");
    assert.equal(ca.data?.["ca.crt"], CA_PEM);
    for (const fn of FUNCTIONS) {
      const name = `simkube-fn-${fn}`;
      const tls = {
        ca: { configMap: { name: "simkube-fn-metrics-ca", key: "ca.crt" } },
        serverName: `${name}.simkube-fn.svc`,
      };
      const endpoint = { port: "https", path: "/metrics", scheme: "https", tlsConfig: tls };
      const deployment = find(docs, "Deployment", name);
      const pod = find(docs, "PodMonitor", name);
      assert.deepEqual(pod.spec.podMetricsEndpoints, [endpoint]);
      assertSelects(pod.spec.selector.matchLabels, deployment.spec.template.metadata.labels);
      const ports = deployment.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
      assert.ok(ports.includes("https"), "the pod has the port the PodMonitor names");
      const service = find(docs, "Service", name);
      const serviceMonitor = find(docs, "ServiceMonitor", name);
      assert.deepEqual(serviceMonitor.spec.endpoints, [endpoint]);
      assertSelects(serviceMonitor.spec.selector.matchLabels, service.metadata.labels);
      assert.ok(service.spec.ports.some((p: { name: string }) => p.name === "https"));
    }
  });

  it("kubernetes with cert-manager (--ca-inject-from): the CA is the TLS Secret's ca.crt, no ConfigMap", () => {
    const docs = render([...KUBERNETES, "--ca-inject-from", "simkube-fn/ca", "--pod-monitor"]);
    for (const doc of docs) validateAgainstSchema(doc);
    assert.equal(
      docs.some((d) => d.kind === "ConfigMap"),
      false,
    );
    for (const fn of FUNCTIONS) {
      const [endpoint] = find(docs, "PodMonitor", `simkube-fn-${fn}`).spec.podMetricsEndpoints;
      assert.deepEqual(endpoint.tlsConfig.ca, { secret: { name: `simkube-fn-${fn}-tls`, key: "ca.crt" } });
    }
  });

  it("one monitor for mutate-create alone with --no-reschedule; the header names the CRDs needed", () => {
    const args = ["--platform", "kind", "--sim-name", "s1", "--no-reschedule", "--pod-monitor"];
    assert.deepEqual(
      monitors(render(args)).map((d) => d.metadata.name),
      ["simkube-fn-mutate-create"],
    );
    const command = parseManifestsArgs([...args, "--path-secret", SECRET]);
    assert.equal(command.kind, "deployment");
    if (command.kind !== "deployment") return;
    assert.match(renderDeployment(command.options), /^# .*monitoring\.coreos\.com CRDs/m);
  });

  it("refuses what cannot be scraped, or a bad label, with one line", () => {
    const refusals: [string[], RegExp][] = [
      [
        ["--platform", "openfaas", "--webhook-gateway-url", "https://gw.example.com", "--pod-monitor"],
        /OpenFaaS/,
      ],
      [["--platform", "kind", "--service-monitor"], /serviceMonitor needs clusterPlatform kubernetes/],
      [["--platform", "kind", "--monitor-label", "a=b"], /monitorLabels needs podMonitor or serviceMonitor/],
      [["--platform", "kind", "--pod-monitor", "--monitor-label", "a=b c"], /not a valid label value/],
      [["--platform", "kind", "--pod-monitor", "--monitor-label", "x_=b"], /not a valid label name/],
    ];
    for (const [args, message] of refusals) {
      assert.throws(
        () => render(args),
        (err: Error) => err instanceof DeploymentOptionsError && message.test(err.message),
        args.join(" "),
      );
    }
    assert.throws(
      () => render(["--platform", "kind", "--pod-monitor", "--monitor-label", "novalue"]),
      /KEY=VALUE/,
    );
  });

  it("the schema check can fail: a PodMonitor with a numeric port or an unknown scheme is refused", () => {
    const [good] = monitors(render(["--platform", "kind", "--pod-monitor"])) as [Doc];
    validateAgainstSchema(good);
    for (const bad of [{ port: 8080 }, { scheme: "ftp" }]) {
      const endpoint = { ...good.spec.podMetricsEndpoints[0], ...bad };
      const doc = { ...good, spec: { ...good.spec, podMetricsEndpoints: [endpoint] } };
      assert.throws(() => validateAgainstSchema(doc), JSON.stringify(bad));
    }
  });
});
