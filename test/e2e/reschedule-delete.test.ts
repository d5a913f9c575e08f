// reschedule-delete end to end: the function's HTTP server (functions/runtime/http-server.ts) with the real handler and
// the real client path (shared/kube/client.ts over @kubernetes/client-node) against the fake API server. Deletions
// go through the fake API server, which calls the function as its DELETE webhook with real AdmissionReviews
// (two-phase pod deletion, empty names from collection deletes); the cases a fake cannot produce (forged
// reviews, a review of one phase alone) are posted to the function directly.

import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, afterEach, describe, test } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { createRescheduleDeleteHandler } from "../../functions/reschedule-delete/handler.js";
import type { RescheduleOutcome } from "../../functions/reschedule-delete/outcomes.js";
import type { RescheduleStatsSnapshot } from "../../functions/reschedule-delete/stats.js";
import { buildRescheduleDeleteDeps } from "../../functions/reschedule-delete/wiring.js";
import { createApp, listen } from "../../functions/runtime/http-server.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import {
  ADMIN_USER,
  CONTROLLER_MANAGER_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  POD_GC_USER,
  SIMKUBE_DRIVER_USER,
} from "../../shared/base/identities.js";
import { createLogger } from "../../shared/base/log.js";
import { loadConfig } from "../../shared/config/config.js";
import type { KubeApi, KubeObject } from "../../shared/kube/api.js";
import { createKubeApi } from "../../shared/kube/client.js";
import {
  buildDeleteReview,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  disruptionTarget,
  type PodOptions,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_NAMESPACE,
  TEST_POD_UID,
  TEST_SIM_NAME,
  TEST_SIM_ROOT_NAME,
} from "../support/builders.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";

const POD_PATH = `/api/v1/namespaces/${TEST_NAMESPACE}/pods`;

/** The driver's root of TEST_SIM_NAME as the simulation's objects reference it. */
const SIM_ROOT = rootOwnerRef(TEST_SIM_ROOT_NAME);
/** Another simulation running in the same cluster. */
const OTHER_SIM = "other-sim";
const OTHER_ROOT = rootOwnerRef("sk-other-sim-driver-root", "other-root-uid");
const OTHER_NAMESPACE = "virtual-other";

// The spec a pod read from the API has (defaults filled), so that creating its clone adds nothing.
const DEFAULTED_SPEC = {
  containers: [
    {
      name: "container-0",
      image: "nginx:1.27",
      imagePullPolicy: "IfNotPresent",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
    },
  ],
  restartPolicy: "Always",
  terminationGracePeriodSeconds: 30,
  dnsPolicy: "ClusterFirst",
  schedulerName: "default-scheduler",
  securityContext: {},
  tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
  nodeSelector: { type: "virtual" },
};

interface Env {
  api: FakeApiServer;
  fnUrl: string;
  /** Objects the function asked the API to create, as sent. */
  created: KubeObject[];
  logLines: Record<string, unknown>[];
  stats(): RescheduleStatsSnapshot;
  /** Until every clone waiting for its deletion to show was decided. */
  settle(): Promise<void>;
  /** A pod as the simulation stores it: bare, owned by the SimulationRoot, Running on a KWOK node. */
  putPod(options?: PodOptions): KubeObject;
  getPod(name: string): KubeObject | undefined;
  podNames(): string[];
  /** DELETE through the fake API server (which calls the function) as `user`. */
  deletePod(name: string, user: string, query?: string): Promise<Response>;
  /** POST a review straight to the function. */
  review(review: AdmissionReview): Promise<AdmissionReview>;
  /** POST any body straight to the function; the raw answer. */
  post(body: unknown): Promise<Response>;
  close(): Promise<void>;
}

const open: Env[] = [];

interface EnvOptions {
  sim?: Parameters<typeof buildSimulation>[0];
  root?: Parameters<typeof buildSimulationRoot>[0];
  namespacePhase?: "Active" | "Terminating";
}

