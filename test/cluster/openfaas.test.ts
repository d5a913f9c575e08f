// The functions served by OpenFaaS CE on `cluster up --openfaas` (test/support/cluster/openfaas-functions.ts
// says how they are deployed: the node22-template images, the rendered objects applied, `faas-cli deploy -f`
// the rendered stack.yml). The API server reaches them over TLS (the run's CA) through the gateway with the
// path secret, as `manifests --platform openfaas --webhook-gateway-url` renders the webhook configuration:
// - the gateway lists both functions with basic auth and refuses the list without it;
// - a simulation pod CREATE admitted and mutated through the gateway, through the deployment's webhook and
//   through sk-<sim>-mutatepods (`manifests webhook --sim-name`, the stock-SimKube adoption path);
// - an eviction of a running bare pod: exactly one clone;
// - a forged DELETE review of a live pod posted to the gateway with the path secret: allowed, no clone;
// - a function whose image the node lacks: the bounded wait fails at once naming the pod's reason; one whose
//   readiness probe never passes: the wait ends at its deadline naming the failing probe;
// - the gateway scaled to zero, and the gateway hung (its container paused): CREATE fails closed within the
//   webhook timeout, DELETE goes through, and the API server's log names the webhook failing closed and the
//   one failing open;
// - a teardown of SIMKUBE_FN_OPENFAAS_BURST (300) running pods with and without the DELETE webhook, one round
//   each: no webhook error, no clone (the timed rounds are `npm run bench:openfaas`).
// A failed case keeps the gateway's, faas-netes' and the function pods' logs and the API server's log
// (test/support/cluster/openfaas-logs.ts) and names the directory in its diagnostics.
// Skipped with one loud line when Go, the node's programs or the image tools are missing; fails under CI=true.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import https from "node:https";
import path from "node:path";
import { after, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import {
  FunctionStartError,
  functionPods,
  waitForFunctionPods,
} from "../../functions/local-cluster/openfaas/function-status.js";
import { listFunctions } from "../../functions/local-cluster/openfaas/gateway-client.js";
import { PROBE_IMAGE } from "../../functions/local-cluster/openfaas/install.js";
import { GATEWAY_LABELS } from "../../functions/local-cluster/openfaas/objects.js";
import { readyEndpoint } from "../../functions/local-cluster/openfaas/tls-front.js";
import { NODE_PROGRAMS } from "../../functions/local-cluster/real-node/real-node.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildSimulationWebhookConfiguration, simulationWebhookName } from "../../knative/manifests.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import { forgedDelete } from "../support/cluster/forged-review.js";
import {
  barePod,
  clientsFor,
  clonesOf,
  createVirtualNamespace,
  eventually,
  readPod,
  replaceObject,
  runningBarePod,
  waitPodGone,
  waitPodPhase,
} from "../support/cluster/kube.js";
import { assertMutated } from "../support/cluster/mutation-scenarios.js";
import {
  buildOpenfaasImages,
  deployThroughOpenfaas,
  type OpenfaasDeployment,
  openfaasFunctionName,
} from "../support/cluster/openfaas-functions.js";
import { keepOpenfaasLogs } from "../support/cluster/openfaas-logs.js";
import {
  type ClusterCase,
  clusterOf,
  openDeployedSuite,
  registerClusterCases,
} from "../support/cluster/suite.js";
import { runTeardownBurst } from "../support/cluster/teardown-burst.js";
import { webhookErrors } from "../support/cluster/teardown-scenario.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NS = "virtual-openfaas";
/** Pods per teardown round (one with the DELETE webhook, one without); 0 leaves the case out. The timed,
 * multi-round comparison is `npm run bench:openfaas`. */
const BURST = Number(process.env.SIMKUBE_FN_OPENFAAS_BURST ?? "300");

const opened = await openDeployedSuite({
  buildScript: "scripts/build-openfaas-image.sh",
  build: () => buildOpenfaasImages(repoRoot),
  cluster: { realNode: true, reschedule: true, recordReviews: true, withOpenfaas: true },
  deploy: deployThroughOpenfaas,
});

const cluster = (): LocalCluster => clusterOf(opened.suite);
function deployed(): OpenfaasDeployment {
  if (!opened.deployed) throw new Error("not deployed");
  return opened.deployed;
}
function openfaas() {
  const o = cluster().openfaas;
  if (!o) throw new Error("no OpenFaaS");
  return o;
}

const core = () => clientsFor(cluster().kubeconfig).core;
const hostReviewsOf = (name: string) => cluster().reviews.filter((r) => r.request.name === name);

/** Creates a simulation pod and waits for it to run; the create's own duration (the review included). */
async function createSimulationPod(name: string): Promise<number> {
  const c = cluster();
  const t0 = Date.now();
  await core().createNamespacedPod({ namespace: NS, body: barePod(c, name) });
  const ms = Date.now() - t0;
  assertMutated(await waitPodPhase(core(), NS, name, "Running"), c.simName);
  assert.equal(hostReviewsOf(name).length, 0, "no review reached the host processes");
  return ms;
}

/** POSTs a review to the gateway's TLS front at the function's webhook path, trusting the run's CA. */
function postToGateway(fn: "reschedule-delete", review: AdmissionReview): Promise<AdmissionReview> {
  const o = resolveOptions(deployed().options);
  const url = `${openfaas().webhookGatewayUrl}/function/${openfaasFunctionName(deployed().options, fn)}/${o.pathSecret}`;
  const body = JSON.stringify(review);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: "POST",
        ca: cluster().caCertPem,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 20_000,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(JSON.parse(text) as AdmissionReview)
            : reject(new Error(`HTTP ${res.statusCode}: ${text}`)),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer")));
    req.on("error", reject);
    req.end(body);
  });
}

