// mutate-create end to end: the built CLI (`simkube-fn serve mutate-create`, the esbuild bundle users run)
// as a child process, talking to the fake API server through the real @kubernetes/client-node path. Pods are
// created through the fake API server, which calls the function as its webhook, exactly as a cluster would.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { KWOK_USER } from "../../shared/base/identities.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  buildDriverBarePod,
  buildNamespace,
  buildSimulation,
  buildSimulationRoot,
  rootOwnerRef,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import { type Served, serveFunction } from "../support/serve-cli.js";
import { buildTraceBytes, finished, ownersTraceSpec } from "../support/trace-builder.js";

const VNS = "virtual-testing";
const KWOK_TOLERATION = { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" };

function barePod(name: string, extra: Record<string, unknown> = {}): KubeObject {
  return buildDriverBarePod(name, VNS, extra);
}

describe("mutate-create served by the CLI against the API double", { timeout: 90_000 }, () => {
  let api: FakeApiServer;
  let served: Served;
  let dir: string;
  const storedPod = (name: string) =>
    api.store.get<KubeObject & { spec: Record<string, unknown> }>({ kind: "Pod", namespace: VNS, name });

  before(async () => {
    api = await startFakeApiServer({ namespaces: [VNS] });
    api.store.put(buildSimulation({ speed: 2, spec: { lifecycleParams: { imagePullDelay: 1000 } } }));
    api.store.put(buildSimulationRoot());
    dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-e2e-"));
    const tracePath = path.join(dir, "trace.sktrace");
    await writeFile(
      tracePath,
      buildTraceBytes(
        ownersTraceSpec([{ gvk: "v1.Pod", nsName: "testing/bare-1", lifecycles: [finished(100, 160)] }]),
      ),
    );
    served = await serveFunction("mutate-create", {
      SIM_NAME: TEST_SIM_NAME,
      KUBECONFIG: await writeKubeconfig(api.url),
      TRACE_PATH: `file://${tracePath}`,
      SEQUENCE_STORE: "cluster",
      SEQUENCE_NAMESPACE: "simkube",
      LOG_LEVEL: "info",
    });
    api.store.put(buildNamespace({ name: "simkube" }));
    api.webhooks = [
      {
        name: "mutate-create.simkube.io",
        url: served.url,
        operations: ["CREATE", "UPDATE"],
        resources: ["pods", "pods/status"],
      },
    ];
  });

  after(async () => {
    await stopChild(served.child);
    await api.close();
    await removeAllKubeconfigs();
    await rm(dir, { recursive: true, force: true });
  });

  it("rewrites a simulation pod created through the API so it can only land on virtual nodes", async () => {
    const created = await api.request<KubeObject & { spec: Record<string, unknown> }>(
      "POST",
      `/api/v1/namespaces/${VNS}/pods`,
      barePod("pinned-1"),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const stored = api.store.get<KubeObject & { spec: Record<string, unknown> }>({
      kind: "Pod",
      namespace: VNS,
      name: "pinned-1",
    });
    assert.deepEqual(stored?.spec.nodeSelector, { type: "virtual" });
    assert.deepEqual(stored?.spec.tolerations, [
      { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
    ]);
    const annotations = stored?.metadata?.annotations ?? {};
    assert.equal(stored?.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.match(annotations["static.simkube.io/pod-spec-stable-hash"] ?? "", /^\d+$/);
    assert.equal(annotations["static.simkube.io/pod-sequence-number"], "0");
    assert.equal(annotations["simkube.io/kwok-stage-create-delay"], "1000ms");
    // The sequence is counted in the cluster: a ConfigMap owned by the SimulationRoot.
    const configMaps = api.store.list("ConfigMap", "simkube");
    assert.equal(configMaps.length, 1);
    assert.equal(configMaps[0]?.metadata?.ownerReferences?.[0]?.name, rootOwnerRef().name);
  });

  it("gives the pod its production completion time when KWOK marks it Running", async () => {
    // bare-1 is the pod the trace knows (testing/bare-1); this test makes its own.
    const created = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, barePod("bare-1"));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const before = Date.now();
    const res = await api.request(
      "PATCH",
      `/api/v1/namespaces/${VNS}/pods/bare-1/status`,
      { status: { phase: "Running" } },
      {
        contentType: "application/merge-patch+json",
        user: KWOK_USER,
      },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const stored = api.store.get({ kind: "Pod", namespace: VNS, name: "bare-1" });
    assert.equal(stored?.metadata?.labels?.["simkube.io/kwok-stage-complete"], "true");
    const at = Date.parse(stored?.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"] ?? "");
    // 60 s of production at speed 2: 30 s after admission (whole seconds, so allow the second it ran in).
    assert.ok(at >= Math.floor(before / 1000) * 1000 + 30_000 - 1000, `completion ${at} too early`);
    assert.ok(at <= Date.now() + 30_000 + 1000, `completion ${at} too late`);
  });

  it("lets pods outside the virtual namespaces through unchanged, and pins any pod inside one", async () => {
    const plain = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "not-simulated" },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    };
    const outside = await api.request("POST", "/api/v1/namespaces/simkube/pods", plain);
    assert.equal(outside.status, 201, JSON.stringify(outside.body));
    const untouched = api.store.get<KubeObject & { spec: Record<string, unknown> }>({
      kind: "Pod",
      namespace: "simkube",
      name: "not-simulated",
    });
    assert.equal(untouched?.spec.nodeSelector, undefined);
    assert.equal(untouched?.metadata?.labels?.["simkube.io/simulation"], undefined);

    // No owner at all, but in a virtual namespace: it must not land on a real node either.
    const inside = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, plain);
    assert.equal(inside.status, 201, JSON.stringify(inside.body));
    const pinned = storedPod("not-simulated");
    assert.deepEqual(pinned?.spec.nodeSelector, { type: "virtual" });
    assert.equal(pinned?.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);
  });

  it("refuses a simulation pod when the API server fails, so it never lands unmutated", async () => {
    api.failNext({ method: "GET", path: /\/replicasets\/ghost-rs$/, status: 503, times: 20 });
    const res = await api.request<{ message?: string }>("POST", `/api/v1/namespaces/${VNS}/pods`, {
      ...barePod("owned-by-ghost"),
      metadata: {
        name: "owned-by-ghost",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "ghost-rs", uid: "g-1" }],
      },
    });
    assert.notEqual(res.status, 201);
    assert.match(res.body.message ?? "", /could not mutate pod virtual-testing\/owned-by-ghost/);
    assert.equal(api.store.get({ kind: "Pod", namespace: VNS, name: "owned-by-ghost" }), undefined);
  });

  it("pins the pods of a ReplicaSet whose Deployment was deleted, and mutates in full once it is back", async () => {
    const deployment: KubeObject = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: VNS, ownerReferences: [rootOwnerRef()] },
      spec: { replicas: 2 },
    };
    const stored = api.store.put(deployment);
    api.store.put({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: "web-5d8f",
        namespace: VNS,
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: "web",
            uid: stored.metadata?.uid ?? "",
            controller: true,
          },
        ],
      },
      spec: { replicas: 2 },
    });
    // Deleted with propagationPolicy Orphan, or the garbage collector has not reached the ReplicaSet yet.
    assert.ok(api.store.remove({ kind: "Deployment", namespace: VNS, name: "web" }));
    const rsPod = (name: string) => ({
      ...barePod(name),
      metadata: {
        name,
        namespace: VNS,
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f", uid: "rs-1", controller: true },
        ],
      },
    });
    const orphan = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, rsPod("web-5d8f-a"));
    assert.equal(orphan.status, 201, JSON.stringify(orphan.body));
    const pinned = storedPod("web-5d8f-a");
    assert.deepEqual(pinned?.spec.nodeSelector, { type: "virtual" });
    assert.deepEqual(pinned?.spec.tolerations, [KWOK_TOLERATION]);
    assert.equal(pinned?.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.equal(pinned?.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);

    // The Deployment comes back: nothing remembered its absence, so the next pod gets its sequence number.
    api.store.put(deployment);
    const next = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, rsPod("web-5d8f-b"));
    assert.equal(next.status, 201, JSON.stringify(next.body));
    const full = storedPod("web-5d8f-b");
    assert.deepEqual(full?.spec.nodeSelector, { type: "virtual" });
    assert.match(full?.metadata?.annotations?.["static.simkube.io/pod-sequence-number"] ?? "", /^\d+$/);
  });

  it("mutates a CREATE that carries a deletionTimestamp; the API server then clears it", async () => {
    const res = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, {
      ...barePod("doomed-1", { deletionTimestamp: "2026-12-02T11:00:00Z" }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const stored = storedPod("doomed-1");
    assert.equal(stored?.metadata?.deletionTimestamp, undefined);
    assert.deepEqual(stored?.spec.nodeSelector, { type: "virtual" });
    assert.deepEqual(stored?.spec.tolerations, [KWOK_TOLERATION]);
    assert.match(stored?.metadata?.annotations?.["static.simkube.io/pod-sequence-number"] ?? "", /^\d+$/);
  });

  it("serves healthz and stats", async () => {
    const created = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, barePod("for-stats"));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const health = await fetch(`${served.url}healthz`);
    assert.equal(health.status, 200);
    const stats = (await (await fetch(`${served.url}stats`)).json()) as {
      reviews: number;
      decisions: Record<string, number>;
      lifecycles: Record<string, number>;
      rssBytes: number;
    };
    assert.ok(stats.reviews >= 1);
    assert.ok((stats.decisions.mutated ?? 0) >= 1);
    assert.equal(typeof stats.lifecycles["completion-set"], "number");
    assert.ok(stats.rssBytes > 0);
  });
});