async function startEnv(options: EnvOptions = {}): Promise<Env> {
  const api = await startFakeApiServer({ namespaces: ["default", TEST_NAMESPACE] });
  api.store.put(buildSimulation({ rescheduleInterruptedBarePods: true, ...options.sim }));
  api.store.put(buildSimulationRoot({ name: TEST_SIM_ROOT_NAME, ...options.root }));
  // The test namespace is a virtual namespace of the simulation, as SimKube's driver creates it.
  api.store.put(buildVirtualNamespace(SIM_ROOT, { phase: options.namespacePhase ?? "Active" }));

  const kubeconfigPath = await writeKubeconfig(api.url);
  const realKube = createKubeApi({ kubeconfigPath });
  const created: KubeObject[] = [];
  // The real adapter, with the bodies of creates recorded on the way out.
  const kube: KubeApi = {
    read: (ref, options) => realKube.read(ref, options),
    create: (obj) => {
      created.push(structuredClone(obj));
      return realKube.create(obj);
    },
    replace: (obj) => realKube.replace(obj),
  };
  const logLines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) logLines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger("info", sink);
  const config = loadConfig({ SIM_NAME: TEST_SIM_NAME });
  const deps = await buildRescheduleDeleteDeps(config, kube, log);
  const app = createApp(createRescheduleDeleteHandler(deps), log, { stats: () => deps.stats.snapshot() });
  const server: Server = await listen(app, 0, "127.0.0.1");
  const fnUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  api.webhooks.push({
    name: "reschedule-delete.simkube.io",
    url: fnUrl,
    operations: ["DELETE"],
    resources: ["pods"],
    failurePolicy: "Fail",
  });

  const env: Env = {
    api,
    fnUrl,
    created,
    logLines,
    stats: () => deps.stats.snapshot(),
    async settle() {
      assert.equal(await deps.pending.settle(30_000), true, "every clone waiting was decided");
    },
    putPod(podOptions = {}) {
      const pod = buildPod({
        nodeName: "kwok-node-1",
        spec: DEFAULTED_SPEC,
        ownerReferences: [SIM_ROOT],
        ...podOptions,
      });
      return api.store.put(pod);
    },
    getPod(name) {
      return api.store.get({ kind: "Pod", name, namespace: TEST_NAMESPACE });
    },
    podNames() {
      return api.store
        .list("Pod", TEST_NAMESPACE)
        .map((p) => p.metadata?.name ?? "")
        .sort();
    },
    deletePod(name, user, query = "") {
      return fetch(`${api.url}${POD_PATH}/${name}${query}`, {
        method: "DELETE",
        headers: { "x-fake-user": user },
      });
    },
    async review(body) {
      const res = await this.post(body);
      assert.equal(res.status, 200);
      return (await res.json()) as AdmissionReview;
    },
    post(body) {
      return fetch(fnUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await api.close();
    },
  };
  open.push(env);
  return env;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((env) => env.close()));
});
after(async () => {
  await removeAllKubeconfigs();
});

/** Every DELETE the function answered: allowed, with no patch. */
function assertEveryDeleteAllowedWithoutPatch(env: Env): void {
  const deletes = env.api.admissions.filter((a) => a.request.operation === "DELETE");
  for (const call of deletes) {
    assert.equal(call.error, undefined);
    assert.equal(call.response?.allowed, true);
    assert.equal(call.response?.patch, undefined);
    assert.equal(call.response?.patchType, undefined);
  }
}

function assertAllowedWithoutPatch(review: AdmissionReview): void {
  assert.equal(review.response?.allowed, true);
  assert.equal(review.response?.patch, undefined);
}

/** A graceful delete by `user`, then KWOK's final grace-0 delete: the whole life of one deletion. */
async function deleteLikeACluster(env: Env, name: string, user: string): Promise<void> {
  const first = await env.deletePod(name, user);
  assert.equal(first.status, 200, await first.text());
  const final = await env.deletePod(name, KWOK_USER, "?gracePeriodSeconds=0");
  assert.equal(final.status, 200, await final.text());
  assert.equal(env.getPod(name), undefined, "the pod is gone");
  await env.settle();
}