const listed: ClusterCase = {
  name: "the gateway lists both functions deployed by faas-cli from the rendered stack.yml (basic auth), and refuses without it",
  run: async (t: TestContext) => {
    const o = openfaas();
    t.diagnostic(
      `cluster up --openfaas: OpenFaaS ready ${cluster().timings.openfaasReady} ms into the start (gateway up, probe function deployed, called, removed in ${o.readyMs} ms)`,
    );
    t.diagnostic(`faas-cli deploy to both functions ready: ${deployed().readyMs} ms`);
    // The readiness probe function may still be terminating: it is removed, not waited for.
    const names = (await listFunctions(o.gateway)).map((f) => f.name).filter((n) => n !== "openfaas-probe");
    const want = resolveOptions(deployed().options).functions.map((fn) =>
      openfaasFunctionName(deployed().options, fn),
    );
    assert.deepEqual(names.sort(), [...want].sort());
    assert.equal((await o.gateway.request("GET", "/system/functions", undefined, false)).status, 401);
    await createVirtualNamespace(cluster(), core(), NS);
  },
};

const created: ClusterCase = {
  name: "a simulation pod CREATE is admitted and mutated through the gateway (TLS, path secret)",
  run: async (t: TestContext) => {
    const ms = await createSimulationPod("through-gateway");
    t.diagnostic(`CREATE through the gateway answered in ${ms} ms`);
  },
};

const adopted: ClusterCase = {
  name: "through sk-<sim>-mutatepods (manifests webhook --sim-name), the webhook stock SimKube adopts",
  run: async (t: TestContext) => {
    const c = cluster();
    const own = deployed().objects.find((m) => m.kind === "MutatingWebhookConfiguration");
    assert.ok(own?.metadata?.name);
    await c.admin.request(
      "DELETE",
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${own.metadata.name}`,
    );
    const sim = buildSimulationWebhookConfiguration(deployed().options);
    assert.equal(sim.metadata?.name, simulationWebhookName(c.simName));
    await replaceObject(c, sim as never);
    const ms = await createSimulationPod("adopted");
    t.diagnostic(`CREATE through ${sim.metadata?.name} answered in ${ms} ms`);
    await c.admin.request(
      "DELETE",
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${sim.metadata?.name}`,
    );
    await replaceObject(c, own);
  },
};

