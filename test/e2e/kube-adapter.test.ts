// createKubeApi (the one real KubeApi adapter) against the fake API server over real HTTP.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  type KubeApi,
  KubeError,
  type KubeObject,
} from "../../shared/kube/api.js";
import { createKubeApi, kubeErrorFrom } from "../../shared/kube/client.js";
import { assertKnownResourcesMatch, type DiscoveredList } from "../support/known-resources.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";

function pod(name: string, namespace = "default", extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { app: "web" } },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }] },
    ...extra,
  };
}

function configMap(name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data };
}

async function rejection(promise: Promise<unknown>): Promise<KubeError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof KubeError, `expected a KubeError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the call to fail");
}

describe("createKubeApi against the fake API server", () => {
  let server: FakeApiServer;
  let kubeconfig: string;
  let kube: KubeApi;

  before(async () => {
    server = await startFakeApiServer({ namespaces: ["default", "test-namespace"] });
    kubeconfig = await writeKubeconfig(server.url);
    kube = createKubeApi({ kubeconfigPath: kubeconfig, timeoutMs: 5000 });
    // What the read-only tests read, so each test can run alone: no test relies on another's writes.
    server.store.put(configMap("seeded", { a: "1" }));
    server.store.put({ apiVersion: "simkube.io/v1", kind: "Simulation", metadata: { name: "seeded-sim" } });
  });

  after(async () => {
    await server.close();
    await removeKubeconfig(kubeconfig);
  });

  test("creates and reads back a pod as plain JSON with server-set fields", async () => {
    const created = await kube.create(pod("the-pod", "test-namespace"));
    assert.equal(created.metadata?.name, "the-pod");
    assert.equal(typeof created.metadata?.uid, "string");
    assert.equal(typeof created.metadata?.resourceVersion, "string");
    // A plain string, not the Date the client's typed models would make.
    assert.equal(typeof created.metadata?.creationTimestamp, "string");

    const read = await kube.read({
      apiVersion: "v1",
      kind: "Pod",
      name: "the-pod",
      namespace: "test-namespace",
    });
    assert.deepEqual(read, created);
    assert.equal(
      server.store.get({ kind: "Pod", name: "the-pod", namespace: "test-namespace" })?.metadata?.uid,
      created.metadata?.uid,
    );
  });

  test("keeps fields the client's models do not know", async () => {
    const created = await kube.create(
      pod("future-pod", "default", {
        spec: { containers: [{ name: "c", image: "i:1" }], futureField: { x: 1 } },
      }),
    );
    assert.deepEqual((created.spec as Record<string, unknown>).futureField, { x: 1 });
  });

  test("replace with the current resourceVersion succeeds; a stale one is a Conflict, not AlreadyExists", async () => {
    const created = await kube.create(configMap("settings", { a: "1" }));
    const replaced = await kube.replace({ ...created, data: { a: "2" } });
    assert.deepEqual(replaced.data, { a: "2" });
    assert.notEqual(replaced.metadata?.resourceVersion, created.metadata?.resourceVersion);

    const err = await rejection(kube.replace({ ...created, data: { a: "3" } }));
    assert.equal(err.status, 409);
    assert.equal(err.reason, "Conflict");
    assert.match(
      err.message,
      /Operation cannot be fulfilled on configmaps "settings": the object has been modified/,
    );
    assert.ok(isConflict(err));
    assert.ok(!isAlreadyExists(err));

    const dup = await rejection(kube.create(configMap("settings")));
    assert.equal(dup.status, 409);
    assert.equal(dup.reason, "AlreadyExists");
    assert.equal(dup.message, 'configmaps "settings" already exists');
    assert.ok(isAlreadyExists(dup));
    assert.ok(!isConflict(dup));
  });

  test("missing objects are 404 NotFound", async () => {
    const err = await rejection(
      kube.read({ apiVersion: "v1", kind: "Pod", name: "nope", namespace: "default" }),
    );
    assert.equal(err.status, 404);
    assert.equal(err.reason, "NotFound");
    assert.equal(err.message, 'pods "nope" not found');
    assert.ok(isNotFound(err));

    const rs = await rejection(
      kube.read({ apiVersion: "apps/v1", kind: "ReplicaSet", name: "gone", namespace: "default" }),
    );
    assert.equal(rs.message, 'replicasets.apps "gone" not found');
  });

  test("Simulation and SimulationRoot are cluster-scoped custom resources", async () => {
    const sim = await kube.create<KubeObject>({
      apiVersion: "simkube.io/v1",
      kind: "Simulation",
      metadata: { name: "test-sim" },
      spec: { speed: 2, driver: { namespace: "simkube" } },
    });
    assert.equal(sim.metadata?.namespace, undefined);
    const root = await kube.create<KubeObject>({
      apiVersion: "simkube.io/v1",
      kind: "SimulationRoot",
      metadata: { name: "sk-test-driver-12345-root" },
      spec: {},
    });
    const readSim = await kube.read({ apiVersion: "simkube.io/v1", kind: "Simulation", name: "test-sim" });
    assert.deepEqual(readSim.spec, { speed: 2, driver: { namespace: "simkube" } });
    const readRoot = await kube.read({
      apiVersion: "simkube.io/v1",
      kind: "SimulationRoot",
      name: "sk-test-driver-12345-root",
    });
    assert.equal(readRoot.metadata?.uid, root.metadata?.uid);
    assert.ok(server.count("GET", /^\/apis\/simkube\.io\/v1\/simulations\/test-sim$/) >= 1);

    const replaced = await kube.replace({ ...readSim, spec: { speed: 3 } });
    assert.deepEqual(replaced.spec, { speed: 3 });
    assert.equal(replaced.metadata?.generation, 2);
  });

  test("creating into a terminating namespace is 403 Forbidden", async () => {
    server.store.put({
      apiVersion: "v1",
      kind: "Namespace",
      // Timestamps are strings on the wire (V1ObjectMeta's type says Date).
      metadata: { name: "going-away", deletionTimestamp: "2024-01-01T00:00:00Z" },
      status: { phase: "Terminating" },
    });
    const err = await rejection(kube.create(pod("late", "going-away")));
    assert.equal(err.status, 403);
    assert.equal(err.reason, "Forbidden");
    assert.equal(
      err.message,
      'pods "late" is forbidden: unable to create new content in namespace going-away because it is being terminated',
    );
    assert.ok(!isTransient(err));
  });

  test("creating into a missing namespace is 404 for the namespace", async () => {
    const err = await rejection(kube.create(pod("lost", "no-such-ns")));
    assert.equal(err.status, 404);
    assert.equal(err.message, 'namespaces "no-such-ns" not found');
  });

  test("an invalid name is 422 Invalid", async () => {
    const err = await rejection(kube.create(configMap("Not_A_Name")));
    assert.equal(err.status, 422);
    assert.equal(err.reason, "Invalid");
    assert.match(err.message, /^ConfigMap "Not_A_Name" is invalid: metadata\.name: Invalid value/);
  });

  test("an injected 503 is transient and carries the server's reason", async () => {
    server.failNext({ method: "GET", path: /\/configmaps\/seeded$/, status: 503 });
    const err = await rejection(
      kube.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" }),
    );
    assert.equal(err.status, 503);
    assert.equal(err.reason, "ServiceUnavailable");
    assert.ok(isTransient(err));
    // The fault is used up: the next call works.
    const ok = await kube.read({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "seeded",
      namespace: "default",
    });
    assert.equal(ok.metadata?.name, "seeded");
  });

  test("a reset connection is KubeError(0, ConnectionError)", async () => {
    server.failNext({ path: /\/configmaps\/seeded$/, action: "reset" });
    const err = await rejection(
      kube.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" }),
    );
    assert.equal(err.status, 0);
    assert.equal(err.reason, "ConnectionError");
    assert.ok(isTransient(err));
  });

  test("a hung call times out as KubeError(0, ConnectionError)", async () => {
    const quick = createKubeApi({ kubeconfigPath: kubeconfig, timeoutMs: 300 });
    // Warm the discovery cache so the hang hits the call itself.
    await quick.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" });
    server.failNext({ path: /\/configmaps\/seeded$/, action: "hang" });
    const err = await rejection(
      quick.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" }),
    );
    assert.equal(err.status, 0);
    assert.equal(err.reason, "ConnectionError");
  });

  test("a kind the server does not serve is UnknownKind (and isNotFound)", async () => {
    const err = await rejection(
      kube.read({ apiVersion: "v1", kind: "Gizmo", name: "x", namespace: "default" }),
    );
    assert.equal(err.status, 404);
    assert.equal(err.reason, "UnknownKind");
    assert.ok(isNotFound(err));

    const group = await rejection(
      kube.read({ apiVersion: "nothing.example.com/v1", kind: "Thing", name: "x" }),
    );
    assert.equal(group.status, 404);
    assert.equal(group.reason, "UnknownKind");
  });

  test("extra kinds registered on the fake are discovered and served", async () => {
    server.registerKind({
      group: "example.com",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      singular: "widget",
      namespaced: true,
    });
    const made = await kube.create<KubeObject>({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "test-namespace" },
      spec: { size: 3 },
    });
    assert.equal(made.metadata?.generation, 1);
    const read = await kube.read({
      apiVersion: "example.com/v1",
      kind: "Widget",
      name: "w",
      namespace: "test-namespace",
    });
    assert.deepEqual(read.spec, { size: 3 });
    assert.equal(server.store.list("widgets", "test-namespace").length, 1);
  });

  test("the kinds the functions use need no discovery; any other is discovered once per group-version", async () => {
    const fresh = createKubeApi({ kubeconfigPath: kubeconfig });
    server.resetLog();
    for (let i = 0; i < 5; i++) {
      await fresh.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" });
      await fresh.read({ apiVersion: "simkube.io/v1", kind: "Simulation", name: "seeded-sim" });
    }
    await fresh.create(configMap(`cached-${Date.now()}`));
    assert.equal(server.count("GET", /^\/api\/v1$/), 0);
    assert.equal(server.count("GET", /^\/apis\/simkube\.io\/v1$/), 0);
    assert.equal(server.count("GET", /^\/api\/v1\/namespaces\/default\/configmaps\/seeded$/), 5);
    for (let i = 0; i < 3; i++) {
      await rejection(
        fresh.read({ apiVersion: "apps/v1", kind: "ReplicaSet", name: "absent", namespace: "default" }),
      );
      await rejection(
        fresh.read({ apiVersion: "v1", kind: "ServiceAccount", name: "absent", namespace: "default" }),
      );
    }
    assert.equal(server.count("GET", /^\/apis\/apps\/v1$/), 1);
    assert.equal(server.count("GET", /^\/api\/v1$/), 1);
    assert.equal(server.count("GET", /^\/apis\/apps\/v1\/namespaces\/default\/replicasets\/absent$/), 3);
    // A discovered list replaces nothing the functions rely on: the known kinds still resolve.
    await fresh.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" });
    assert.equal(server.count("GET", /^\/api\/v1\/namespaces\/default\/configmaps\/seeded$/), 6);
  });

  test("the kinds known without discovery are described as discovery describes them", async () => {
    await assertKnownResourcesMatch(async (apiVersion) => {
      const url = `${server.url}${apiVersion.includes("/") ? "/apis" : "/api"}/${apiVersion}`;
      return (await (await fetch(url)).json()) as DiscoveredList;
    });
  });

  test("connections are reused (keep-alive)", async () => {
    const fresh = createKubeApi({ kubeconfigPath: kubeconfig });
    const before = server.connections;
    for (let i = 0; i < 20; i++) {
      await fresh.read({ apiVersion: "v1", kind: "ConfigMap", name: "seeded", namespace: "default" });
    }
    // 21 sequential requests (discovery + 20 reads) over one or two sockets, not 21.
    assert.ok(server.connections - before <= 2, `opened ${server.connections - before} connections`);
  });

  test("the request carries the kubeconfig's bearer token", async () => {
    const seen: string[] = [];
    const users = await startFakeApiServer({ users: { "fake-token": { username: "tester" } } });
    const file = await writeKubeconfig(users.url);
    try {
      await createKubeApi({ kubeconfigPath: file }).create(configMap("who"));
      for (const r of users.requests) if (r.user) seen.push(r.user);
    } finally {
      await users.close();
      await removeKubeconfig(file);
    }
    assert.ok(seen.length > 0 && seen.every((u) => u === "tester"));
  });

  test("a closed server is KubeError(0, ConnectionError)", async () => {
    const gone = await startFakeApiServer();
    const file = await writeKubeconfig(gone.url);
    const api = createKubeApi({ kubeconfigPath: file });
    await api.read({ apiVersion: "v1", kind: "Namespace", name: "default" });
    await gone.close();
    try {
      const err = await rejection(api.read({ apiVersion: "v1", kind: "Namespace", name: "default" }));
      assert.equal(err.status, 0);
      assert.equal(err.reason, "ConnectionError");
      assert.ok(isTransient(err));
    } finally {
      await removeKubeconfig(file);
    }
  });
});

describe("kubeErrorFrom", () => {
  test("maps an ApiException-like error with a Status body", () => {
    const err = Object.assign(new Error("HTTP-Code: 409\nMessage: x"), {
      code: 409,
      body: JSON.stringify({ kind: "Status", reason: "AlreadyExists", message: 'pods "a" already exists' }),
    });
    const k = kubeErrorFrom(err);
    assert.deepEqual([k.status, k.reason, k.message], [409, "AlreadyExists", 'pods "a" already exists']);
  });

  test("derives the reason from the code when the body is not a Status", () => {
    const err = Object.assign(new Error("HTTP-Code: 503\nMessage: x"), {
      code: 503,
      body: "<html>bad gateway</html>",
    });
    const k = kubeErrorFrom(err);
    assert.equal(k.status, 503);
    assert.equal(k.reason, "ServiceUnavailable");
    const none = kubeErrorFrom(
      Object.assign(new Error("HTTP-Code: 599\nMessage: x"), { code: 599, body: undefined }),
    );
    assert.equal(none.reason, "Unknown");
  });

  test("network errors are status 0; programming errors are not transient", () => {
    const refused = kubeErrorFrom(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    assert.deepEqual([refused.status, refused.reason], [0, "ConnectionError"]);
    const bug = kubeErrorFrom(new Error("Required spec property name is not set"));
    assert.equal(bug.status, 400);
    assert.ok(!isTransient(bug));
    const same = new KubeError(404, "NotFound", "x");
    assert.equal(kubeErrorFrom(same), same);
  });
});
