// `cluster up --knative`: Knative Serving v0.42.2 built from source, running on the real node with Traefik's
// Knative provider as its ingress and CoreDNS as cluster DNS. Knative's own admission webhook judges what
// `manifests --platform kind` renders; Knative's helloworld test program is served as a Knative Service
// through Traefik, scaled to zero by Knative's autoscaler, and started again from zero by a request through
// Traefik and the activator. Skipped with one loud line when Go or the node's programs are missing; fails
// under CI=true.

import assert from "node:assert/strict";
import http from "node:http";
import { after, type TestContext } from "node:test";
import { percentile } from "../../functions/cli/loadtest/load.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { FUNCTIONS_NAMESPACE } from "../../functions/local-cluster/cluster-types.js";
import { ADMIN_USER } from "../../functions/local-cluster/control-plane.js";
import { invalidKnativeService } from "../../functions/local-cluster/knative/serving-ready.js";
import { TRAEFIK_NAMESPACE, TRAEFIK_PORTS } from "../../functions/local-cluster/knative/traefik.js";
import { REAL_NODE_LABEL } from "../../functions/local-cluster/real-node/configs.js";
import { placedOnRealNode } from "../../functions/local-cluster/real-node/placement.js";
import type { RestClient } from "../../functions/local-cluster/rest.js";
import { buildAllManifests } from "../../knative/manifests.js";
import { eventually } from "../support/cluster/kube.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";

const suite = await openClusterSuite({ realNode: true, reschedule: true, withKnative: true });

function cluster(): LocalCluster {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

const KSVC = "/apis/serving.knative.dev/v1/namespaces";
const HELLO_NS = "hello";
const HELLO_HOST = `hello.${HELLO_NS}.svc.cluster.local`;

interface Condition {
  type: string;
  status: string;
}
interface PodList {
  items: {
    metadata: { name: string };
    spec: { nodeName?: string; containers: { image: string }[] };
    status: { phase?: string; podIP?: string };
  }[];
}
const conditionTrue = (conditions: Condition[] | undefined, type: string) =>
  Boolean(conditions?.some((c) => c.type === type && c.status === "True"));

async function pods(admin: RestClient, namespace: string): Promise<PodList["items"]> {
  return (await admin.request<PodList>("GET", `/api/v1/namespaces/${namespace}/pods`)).items;
}

/** GET / through Traefik's cluster-local entry point (its pod, reached over the node's pod route). */
function throughTraefik(podIp: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: podIp, port: TRAEFIK_PORTS.internal, path: "/", headers: { host }, timeout: 60_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer from Traefik in 60 s")));
    req.on("error", reject);
  });
}

async function traefikPodIp(admin: RestClient): Promise<string> {
  const running = (await pods(admin, TRAEFIK_NAMESPACE)).find((p) => p.status.phase === "Running");
  assert.ok(running?.status.podIP, "Traefik's pod is running");
  return running.status.podIP;
}

const servingOnNode: ClusterCase = {
  name: "Knative Serving's controller, webhook, activator and autoscaler run on the real node from local images",
  run: async () => {
    const { admin } = cluster();
    const running = (await pods(admin, "knative-serving")).filter((p) => p.status.phase === "Running");
    const images = running.map((p) => p.spec.containers[0]?.image).sort();
    assert.deepEqual(
      images,
      ["activator", "autoscaler", "controller", "webhook"].map(
        (c) => `dev.local/knative-serving-${c}:v0.42.2`,
      ),
    );
    for (const p of running) assert.equal(p.spec.nodeName, "real-node", p.metadata.name);
    const node = await admin.request<{ metadata: { labels: Record<string, string> } }>(
      "GET",
      "/api/v1/nodes/real-node",
    );
    assert.equal(node.metadata.labels[REAL_NODE_LABEL], "true");
  },
};

const webhookJudges: ClusterCase = {
  name: "Knative's own webhook admits (and defaults) every Service `manifests --platform kind` renders, and refuses an invalid one",
  run: async () => {
    const c = cluster();
    const rendered = buildAllManifests({
      clusterPlatform: "kind",
      simName: c.simName,
      namespace: FUNCTIONS_NAMESPACE,
      rescheduleInterruptedBarePods: true,
    }).filter((m) => m.kind === "Service" && m.apiVersion === "serving.knative.dev/v1");
    assert.equal(rendered.length, 2, "both functions' Knative Services");
    for (const service of rendered) {
      const admitted = await c.admin.request<{ metadata: { annotations?: Record<string, string> } }>(
        "POST",
        `${KSVC}/${FUNCTIONS_NAMESPACE}/services?dryRun=All`,
        service,
      );
      // Set only by Knative's defaulting webhook (webhook.serving.knative.dev): proof it ran.
      assert.equal(admitted.metadata.annotations?.["serving.knative.dev/creator"], ADMIN_USER);
    }
    const bad = invalidKnativeService(FUNCTIONS_NAMESPACE, c.knative?.images.helloworld ?? "");
    await assert.rejects(
      c.admin.request("POST", `${KSVC}/${FUNCTIONS_NAMESPACE}/services?dryRun=All`, bad),
      /validation\.webhook\.serving\.knative\.dev.*min-scale/,
    );
  },
};