const evicted: ClusterCase = {
  name: "an eviction of a running bare pod through the gateway: exactly one clone",
  run: async (t: TestContext) => {
    await runningBarePod(cluster(), core(), NS, "evicted");
    const t0 = Date.now();
    await core().createNamespacedPodEviction({
      name: "evicted",
      namespace: NS,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "evicted", namespace: NS } },
    });
    await eventually("a clone", async () => (await clonesOf(core(), NS, "evicted")).length > 0, 60_000);
    t.diagnostic(`clone seen ${Date.now() - t0} ms after the eviction`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    assert.equal((await clonesOf(core(), NS, "evicted")).length, 1, "exactly one clone");
    assert.equal(hostReviewsOf("evicted").length, 0, "no review reached the host processes");
  },
};

const forged: ClusterCase = {
  name: "a forged DELETE review of a live pod posted to the gateway with the path secret: allowed, no clone",
  run: async () => {
    const pod = await runningBarePod(cluster(), core(), NS, "forged-target");
    const answers = await Promise.all(
      [1, 2].map((n) => postToGateway("reschedule-delete", forgedDelete(pod, n))),
    );
    for (const answer of answers) {
      assert.equal(answer.response?.allowed, true);
      assert.equal(answer.response?.patch, undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    assert.equal((await clonesOf(core(), NS, "forged-target")).length, 0, "no clone");
    assert.equal((await readPod(core(), NS, "forged-target"))?.status?.phase, "Running");
  },
};

const missingImage: ClusterCase = {
  name: "a function whose image the node lacks: the bounded wait fails at once with the pod's reason",
  run: async () => {
    const o = openfaas();
    const name = "image-missing";
    const res = await o.gateway.request("POST", "/system/functions", {
      service: name,
      image: "dev.local/simkube-fn-absent:1",
      namespace: o.functionNamespace,
    });
    assert.ok(res.status < 300, `deploy accepted: ${res.status} ${res.body}`);
    const t0 = Date.now();
    await assert.rejects(
      waitForFunctionPods(cluster().admin, o.functionNamespace, name, 90_000),
      (err: Error) =>
        err instanceof FunctionStartError &&
        /cannot start: .*(ErrImagePull|ImagePullBackOff)/.test(err.message),
    );
    assert.ok(Date.now() - t0 < 90_000, "failed before the deadline");
    await o.gateway.request("DELETE", "/system/functions", { functionName: name });
  },
};

const probeFailing: ClusterCase = {
  name: "a function whose readiness probe never passes: the bounded wait ends at its deadline naming the failing probe",
  run: async () => {
    const o = openfaas();
    const name = "probe-failing";
    // of-watchdog answers its health path 503 until it writes its lock file; suppress_lock means never.
    const res = await o.gateway.request("POST", "/system/functions", {
      service: name,
      image: PROBE_IMAGE,
      namespace: o.functionNamespace,
      envVars: { mode: "static", static_path: "/", suppress_lock: "true" },
    });
    assert.ok(res.status < 300, `deploy accepted: ${res.status} ${res.body}`);
    try {
      await assert.rejects(
        waitForFunctionPods(cluster().admin, o.functionNamespace, name, 30_000),
        // faas-netes gives the function the same probe for readiness and liveness: either may be the last
        // warning, and a liveness restart loop (CrashLoopBackOff) ends the wait before its deadline.
        (err: Error) =>
          err instanceof FunctionStartError &&
          /(not ready after 30000 ms|cannot start): .*last warning Unhealthy: (Readiness|Liveness) probe failed/.test(
            err.message,
          ),
      );
    } finally {
      await o.gateway.request("DELETE", "/system/functions", { functionName: name });
    }
  },
};

async function scaleGateway(replicas: number): Promise<void> {
  await cluster().admin.request(
    "PATCH",
    "/apis/apps/v1/namespaces/openfaas/deployments/gateway",
    { spec: { replicas } },
    "application/merge-patch+json",
  );
}

const gatewayDown: ClusterCase = {
  name: "the gateway down: a CREATE fails closed within the webhook timeout naming the webhook, a DELETE is not blocked",
  timeoutMs: 180_000,
  run: async (t: TestContext) => {
    const o = openfaas();
    await runningBarePod(cluster(), core(), NS, "deleted-while-down");
    await scaleGateway(0);
    try {
      await eventually(
        "the gateway's pod gone",
        async () => !(await readyEndpoint(cluster().admin, o.namespace, "gateway")),
        90_000,
      );
      const failuresBefore = o.front.failures();
      const logFrom = webhookErrors(cluster().logDir).length;
      const t0 = Date.now();
      await assert.rejects(
        core().createNamespacedPod({ namespace: NS, body: barePod(cluster(), "created-while-down") }),
        (err: { body?: string }) => /failed calling webhook/.test(String(err.body)),
      );
      const createMs = Date.now() - t0;
      const timeout = resolveOptions(deployed().options).tuning["mutate-create"].timeoutSeconds;
      assert.ok(createMs < timeout * 1000, `refused in ${createMs} ms, within ${timeout} s`);
      await core().deleteNamespacedPod({ name: "deleted-while-down", namespace: NS, gracePeriodSeconds: 0 });
      await waitPodGone(core(), NS, "deleted-while-down", 60_000);
      assert.equal((await clonesOf(core(), NS, "deleted-while-down")).length, 0, "no clone");
      assert.ok(o.front.failures() > failuresBefore, "the TLS front saw no gateway");
      const calls = await loggedFailClosedAndOpen(logFrom);
      t.diagnostic(
        `CREATE refused in ${createMs} ms with the gateway down; DELETE went through; the API server's log: failing closed ${calls.closed[0]}, failing open ${calls.open[0]}`,
      );
    } finally {
      await scaleGateway(1);
    }
    await eventually(
      "the gateway back",
      async () => Boolean(await readyEndpoint(cluster().admin, o.namespace, "gateway")),
      120_000,
    );
    await createSimulationPod("after-gateway-back");
  },
};

/** The API server's "Failed calling webhook, failing open|closed <webhook>" lines since `from`. */
function failedCalls(from: number): { open: string[]; closed: string[] } {
  const lines = webhookErrors(cluster().logDir).slice(from);
  const named = (how: string) =>
    lines.flatMap((l) => l.match(new RegExp(`failing ${how} ([\\w.-]+)`))?.[1] ?? []);
  return { open: named("open"), closed: named("closed") };
}

/** Waits (klog flushes every few seconds) until the log names mutate-create failing closed and
 * reschedule-delete failing open. */
function loggedFailClosedAndOpen(from: number): Promise<{ open: string[]; closed: string[] }> {
  return eventually(
    "the API server's log: mutate-create failing closed, reschedule-delete failing open",
    async () => {
      const calls = failedCalls(from);
      const both =
        calls.closed.some((w) => w.startsWith("mutate-create.")) &&
        calls.open.some((w) => w.startsWith("reschedule-delete."));
      return both ? calls : undefined;
    },
    20_000,
  );
}

/** The gateway pod's running containers, for `ctr task pause|resume` in the node's containerd: a paused
 * gateway accepts connections and never answers, as a stuck or overloaded one looks to the API server. */
async function gatewayContainers(): Promise<string[]> {
  const pods = await cluster().admin.request<{
    items: {
      metadata: { deletionTimestamp?: string };
      status?: { containerStatuses?: { containerID?: string; state?: { running?: unknown } }[] };
    }[];
  }>("GET", `/api/v1/namespaces/${openfaas().namespace}/pods?labelSelector=app%3D${GATEWAY_LABELS.app}`);
  return pods.items
    .filter((p) => !p.metadata.deletionTimestamp)
    .flatMap((p) => p.status?.containerStatuses ?? [])
    .filter((c) => c.state?.running && c.containerID)
    .map((c) => (c.containerID ?? "").replace(/^containerd:\/\//, ""));
}

async function ctrTask(action: "pause" | "resume", ids: readonly string[]): Promise<void> {
  const socket = cluster().realNode?.containerdSocket ?? "";
  for (const id of ids)
    await promisify(execFile)(NODE_PROGRAMS.ctr, ["--address", socket, "-n", "k8s.io", "task", action, id]);
}

const gatewayHung: ClusterCase = {
  name: "the gateway hung: a CREATE fails closed within the webhook timeout, a DELETE is not blocked, the API server's log names which failed closed and which open",
  timeoutMs: 240_000,
  run: async (t: TestContext) => {
    const o = resolveOptions(deployed().options);
    await runningBarePod(cluster(), core(), NS, "deleted-while-hung");
    const logFrom = webhookErrors(cluster().logDir).length;
    const containers = await gatewayContainers();
    assert.ok(containers.length > 0, "the gateway's running containers");
    await ctrTask("pause", containers);
    let createMs = 0;
    let deleteMs = 0;
    try {
      const t0 = Date.now();
      const [create, remove] = await Promise.allSettled([
        core()
          .createNamespacedPod({ namespace: NS, body: barePod(cluster(), "created-while-hung") })
          .finally(() => {
            createMs = Date.now() - t0;
          }),
        core()
          .deleteNamespacedPod({ name: "deleted-while-hung", namespace: NS, gracePeriodSeconds: 0 })
          .finally(() => {
            deleteMs = Date.now() - t0;
          }),
      ]);
      assert.equal(create.status, "rejected", "the CREATE failed closed");
      assert.match(String((create as PromiseRejectedResult).reason?.body), /failed calling webhook/);
      assert.equal(remove.status, "fulfilled", "the DELETE went through");
    } finally {
      await ctrTask("resume", containers);
    }
    const slack = 5_000; // the API server's own work around the webhook call
    assert.ok(
      createMs < o.tuning["mutate-create"].timeoutSeconds * 1000 + slack,
      `CREATE refused in ${createMs} ms`,
    );
    assert.ok(
      deleteMs < o.tuning["reschedule-delete"].timeoutSeconds * 1000 + slack,
      `DELETE in ${deleteMs} ms`,
    );
    await waitPodGone(core(), NS, "deleted-while-hung", 60_000);
    assert.equal((await clonesOf(core(), NS, "deleted-while-hung")).length, 0, "no clone");
    const calls = await loggedFailClosedAndOpen(logFrom);
    t.diagnostic(
      `gateway paused: CREATE refused in ${createMs} ms, DELETE through in ${deleteMs} ms; log: failing closed ${[...new Set(calls.closed)]}, failing open ${[...new Set(calls.open)]}`,
    );
    await eventually(
      "the gateway back",
      async () => Boolean(await readyEndpoint(cluster().admin, openfaas().namespace, "gateway")),
      120_000,
    );
    await createSimulationPod("after-gateway-resumed");
  },
};

const burst: ClusterCase = {
  name: `teardown of ${BURST} KWOK pods through OpenFaaS with and without the DELETE webhook: no webhook error, no clone (SIMKUBE_FN_OPENFAAS_BURST)`,
  timeoutMs: 300_000 + BURST * 1_000,
  run: async (t: TestContext) => {
    const o = resolveOptions(deployed().options);
    const name = openfaasFunctionName(deployed().options, "reschedule-delete");
    const rounds = await runTeardownBurst(cluster(), {
      pods: BURST,
      order: [true, false],
      replicas: async () => (await functionPods(cluster().admin, o.namespace, name)).length,
      log: (line) => t.diagnostic(line),
    });
    for (const r of rounds) {
      assert.equal(r.webhookErrors, 0, "no webhook error in the API server's log");
      assert.equal(r.clonesSeen, 0, "no clone");
    }
  },
};

after(async () => {
  if ("cluster" in opened.suite) await opened.suite.cluster.stop();
});

/** A failed case keeps the gateway's, faas-netes' and the function pods' logs and says where. */
function keepingLogs(c: ClusterCase): ClusterCase {
  return {
    ...c,
    run: async (t) => {
      try {
        await c.run(t);
      } catch (err) {
        const dir = await keepOpenfaasLogs(cluster(), `${c.name}: ${(err as Error).message}`);
        t.diagnostic(`OpenFaaS and API server logs kept in ${dir}`);
        throw err;
      }
    },
  };
}

registerClusterCases(
  "openfaas.test.ts",
  opened.suite,
  [
    listed,
    created,
    adopted,
    evicted,
    forged,
    missingImage,
    probeFailing,
    gatewayDown,
    gatewayHung,
    // Last: it removes the cluster's own SimulationRoot.
    ...(BURST > 0 ? [burst] : []),
  ].map(keepingLogs),
);
