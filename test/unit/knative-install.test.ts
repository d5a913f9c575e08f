// The pure parts of `cluster up --knative`: reading Knative's YAML stream and ordering its creation, the
// collection each object goes to, the image names read from the resolved YAML, the namespace placement on the
// real node, the cluster DNS and Traefik objects, the kubelet's clusterDNS, when a Deployment counts as
// rolled out, and config-network's patch waiting out Knative's webhook before its pod is ready.

import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import {
  collectionUrl,
  creationOrder,
  groupVersionPath,
  parseManifestStream,
} from "../../functions/local-cluster/knative/apply-yaml.js";
import {
  CLUSTER_DNS_IP,
  clusterDnsObjects,
  corefile,
} from "../../functions/local-cluster/knative/cluster-dns.js";
import { servingObjects } from "../../functions/local-cluster/knative/serving.js";
import { servingImages } from "../../functions/local-cluster/knative/serving-build.js";
import { deploymentRolledOut } from "../../functions/local-cluster/knative/serving-ready.js";
import {
  isWebhookUnreachable,
  selectTraefikIngress,
  TRAEFIK_INGRESS_CLASS,
  traefikObjects,
} from "../../functions/local-cluster/knative/traefik.js";
import { nodeAddresses, SERVICE_CIDR } from "../../functions/local-cluster/real-node/addresses.js";
import { kubeletConfig, REAL_NODE_TAINT } from "../../functions/local-cluster/real-node/configs.js";
import {
  DEFAULT_TOLERATIONS_ANNOTATION,
  NODE_SELECTOR_ANNOTATION,
  placedOnRealNode,
} from "../../functions/local-cluster/real-node/placement.js";
import { type RestClient, RestError } from "../../functions/local-cluster/rest.js";