const TERMINATING: PodOptions = { deletionTimestamp: "2024-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 };

describe("reschedule-delete against the fake API server", () => {
  test("a user's delete of a Running bare pod makes one clone with exactly the expected body", async () => {
    const env = await startEnv();
    env.putPod({
      labels: { "simkube.io/simulation": TEST_SIM_NAME, "simkube.io/kwok-stage-complete": "true" },
      annotations: {
        "simkube.io/kwok-stage-complete-time": "2024-01-01T00:01:00Z",
        "simkube.io/kwok-stage-create-delay": "0ms",
        "static.simkube.io/original-namespace": "testing",
        "static.simkube.io/pod-spec-stable-hash": "17506812802394981455",
        "static.simkube.io/pod-sequence-number": "0",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
      },
      conditions: [{ type: "Ready", status: "True" }],
    });

    await deleteLikeACluster(env, "the-pod", ADMIN_USER);

    const expected = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "the-pod-clone-1",
        namespace: TEST_NAMESPACE,
        labels: { foo: "bar" },
        ownerReferences: [SIM_ROOT],
        annotations: {
          "static.simkube.io/original-namespace": "testing",
          "static.simkube.io/pod-spec-stable-hash": "17506812802394981455",
          "static.simkube.io/pod-sequence-number": "0",
          "static.simkube.io/original-owner": "the-pod",
          // The cluster's record of which pod this clone replaces (clone-record.ts).
          "reschedule.simkube-fn/clone-of": JSON.stringify([TEST_POD_UID]),
        },
      },
      spec: structuredClone(DEFAULTED_SPEC),
    };
    assert.deepEqual(env.created, [expected], "one create, this body");
    const stored = env.getPod("the-pod-clone-1");
    assert.ok(stored);
    assert.deepEqual(stored.spec, expected.spec);
    assert.deepEqual(stored.metadata?.annotations, expected.metadata.annotations);
    assert.deepEqual(stored.metadata?.labels, expected.metadata.labels);
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
    // One deletion: the user's review and KWOK's two (update to grace 0, then the storage delete).
    assert.equal(env.api.admissions.length, 3);
    assertEveryDeleteAllowedWithoutPatch(env);
    assert.deepEqual(env.stats().clones, { created: 1, alreadyExisted: 0, failed: 0 });
    assert.equal(env.stats().decisions.cloned, 1);
    assert.equal(env.stats().decisions["final-phase"], 2);
  });

  test("a clone of a clone: -clone-42 becomes -clone-43, the original owner kept", async () => {
    const env = await startEnv();
    env.putPod({ name: "the-pod-clone-42", annotations: { "static.simkube.io/original-owner": "the-pod" } });
    await deleteLikeACluster(env, "the-pod-clone-42", ADMIN_USER);
    assert.deepEqual(env.podNames(), ["the-pod-clone-43"]);
    assert.equal(
      env.getPod("the-pod-clone-43")?.metadata?.annotations?.["static.simkube.io/original-owner"],
      "the-pod",
    );
  });

  const noClone: Array<[string, PodOptions, string]> = [
    ["a pod that is not Running", { phase: "Succeeded" }, ADMIN_USER],
    ["a pod owned by a ReplicaSet", { ownerReferences: [SIM_ROOT, replicaSetOwnerRef()] }, ADMIN_USER],
    ["the driver's delete (production deleted it)", {}, SIMKUBE_DRIVER_USER],
  ];
  for (const [name, pod, user] of noClone) {
    test(`no clone for ${name}, and no API call for it`, async () => {
      const env = await startEnv();
      env.putPod(pod);
      env.api.resetLog();
      const first = await env.deletePod("the-pod", user);
      assert.equal(first.status, 200);
      await env.deletePod("the-pod", KWOK_USER, "?gracePeriodSeconds=0");
      assert.deepEqual(env.podNames(), []);
      assert.deepEqual(env.created, []);
      assert.equal(env.api.count("GET"), 0, "the function read nothing");
      assertEveryDeleteAllowedWithoutPatch(env);
    });
  }

  test("a dry-run delete clones nothing", async () => {
    const env = await startEnv();
    env.putPod();
    const res = await env.deletePod("the-pod", ADMIN_USER, "?dryRun=All");
    assert.equal(res.status, 200);
    assert.equal(env.api.admissions[0]?.request.dryRun, true);
    assert.deepEqual(env.podNames(), ["the-pod"]);
    assert.deepEqual(env.created, []);
  });

  test("the same deletion's reviews repeated make one clone", async () => {
    const env = await startEnv();
    const pod = env.putPod();
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    // The API server may call again (conflicts, stale cache): replay the first review five times.
    const replay = buildDeleteReview({ pod, user: ADMIN_USER });
    for (let i = 0; i < 5; i++) assertAllowedWithoutPatch(await env.review(replay));
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
    assert.equal(env.created.length, 1);
  });

  test("an eviction: only KWOK's final delete is reviewed, and its DisruptionTarget makes the clone", async () => {
    const env = await startEnv();
    // What the eviction API left behind: the condition, and a graceful deletion in progress.
    env.putPod({ ...TERMINATING, conditions: [disruptionTarget("EvictionByEvictionAPI")] });
    const final = await env.deletePod("the-pod", KWOK_USER, "?gracePeriodSeconds=0");
    assert.equal(final.status, 200);
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
    assert.equal(env.created.length, 1);
    assert.equal(env.api.admissions.length, 2);
    assertEveryDeleteAllowedWithoutPatch(env);
    assert.deepEqual(env.stats().interruptions, { EvictionByEvictionAPI: 1 });
  });

  test("a final-phase review without DisruptionTarget is the tail of a judged delete: no clone", async () => {
    const env = await startEnv();
    env.putPod(TERMINATING);
    env.api.resetLog();
    await env.deletePod("the-pod", KWOK_USER, "?gracePeriodSeconds=0");
    assert.deepEqual(env.podNames(), []);
    assert.equal(env.api.count("*"), 1, "only the delete itself: the function made no call");
  });

  test("podgc force-deletes a Failed pod with DisruptionTarget (its node was deleted): one clone", async () => {
    const env = await startEnv();
    env.putPod({ phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] });
    const res = await env.deletePod("the-pod", POD_GC_USER, "?gracePeriodSeconds=0");
    assert.equal(res.status, 200);
    await env.settle();
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
    assert.equal(env.created.length, 1);
    const status = env.getPod("the-pod-clone-1")?.status as { phase?: string } | undefined;
    assert.equal(status?.phase, "Pending", "status not carried over");
  });

  test("a 503 on the first create is retried: one clone", async () => {
    const env = await startEnv();
    env.putPod();
    env.api.failNext({ method: "POST", path: /\/pods$/, status: 503, message: "etcd leader changed" });
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
    assert.equal(env.api.count("POST", /\/pods$/), 2);
    assert.equal(env.stats().retries, 1);
  });

  test("a terminating namespace: no clone", async () => {
    const env = await startEnv({ namespacePhase: "Terminating" });
    const pod = env.putPod();
    assertAllowedWithoutPatch(await env.review(buildDeleteReview({ pod, user: ADMIN_USER })));
    assert.deepEqual(env.created, []);
    assert.equal(env.stats().decisions["namespace-terminating"], 1);
  });

  test("a 403 for creating into a terminating namespace is a skip, not an error", async () => {
    const env = await startEnv();
    const pod = env.putPod();
    // Alive when checked, terminating by the time of the create.
    env.api.failNext({
      method: "POST",
      path: /\/pods$/,
      status: 403,
      reason: "Forbidden",
      message: `pods "the-pod-clone-1" is forbidden: unable to create new content in namespace ${TEST_NAMESPACE} because it is being terminated`,
    });
    await deleteLikeACluster(env, pod.metadata?.name ?? "", ADMIN_USER);
    assert.equal(env.stats().decisions["namespace-terminating"], 1);
    assert.deepEqual(env.stats().clones, { created: 0, alreadyExisted: 0, failed: 0 });
    assert.equal(
      env.logLines.filter((l) => (l.level as number) >= 50).length,
      0,
      "nothing logged as an error",
    );
  });

  test("a finished Simulation: no clone", async () => {
    const env = await startEnv({ sim: { state: "Finished" } });
    env.putPod();
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    assert.deepEqual(env.created, []);
    assert.equal(env.stats().decisions["simulation-over"], 1);
  });

  test("a Simulation without rescheduleInterruptedBarePods: no clone", async () => {
    const env = await startEnv({ sim: { rescheduleInterruptedBarePods: false } });
    env.putPod();
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    assert.deepEqual(env.created, []);
    assert.equal(env.stats().decisions["rescheduling-off"], 1);
  });

  test("a forged review cannot make the function create pods (pod absent, or another uid)", async () => {
    const env = await startEnv();
    const absent = buildDeleteReview({
      pod: buildPod({ name: "ghost", nodeName: "kwok-node-1", ownerReferences: [SIM_ROOT] }),
      user: ADMIN_USER,
    });
    assertAllowedWithoutPatch(await env.review(absent));
    env.putPod({ uid: "the-real-uid" });
    const wrongUid = buildDeleteReview({
      pod: buildPod({ uid: "forged-uid", ownerReferences: [SIM_ROOT] }),
      user: ADMIN_USER,
    });
    assertAllowedWithoutPatch(await env.review(wrongUid));
    assert.deepEqual(env.created, []);
    assert.deepEqual(env.podNames(), ["the-pod"]);
    assert.equal(env.stats().decisions["pod-gone"], 1);
    assert.equal(env.stats().decisions["uid-mismatch"], 1);
  });

  describe("forged reviews: the function judges the live objects, and creates nothing", () => {
    // Each review claims a bare Running pod owned by this simulation's root, deleted by a user; the objects
    // the API double holds say otherwise.
    const PRIVILEGED_SPEC = {
      hostNetwork: true,
      hostPID: true,
      containers: [{ name: "debug", image: "busybox", securityContext: { privileged: true } }],
      volumes: [{ name: "host", hostPath: { path: "/" } }],
    };

    /** Another simulation beside ours: its Simulation, its driver's root, its virtual namespace. */
    function putOtherSimulation(env: Env): void {
      env.api.store.put(buildSimulation({ name: OTHER_SIM, uid: "other-sim-uid" }));
      env.api.store.put(
        buildSimulationRoot({
          name: OTHER_ROOT.name,
          uid: OTHER_ROOT.uid,
          simName: OTHER_SIM,
          simUid: "other-sim-uid",
        }),
      );
      env.api.store.put(buildVirtualNamespace(OTHER_ROOT, { name: OTHER_NAMESPACE }));
    }

    /** Store `live`, post a review that shows it as the simulation's own bare pod, check nothing appeared. */
    async function forge(
      env: Env,
      live: PodOptions & { name: string; namespace: string },
      reason: RescheduleOutcome,
    ) {
      const stored = env.api.store.put(
        buildPod({ nodeName: "kwok-node-1", spec: DEFAULTED_SPEC, ownerReferences: [], ...live }),
      );
      const claimed = {
        ...structuredClone(stored),
        metadata: { ...stored.metadata, ownerReferences: [SIM_ROOT] },
      };
      env.api.resetLog();
      assertAllowedWithoutPatch(await env.review(buildDeleteReview({ pod: claimed, user: ADMIN_USER })));
      assert.deepEqual(env.created, [], "no create was even attempted");
      assert.equal(env.api.count("POST"), 0);
      const pods = env.api.store.list("Pod", live.namespace).map((p) => p.metadata?.name);
      assert.deepEqual(pods, [live.name], `only the original pod in ${live.namespace}`);
      assert.equal(env.stats().decisions[reason], 1, JSON.stringify(env.stats().decisions));
    }

    test("a real ownerless privileged pod in kube-system", async () => {
      const env = await startEnv();
      await forge(
        env,
        { name: "priv-debug", namespace: "kube-system", spec: PRIVILEGED_SPEC },
        "namespace-not-virtual",
      );
    });

    test("an ownerless pod in the simulation's own virtual namespace", async () => {
      const env = await startEnv();
      await forge(env, { name: "stray", namespace: TEST_NAMESPACE }, "not-owned-by-root");
    });

    test("another simulation's pod, in that simulation's virtual namespace", async () => {
      const env = await startEnv();
      putOtherSimulation(env);
      await forge(
        env,
        { name: "theirs", namespace: OTHER_NAMESPACE, ownerReferences: [OTHER_ROOT] },
        "namespace-not-virtual",
      );
    });

    test("another simulation's pod, in this simulation's virtual namespace", async () => {
      const env = await startEnv();
      putOtherSimulation(env);
      await forge(
        env,
        { name: "theirs", namespace: TEST_NAMESPACE, ownerReferences: [OTHER_ROOT] },
        "not-owned-by-root",
      );
    });

    test("a pod of this simulation's root in a namespace that is not virtual", async () => {
      const env = await startEnv();
      await forge(
        env,
        { name: "ours", namespace: "default", ownerReferences: [SIM_ROOT] },
        "namespace-not-virtual",
      );
    });

    test("a pod of this simulation's root in another simulation's virtual namespace", async () => {
      const env = await startEnv();
      putOtherSimulation(env);
      await forge(
        env,
        { name: "ours", namespace: OTHER_NAMESPACE, ownerReferences: [SIM_ROOT] },
        "namespace-not-virtual",
      );
    });
  });

  test("the clone is pinned to virtual nodes by the function, not by what the pod carried", async () => {
    const env = await startEnv();
    const { nodeSelector: _n, tolerations: _t, ...unpinned } = DEFAULTED_SPEC;
    env.putPod({ spec: { ...unpinned, nodeSelector: { type: "real" } } });
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    const [sent] = env.created as Array<KubeObject & { spec?: Record<string, unknown> }>;
    assert.deepEqual(sent?.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(sent?.spec?.tolerations, [
      { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
    ]);
    assert.deepEqual(sent?.metadata?.ownerReferences, [SIM_ROOT]);
    assert.equal(sent?.metadata?.namespace, TEST_NAMESPACE);
    assert.deepEqual(env.podNames(), ["the-pod-clone-1"]);
  });

  test("a DELETE review without a usable uid gets HTTP 400 with a JSON error, never allowed: false", async () => {
    const env = await startEnv();
    const pod = env.putPod();
    const { request } = buildDeleteReview({ pod, user: ADMIN_USER });
    for (const uid of [undefined, "", 42]) {
      const res = await env.post({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: { ...request, uid },
      });
      assert.equal(res.status, 400, `uid ${String(uid)}`);
      assert.match(res.headers.get("content-type") ?? "", /application\/json/);
      const body = (await res.json()) as { message?: string; response?: unknown };
      assert.match(body.message ?? "", /no uid/);
      assert.equal(body.response, undefined, "not an AdmissionReview");
    }
    assert.deepEqual(env.created, []);
  });

  test("a 250-character pod name gets a valid 253-character clone name", async () => {
    const env = await startEnv();
    const name = `${"a".repeat(120)}.${"b".repeat(129)}`;
    assert.equal(name.length, 250);
    env.putPod({ name });
    await deleteLikeACluster(env, name, ADMIN_USER);
    const [clone] = env.podNames();
    assert.ok(clone, "a clone was created");
    assert.equal(clone.length, 253);
    assert.ok(clone.endsWith("-clone-1"));
    assert.equal(env.getPod(clone)?.metadata?.annotations?.["static.simkube.io/original-owner"], name);
  });

  test("namespace deletion: per-pod reviews with an empty name, no clone, no API call", async () => {
    const env = await startEnv();
    for (let i = 0; i < 5; i++) env.putPod({ name: `pod-${i}`, uid: `uid-${i}` });
    env.api.resetLog();
    const res = await fetch(`${env.api.url}${POD_PATH}`, {
      method: "DELETE",
      headers: { "x-fake-user": NAMESPACE_CONTROLLER_USER },
    });
    assert.equal(res.status, 200);
    assert.equal(env.api.admissions.length, 5);
    assert.ok(env.api.admissions.every((a) => a.request.name === ""));
    assertEveryDeleteAllowedWithoutPatch(env);
    assert.deepEqual(env.created, []);
    assert.equal(env.api.count("*"), 1, "only the collection delete itself");
  });

  test("a teardown burst of 1000 interruption-looking reviews costs a handful of API calls", async (t) => {
    const env = await startEnv({ namespacePhase: "Terminating" });
    // The virtual nodes go away at teardown: podgc marks each pod Failed with DisruptionTarget and deletes it.
    const reviews = Array.from({ length: 1000 }, (_, i) =>
      buildDeleteReview({
        pod: buildPod({
          name: `pod-${i}`,
          uid: `uid-${i}`,
          phase: "Failed",
          nodeName: "kwok-node-1",
          ownerReferences: [SIM_ROOT],
          conditions: [disruptionTarget("DeletionByPodGC")],
        }),
        user: POD_GC_USER,
      }),
    );
    env.api.resetLog();
    const concurrency = 50;
    for (let i = 0; i < reviews.length; i += concurrency) {
      const answers = await Promise.all(reviews.slice(i, i + concurrency).map((r) => env.review(r)));
      for (const a of answers) assertAllowedWithoutPatch(a);
    }
    const calls = env.api.requests.length;
    t.diagnostic(
      `API calls for 1000 reviews: ${calls}: ${env.api.requests.map((r) => `${r.method} ${r.path}`).join(", ")}`,
    );
    assert.ok(
      calls <= 8,
      `API calls for 1000 reviews: ${calls} (${env.api.requests.map((r) => r.path).join(", ")})`,
    );
    assert.deepEqual(env.created, []);
    const decisions = env.stats().decisions;
    assert.equal(decisions["namespace-terminating"], 1000);
  });

  test("a whole namespace teardown (controller-manager without SA credentials, then KWOK): no clone", async () => {
    const env = await startEnv();
    for (let i = 0; i < 50; i++) env.putPod({ name: `pod-${i}`, uid: `uid-${i}` });
    env.api.resetLog();
    await env.api.terminateNamespace(TEST_NAMESPACE, { controllerUser: CONTROLLER_MANAGER_USER });
    const finished = await env.api.finishPodTerminations({ namespace: TEST_NAMESPACE, user: KWOK_USER });
    assert.equal(finished, 50);
    assert.ok(env.api.admissions.length >= 150, `reviews: ${env.api.admissions.length}`);
    assertEveryDeleteAllowedWithoutPatch(env);
    assert.deepEqual(env.created, []);
    assert.deepEqual(env.podNames(), []);
    const decisions = env.stats().decisions;
    assert.equal(decisions["controller-manager"], 50);
    assert.equal(decisions["final-phase"], env.api.admissions.length - 50);
    assert.equal(env.api.count("GET"), 0, "the function read nothing");
  });

  test("GET /stats serves the counters", async () => {
    const env = await startEnv();
    env.putPod();
    await deleteLikeACluster(env, "the-pod", ADMIN_USER);
    const res = await fetch(`${env.fnUrl}stats`);
    const body = (await res.json()) as RescheduleStatsSnapshot & { rssBytes: number };
    assert.equal(body.reviews, 3);
    assert.equal(body.clones.created, 1);
    assert.ok(body.rssBytes > 0);
  });
});