function helloService(image: string) {
  return {
    apiVersion: "serving.knative.dev/v1",
    kind: "Service",
    metadata: { name: "hello", namespace: HELLO_NS },
    spec: {
      template: {
        // The shortest stable window Knative allows: the revision goes idle soon after its last request.
        metadata: { annotations: { "autoscaling.knative.dev/window": "6s" } },
        spec: { containers: [{ image }] },
      },
    },
  };
}

const readyThroughTraefik: ClusterCase = {
  name: "a Knative Service becomes Ready through Traefik's KIngress and answers through Traefik",
  timeoutMs: 240_000,
  run: async (t: TestContext) => {
    const c = cluster();
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: HELLO_NS } };
    await c.admin.ensure("/api/v1/namespaces", placedOnRealNode(namespace));
    await c.admin.ensure(`${KSVC}/${HELLO_NS}/services`, helloService(c.knative?.images.helloworld ?? ""));
    const ksvc = await eventually(
      "Service hello Ready",
      async () => {
        const s = await c.admin.request<{ status?: { conditions?: Condition[]; url?: string } }>(
          "GET",
          `${KSVC}/${HELLO_NS}/services/hello`,
        );
        return conditionTrue(s.status?.conditions, "Ready") ? s : undefined;
      },
      180_000,
    );
    assert.equal(ksvc.status?.url, `http://${HELLO_HOST}`);
    // Traefik's provider marks the KIngress Ready once its configuration is loaded, without probing the data
    // path as Kourier does, so the first requests may get 502 until kube-proxy has the revision's Service.
    const ip = await traefikPodIp(c.admin);
    const ready = Date.now();
    const answer = await eventually(
      "200 through Traefik",
      async () => {
        const a = await throughTraefik(ip, HELLO_HOST);
        return a.status === 200 ? a : undefined;
      },
      30_000,
    );
    assert.match(answer.body, /^Hello World!/);
    t.diagnostic(`first 200 through Traefik ${Date.now() - ready} ms after the Service was Ready`);
  },
};

const fromZero: ClusterCase = {
  name: "Knative scales the Service to zero, and a request through Traefik starts it again via the activator",
  timeoutMs: 300_000,
  run: async (t: TestContext) => {
    const c = cluster();
    const helloPods = async () =>
      (await pods(c.admin, HELLO_NS)).filter((p) => p.status.phase !== "Succeeded");
    const t0 = Date.now();
    await eventually(
      "hello scaled to zero (no pod left)",
      async () => (await helloPods()).length === 0,
      240_000,
    );
    t.diagnostic(`scaled to zero ${((Date.now() - t0) / 1000).toFixed(1)} s after the previous case`);
    const sks = await c.admin.request<{ spec: { mode: string } }>(
      "GET",
      `/apis/networking.internal.knative.dev/v1alpha1/namespaces/${HELLO_NS}/serverlessservices/hello-00001`,
    );
    assert.equal(sks.spec.mode, "Proxy", "at zero the revision's Service leads to the activator");
    const ip = await traefikPodIp(c.admin);
    const start = Date.now();
    const answer = await throughTraefik(ip, HELLO_HOST);
    const coldMs = Date.now() - start;
    assert.equal(answer.status, 200);
    assert.match(answer.body, /^Hello World!/);
    assert.equal((await helloPods()).length, 1, "one pod started for the request");
    t.diagnostic(`cold start from zero through Traefik and the activator: ${coldMs} ms`);
  },
};

/** SIMKUBE_FN_KNATIVE_COLD_CYCLES=N: N more cold starts, scale-to-zero grace at Knative's minimum (6 s). */
const COLD_CYCLES = Number(process.env.SIMKUBE_FN_KNATIVE_COLD_CYCLES ?? "0");

async function coldStart(c: LocalCluster, ip: string): Promise<number> {
  const helloPods = async () => (await pods(c.admin, HELLO_NS)).filter((p) => p.status.phase !== "Succeeded");
  await eventually(
    "hello scaled to zero (no pod left)",
    async () => (await helloPods()).length === 0,
    120_000,
  );
  const start = Date.now();
  const answer = await throughTraefik(ip, HELLO_HOST);
  const ms = Date.now() - start;
  assert.equal(answer.status, 200);
  assert.match(answer.body, /^Hello World!/);
  return ms;
}

const coldCycles: ClusterCase = {
  name: `${COLD_CYCLES} cold starts from zero through Traefik and the activator (SIMKUBE_FN_KNATIVE_COLD_CYCLES)`,
  timeoutMs: 60_000 + COLD_CYCLES * 90_000,
  run: async (t: TestContext) => {
    const c = cluster();
    await c.admin.request(
      "PATCH",
      "/api/v1/namespaces/knative-serving/configmaps/config-autoscaler",
      { data: { "scale-to-zero-grace-period": "6s" } },
      "application/merge-patch+json",
    );
    const ip = await traefikPodIp(c.admin);
    const times: number[] = [];
    for (let i = 0; i < COLD_CYCLES; i++) times.push(await coldStart(c, ip));
    const sorted = [...times].sort((a, b) => a - b);
    t.diagnostic(
      `cold starts (ms): ${times.join(", ")}; p50 ${percentile(sorted, 50)}, p99 ${percentile(sorted, 99)}`,
    );
  },
};

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});

registerClusterCases("knative-serving.test.ts", suite, [
  servingOnNode,
  webhookJudges,
  readyThroughTraefik,
  fromZero,
  ...(COLD_CYCLES > 0 ? [coldCycles] : []),
]);