const STREAM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: config-network, namespace: knative-serving}
---
# only a comment
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: images.caching.internal.knative.dev}
---
apiVersion: caching.internal.knative.dev/v1alpha1
kind: Image
metadata: {name: queue-proxy, namespace: knative-serving}
---
apiVersion: v1
kind: Namespace
metadata: {name: knative-serving, labels: {app.kubernetes.io/name: knative-serving}}
`;

test("a YAML stream: empty documents dropped, Namespaces then CRDs first, the rest in stream order", () => {
  const objects = parseManifestStream(STREAM);
  assert.equal(objects.length, 4);
  assert.deepEqual(
    creationOrder(objects).map((o) => o.kind),
    ["Namespace", "CustomResourceDefinition", "ConfigMap", "Image"],
  );
  assert.throws(() => parseManifestStream("kind: Thing\n"), /not a Kubernetes object/);
  assert.throws(() => parseManifestStream("a: [\n"), /invalid YAML/);
});

test("each object's collection comes from its kind's discovery entry", () => {
  const [configMap, crd, image] = parseManifestStream(STREAM);
  assert.equal(groupVersionPath("v1"), "/api/v1");
  assert.equal(
    collectionUrl(configMap as never, { name: "configmaps", kind: "ConfigMap", namespaced: true }),
    "/api/v1/namespaces/knative-serving/configmaps",
  );
  assert.equal(
    collectionUrl(crd as never, {
      name: "customresourcedefinitions",
      kind: "CustomResourceDefinition",
      namespaced: false,
    }),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  );
  assert.equal(
    collectionUrl(image as never, { name: "images", kind: "Image", namespaced: true }),
    "/apis/caching.internal.knative.dev/v1alpha1/namespaces/knative-serving/images",
  );
});

test("Knative's namespace, and only it, is placed on the real node; its own labels are kept", () => {
  const objects = servingObjects(STREAM);
  const ns = objects.find((o) => o.kind === "Namespace");
  const annotations = ns?.metadata.annotations as Record<string, string>;
  assert.equal(annotations[NODE_SELECTOR_ANNOTATION], "simkube-fn/real-node=true");
  assert.deepEqual(JSON.parse(annotations[DEFAULT_TOLERATIONS_ANNOTATION] ?? "[]"), [
    { key: REAL_NODE_TAINT.key, operator: "Equal", value: "true", effect: "NoSchedule" },
  ]);
  assert.deepEqual(ns?.metadata.labels, { "app.kubernetes.io/name": "knative-serving" });
  assert.equal(objects.find((o) => o.kind === "ConfigMap")?.metadata.annotations, undefined);
  const kept = placedOnRealNode({ metadata: { name: "x", annotations: { a: "1" } } });
  assert.equal(kept.metadata.annotations.a, "1");
});

test("image names come from the resolved YAML, and the queue-proxy sidecar must match", () => {
  const yaml = [
    "        image: dev.local/knative-serving-controller:v0.42.2",
    "  queue-sidecar-image: dev.local/knative-serving-queue:v0.42.2",
  ].join("\n");
  const images = servingImages(yaml);
  assert.equal(images.activator, "dev.local/knative-serving-activator:v0.42.2");
  assert.equal(images.helloworld, "dev.local/knative-serving-helloworld:v0.42.2");
  assert.throws(() => servingImages("kind: ConfigMap"), /no controller image/);
  assert.throws(
    () => servingImages(yaml.replace("queue:v0.42.2", "queue:v9")),
    /queue-sidecar-image dev.local\/knative-serving-queue:v9/,
  );
});

test("cluster DNS: CoreDNS at a fixed ClusterIP inside the Service range, answering cluster.local", () => {
  const [prefix] = SERVICE_CIDR.split("0/24");
  assert.ok(CLUSTER_DNS_IP.startsWith(prefix ?? "none"));
  const objects = clusterDnsObjects("dev.local/coredns:1");
  const service = objects.find((o) => o.kind === "Service") as { spec: { clusterIP: string } } | undefined;
  assert.equal(service?.spec.clusterIP, CLUSTER_DNS_IP);
  assert.match(corefile(), /kubernetes cluster\.local in-addr\.arpa/);
  assert.doesNotMatch(corefile(), /forward/);
  const config = parse(
    kubeletConfig({
      paths: {
        containerdRoot: "/r",
        containerdState: "/s",
        containerdSocket: "/c.sock",
        cniConfDir: "/n",
        cniDataDir: "/i",
        kubeletRoot: "/k",
        podLogs: "/l",
      },
      addresses: nodeAddresses(3),
      caFile: "/ca.crt",
      cgroupRoot: "/x",
      clusterDns: CLUSTER_DNS_IP,
    }),
  );
  assert.deepEqual(config.clusterDNS, [CLUSTER_DNS_IP]);
  assert.equal(config.clusterDomain, "cluster.local");
});

test("Traefik runs its Knative provider with public and cluster-local entry points, on the real node", () => {
  const objects = traefikObjects("dev.local/traefik:1");
  const deployment = objects.find((o) => o.kind === "Deployment") as unknown as {
    spec: { template: { spec: { containers: { args: string[] }[] } } };
  };
  const args = deployment.spec.template.spec.containers[0]?.args ?? [];
  assert.ok(args.includes("--experimental.knative=true"));
  assert.ok(args.includes("--providers.knative=true"));
  assert.ok(args.includes("--providers.knative.privateEntrypoints=internal"));
  const ns = objects.find((o) => o.kind === "Namespace");
  assert.ok((ns?.metadata.annotations as Record<string, string> | undefined)?.[NODE_SELECTOR_ANNOTATION]);
  assert.equal(TRAEFIK_INGRESS_CLASS, "traefik.ingress.networking.knative.dev");
});

test("a Deployment is rolled out only when its newest generation is observed and every replica updated and available", () => {
  const d = (status: object, generation = 2) => ({ metadata: { generation }, spec: { replicas: 1 }, status });
  assert.equal(
    deploymentRolledOut(d({ observedGeneration: 2, updatedReplicas: 1, availableReplicas: 1 })),
    true,
  );
  assert.equal(
    deploymentRolledOut(d({ observedGeneration: 1, updatedReplicas: 1, availableReplicas: 1 })),
    false,
  );
  assert.equal(
    deploymentRolledOut(d({ observedGeneration: 2, updatedReplicas: 0, availableReplicas: 1 })),
    false,
  );
  assert.equal(
    deploymentRolledOut(d({ observedGeneration: 2, updatedReplicas: 1, availableReplicas: 0 })),
    false,
  );
  assert.equal(deploymentRolledOut(d({})), false);
});

const CONFIG_NETWORK = "/api/v1/namespaces/knative-serving/configmaps/config-network";
// The API server's answer when Knative's webhook has registered itself and its pod is not ready (CI, 2026-12-07).
const UNREACHABLE = new RestError(
  500,
  "PATCH",
  CONFIG_NETWORK,
  '{"kind":"Status","message":"Internal error occurred: failed calling webhook \\"config.webhook.serving.knative.dev\\": failed to call webhook: Post \\"https://webhook.knative-serving.svc:443/config-validation?timeout=10s\\": no endpoints available for service \\"webhook\\"","reason":"InternalError","code":500}',
);

/** A RestClient whose PATCHes fail with the given errors in turn, then succeed. */
function patchingAdmin(failures: unknown[]): { admin: RestClient; patches: unknown[] } {
  const patches: unknown[] = [];
  const request = async (method: string, path: string, body?: unknown) => {
    assert.equal(method, "PATCH");
    assert.equal(path, CONFIG_NETWORK);
    patches.push(body);
    const failure = failures.shift();
    if (failure) throw failure;
    return {};
  };
  return { admin: { request } as unknown as RestClient, patches };
}

test("a webhook the API server cannot reach is told from the other failures", () => {
  assert.equal(isWebhookUnreachable(UNREACHABLE), true);
  assert.equal(
    isWebhookUnreachable(new RestError(500, "PATCH", CONFIG_NETWORK, "etcdserver: timeout")),
    false,
  );
  assert.equal(
    isWebhookUnreachable(new RestError(403, "PATCH", CONFIG_NETWORK, "failed calling webhook")),
    false,
  );
  assert.equal(isWebhookUnreachable(new Error("failed calling webhook")), false);
});

test("config-network's patch is retried while Knative's webhook cannot be reached, then lands", async () => {
  const { admin, patches } = patchingAdmin([UNREACHABLE, UNREACHABLE]);
  await selectTraefikIngress(admin);
  assert.equal(patches.length, 3);
  assert.deepEqual(patches[2], { data: { "ingress-class": TRAEFIK_INGRESS_CLASS } });
});

test("config-network's patch fails at once on any other error", async () => {
  const forbidden = new RestError(403, "PATCH", CONFIG_NETWORK, "forbidden");
  const { admin, patches } = patchingAdmin([forbidden]);
  await assert.rejects(selectTraefikIngress(admin), forbidden);
  assert.equal(patches.length, 1);
});
