// The fake API server's own behaviour, over raw HTTP on 127.0.0.1 (it is test infrastructure others rely on:
// its Status bodies, preconditions, deletion phases and webhook calls must match the real apiserver's).

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import type { KubeObject } from "../../shared/kube/api.js";

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = Record<string, any>;

/** The review's oldObject (or options) as loose JSON. */
function oldOf(review: AdmissionReview | undefined): Json {
  return (review?.request?.oldObject ?? {}) as Json;
}

function optionsOf(review: AdmissionReview | undefined): Json {
  return (review?.request?.options ?? {}) as Json;
}

interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

async function call(
  server: FakeApiServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { "content-type": "application/json", ...headers } };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

function pod(name: string, extra: Json = {}): Json {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: "web" } },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }], ...(extra.spec ?? {}) },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

const PODS = "/api/v1/namespaces/default/pods";

/** Creates a Simulation through the API and returns it as stored. */
async function createSimulation(server: FakeApiServer, name: string, speed: number): Promise<Json> {
  const sim = await call(server, "POST", "/apis/simkube.io/v1/simulations", {
    apiVersion: "simkube.io/v1",
    kind: "Simulation",
    metadata: { name },
    spec: { speed },
  });
  assert.equal(sim.status, 201, JSON.stringify(sim.body));
  return sim.body;
}

describe("fake API server: discovery and reads", () => {
  let server: FakeApiServer;
  before(async () => {
    server = await startFakeApiServer();
  });
  after(() => server.close());

  test("serves APIResourceLists the client can discover kinds from", async () => {
    const core = await call(server, "GET", "/api/v1");
    assert.equal(core.body.kind, "APIResourceList");
    const pods = core.body.resources.find((r: Json) => r.name === "pods");
    assert.deepEqual(
      { kind: pods.kind, namespaced: pods.namespaced, singularName: pods.singularName },
      { kind: "Pod", namespaced: true, singularName: "pod" },
    );
    assert.ok(pods.verbs.includes("create") && pods.verbs.includes("delete"));
    const sims = await call(server, "GET", "/apis/simkube.io/v1");
    const sim = sims.body.resources.find((r: Json) => r.name === "simulations");
    assert.equal(sim.namespaced, false);
    const groups = await call(server, "GET", "/apis");
    assert.deepEqual(
      groups.body.groups.map((g: Json) => g.name),
      ["apps", "batch", "rbac.authorization.k8s.io", "simkube.io"],
    );
    assert.equal((await call(server, "GET", "/apis/nope.io/v1")).status, 404);
  });

  test("unknown paths are the generic NotFound Status", async () => {
    const res = await call(server, "GET", "/api/v1/namespaces/default/widgets/x");
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server could not find the requested resource",
      reason: "NotFound",
      details: {},
      code: 404,
    });
  });

  test("a missing object is the exact NotFound Status", async () => {
    const res = await call(server, "GET", `${PODS}/x`);
    assert.deepEqual(res.body, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "x" not found',
      reason: "NotFound",
      details: { name: "x", kind: "pods" },
      code: 404,
    });
  });

  test("lists filter by field and label selectors", async () => {
    server.store.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "default", labels: { t: "1" } },
    });
    server.store.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b", namespace: "default", labels: { t: "2" } },
    });
    server.store.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "other" } });
    const names = async (q: string) =>
      (await call(server, "GET", q)).body.items.map(
        (i: Json) => `${i.metadata.namespace}/${i.metadata.name}`,
      );
    assert.deepEqual(await names("/api/v1/configmaps?fieldSelector=metadata.name%3Da"), [
      "default/a",
      "other/a",
    ]);
    assert.deepEqual(await names("/api/v1/namespaces/default/configmaps?labelSelector=t%3D2"), ["default/b"]);
    assert.deepEqual(await names("/api/v1/namespaces/default/configmaps?labelSelector=t%21%3D2"), [
      "default/a",
    ]);
    assert.deepEqual(await names("/api/v1/configmaps?fieldSelector=metadata.namespace%3Dother"), ["other/a"]);
    const list = await call(server, "GET", "/api/v1/namespaces/default/configmaps");
    assert.equal(list.body.kind, "ConfigMapList");
    assert.equal(list.body.items[0].kind, undefined, "built-in list items carry no kind");
    assert.equal(server.store.list("ConfigMap", "default").length, 2);
    assert.equal(server.store.list("configmaps").length, 3);
  });
});

describe("fake API server: writes", () => {
  let server: FakeApiServer;
  before(async () => {
    server = await startFakeApiServer({ now: () => new Date("2024-05-01T12:00:00.000Z") });
  });
  after(() => server.close());

  test("create fills uid, creationTimestamp, a growing resourceVersion, pod defaults and Pending status", async () => {
    const a = await call(server, "POST", PODS, pod("p1", { status: { phase: "Running" } }));
    const b = await call(server, "POST", PODS, pod("p2"));
    assert.equal(a.status, 201);
    assert.equal(a.body.metadata.creationTimestamp, "2024-05-01T12:00:00Z");
    assert.match(a.body.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.ok(Number(b.body.metadata.resourceVersion) > Number(a.body.metadata.resourceVersion));
    assert.deepEqual(a.body.status, { phase: "Pending", qosClass: "BestEffort" });
    assert.equal(a.body.spec.terminationGracePeriodSeconds, 30);
    assert.equal(a.body.spec.containers[0].imagePullPolicy, "IfNotPresent");
  });

  test("generateName makes a name; no name at all is 422", async () => {
    const gen = await call(server, "POST", PODS, { ...pod(""), metadata: { generateName: "web-" } });
    assert.match(gen.body.metadata.name, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const none = await call(server, "POST", PODS, { ...pod(""), metadata: {} });
    assert.equal(none.status, 422);
    assert.equal(
      none.body.message,
      'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  test("bad names are 422, names up to 253 chars are fine", async () => {
    const long = "a".repeat(254);
    assert.equal((await call(server, "POST", PODS, pod(long))).status, 422);
    assert.equal((await call(server, "POST", PODS, pod("a".repeat(253)))).status, 201);
    const upper = await call(server, "POST", PODS, pod("Upper"));
    assert.equal(upper.body.reason, "Invalid");
    assert.equal(upper.body.details.causes[0].field, "metadata.name");
  });

  test("a resourceVersion on create is a 500, as etcd3's storage answers", async () => {
    const res = await call(server, "POST", PODS, {
      ...pod("rv"),
      metadata: { name: "rv", resourceVersion: "5" },
    });
    assert.equal(res.status, 500);
    assert.equal(res.body.message, "resourceVersion should not be set on objects to be created");
  });

  test("duplicates are 409 AlreadyExists", async () => {
    assert.equal((await call(server, "POST", PODS, pod("dup"))).status, 201);
    const res = await call(server, "POST", PODS, pod("dup"));
    assert.equal(res.status, 409);
    assert.equal(res.body.reason, "AlreadyExists");
    assert.equal(res.body.message, 'pods "dup" already exists');
  });

  test("a ConfigMap over 1 MiB of data is 422 on create and on update, as ValidateConfigMap answers", async () => {
    const path = "/api/v1/namespaces/default/configmaps";
    const big = (name: string, bytes: number) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data: { k: "x".repeat(bytes - 1) }, // the key counts too
    });
    const tooBig = await call(server, "POST", path, big("too-big", 1024 * 1024 + 1));
    assert.equal(tooBig.status, 422);
    assert.equal(
      tooBig.body.message,
      'ConfigMap "too-big" is invalid: []: Too long: must have at most 1048576 bytes',
    );
    const full = await call(server, "POST", path, big("full", 1024 * 1024));
    assert.equal(full.status, 201);
    const grown = { ...full.body, data: { ...full.body.data, more: "" } };
    assert.equal((await call(server, "PUT", `${path}/full`, grown)).status, 422);
  });

  test("PUT checks resourceVersion; custom resources need one", async () => {
    const cm = await call(server, "POST", "/api/v1/namespaces/default/configmaps", {
      metadata: { name: "c" },
      data: { a: "1" },
    });
    const ok = await call(server, "PUT", "/api/v1/namespaces/default/configmaps/c", {
      ...cm.body,
      data: { a: "2" },
    });
    assert.equal(ok.status, 200);
    const stale = await call(server, "PUT", "/api/v1/namespaces/default/configmaps/c", cm.body);
    assert.equal(stale.status, 409);
    assert.equal(
      stale.body.message,
      'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
    );
    const { resourceVersion: _rv, ...meta } = ok.body.metadata;
    const unconditional = await call(server, "PUT", "/api/v1/namespaces/default/configmaps/c", {
      ...ok.body,
      metadata: meta,
      data: { a: "3" },
    });
    assert.equal(unconditional.status, 200);

    const sim = await call(server, "POST", "/apis/simkube.io/v1/simulations", {
      apiVersion: "simkube.io/v1",
      kind: "Simulation",
      metadata: { name: "s" },
      spec: { speed: 1 },
    });
    const { resourceVersion: _r, ...simMeta } = sim.body.metadata;
    const noRv = await call(server, "PUT", "/apis/simkube.io/v1/simulations/s", {
      ...sim.body,
      metadata: simMeta,
    });
    assert.equal(noRv.status, 422);
  });

  test("no-op updates keep the resourceVersion; spec changes bump generation", async () => {
    const sim = await createSimulation(server, "s-noop", 1);
    const same = await call(server, "PUT", "/apis/simkube.io/v1/simulations/s-noop", sim);
    assert.equal(same.body.metadata.resourceVersion, sim.metadata.resourceVersion);
    const changed = await call(server, "PUT", "/apis/simkube.io/v1/simulations/s-noop", {
      ...sim,
      spec: { speed: 2 },
    });
    assert.equal(changed.body.metadata.generation, 2);
  });

  test("the status subresource writes status only; the main resource keeps it", async () => {
    const sim = await createSimulation(server, "s-status", 2);
    const st = await call(server, "PUT", "/apis/simkube.io/v1/simulations/s-status/status", {
      ...sim,
      spec: { speed: 99 },
      status: { state: "Running" },
    });
    assert.deepEqual([st.body.spec.speed, st.body.status.state], [2, "Running"]);
    const main = await call(server, "PUT", "/apis/simkube.io/v1/simulations/s-status", {
      ...st.body,
      status: { state: "Finished" },
    });
    assert.equal(main.body.status.state, "Running");
  });

  test("PATCH: merge patch and JSON patch; a failed test op is 422", async () => {
    assert.equal((await call(server, "POST", PODS, pod("patched"))).status, 201);
    const merge = await call(
      server,
      "PATCH",
      `${PODS}/patched`,
      { metadata: { labels: { app: null, tier: "x" } } },
      { "content-type": "application/merge-patch+json" },
    );
    assert.deepEqual(merge.body.metadata.labels, { tier: "x" });
    const json = await call(
      server,
      "PATCH",
      `${PODS}/patched`,
      [{ op: "add", path: "/metadata/annotations", value: { a: "b" } }],
      { "content-type": "application/json-patch+json" },
    );
    assert.deepEqual(json.body.metadata.annotations, { a: "b" });
    const failed = await call(
      server,
      "PATCH",
      `${PODS}/patched`,
      [{ op: "test", path: "/metadata/name", value: "zz" }],
      {
        "content-type": "application/json-patch+json",
      },
    );
    assert.equal(failed.status, 422);
    const spec = await call(
      server,
      "PATCH",
      `${PODS}/patched`,
      { spec: { restartPolicy: "Never" } },
      { "content-type": "application/merge-patch+json" },
    );
    assert.equal(spec.status, 422, "pod spec is immutable");
  });

  test("failNext injects Status errors a given number of times", async () => {
    assert.equal((await call(server, "POST", PODS, pod("limited"))).status, 201);
    server.failNext({ method: "GET", path: /\/pods\/limited$/, status: 429, times: 2 });
    const first = await call(server, "GET", `${PODS}/limited`);
    const second = await call(server, "GET", `${PODS}/limited`);
    const third = await call(server, "GET", `${PODS}/limited`);
    assert.deepEqual([first.status, second.status, third.status], [429, 429, 200]);
    assert.equal(first.body.reason, "TooManyRequests");
    assert.equal(first.headers.get("retry-after"), "1");
    assert.equal(server.count("GET", /\/pods\/limited$/), 3);
  });
});

describe("fake API server: deletion", () => {
  let server: FakeApiServer;
  before(async () => {
    server = await startFakeApiServer({ now: () => new Date("2024-05-01T12:00:00.000Z") });
  });
  after(() => server.close());

  function boundPod(name: string, extra: Json = {}): KubeObject {
    return server.store.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default" },
      spec: {
        nodeName: "node-1",
        terminationGracePeriodSeconds: 10,
        containers: [{ name: "c", image: "i" }],
      },
      status: { phase: "Running" },
      ...extra,
    });
  }

  test("a bound running pod is deleted in two phases", async () => {
    boundPod("graceful");
    const first = await call(server, "DELETE", `${PODS}/graceful`);
    assert.equal(first.status, 200);
    assert.equal(first.body.metadata.deletionTimestamp, "2024-05-01T12:00:10Z");
    assert.equal(first.body.metadata.deletionGracePeriodSeconds, 10);
    assert.ok(server.store.get({ kind: "Pod", name: "graceful" }), "still there while terminating");
    const again = await call(server, "DELETE", `${PODS}/graceful`);
    assert.equal(
      again.body.metadata.resourceVersion,
      first.body.metadata.resourceVersion,
      "a repeat is a no-op",
    );
    const final = await call(server, "DELETE", `${PODS}/graceful?gracePeriodSeconds=0`);
    assert.equal(final.status, 200);
    assert.equal(final.body.metadata.name, "graceful");
    assert.equal(server.store.get({ kind: "Pod", name: "graceful" }), undefined);
  });

  test("DeleteOptions in the body work like the query", async () => {
    boundPod("body-opts");
    await call(server, "DELETE", `${PODS}/body-opts`, { kind: "DeleteOptions", gracePeriodSeconds: 0 });
    assert.equal(server.store.get({ kind: "Pod", name: "body-opts" }), undefined);
  });

  test("unscheduled and terminal pods go at once", async () => {
    server.store.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "pending" },
      spec: { containers: [] },
    });
    boundPod("done", { status: { phase: "Succeeded" } });
    await call(server, "DELETE", `${PODS}/pending`);
    await call(server, "DELETE", `${PODS}/done`);
    assert.equal(server.store.list("Pod", "default").length, 0);
  });

  test("a uid precondition that does not match is 409", async () => {
    boundPod("guarded");
    const res = await call(server, "DELETE", `${PODS}/guarded`, { preconditions: { uid: "other" } });
    assert.equal(res.status, 409);
    assert.match(res.body.message, /Precondition failed: UID in precondition: other, UID in object meta: /);
  });

  test("a deleted namespace terminates, refuses new content, and finalizeNamespace clears it", async () => {
    server.store.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "doomed" } });
    const del = await call(server, "DELETE", "/api/v1/namespaces/doomed");
    assert.equal(del.body.status.phase, "Terminating");
    const create = await call(server, "POST", "/api/v1/namespaces/doomed/configmaps", {
      metadata: { name: "y" },
    });
    assert.equal(create.status, 403);
    assert.equal(
      create.body.message,
      'configmaps "y" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
    server.finalizeNamespace("doomed");
    assert.equal(server.store.get({ kind: "Namespace", name: "doomed" }), undefined);
    assert.equal(server.store.list("ConfigMap", "doomed").length, 0);
    const missing = await call(server, "POST", "/api/v1/namespaces/doomed/configmaps", {
      metadata: { name: "y" },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'namespaces "doomed" not found');
  });

  test("store.update changes an object in place and request() calls as a user", async () => {
    boundPod("watched");
    const before = server.store.get({ kind: "Pod", name: "watched" });
    const after = server.store.update({ kind: "Pod", name: "watched" }, (p) => {
      p.status = { phase: "Succeeded" };
    });
    assert.ok(Number(after.metadata?.resourceVersion) > Number(before?.metadata?.resourceVersion));
    const res = await server.request<Json>("DELETE", `${PODS}/watched`, undefined, {
      user: "system:node:node-1",
    });
    assert.equal(res.status, 200);
    assert.equal(server.store.get({ kind: "Pod", name: "watched" }), undefined, "terminal pods go at once");
    assert.equal(server.requests.at(-1)?.user, "system:node:node-1");
  });

  test("other kinds are deleted at once with a Success Status", async () => {
    server.store.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "gone" } });
    const res = await call(server, "DELETE", "/api/v1/namespaces/default/configmaps/gone");
    assert.equal(res.body.status, "Success");
    assert.equal(server.store.get({ kind: "ConfigMap", name: "gone" }), undefined);
  });
});

// A webhook stand-in: answers each review with what `answer` returns, and keeps the reviews.
async function startWebhook(answer: (review: AdmissionReview) => unknown) {
  const reviews: AdmissionReview[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as AdmissionReview;
      reviews.push(review);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answer(review)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    reviews,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function allowWith(review: AdmissionReview, ops?: unknown[]): AdmissionReview {
  const response: Json = { uid: review.request?.uid, allowed: true };
  if (ops) {
    response.patchType = "JSONPatch";
    response.patch = Buffer.from(JSON.stringify(ops)).toString("base64");
  }
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response } as AdmissionReview;
}

describe("fake API server: admission webhooks", () => {
  let server: FakeApiServer;
  let hook: Awaited<ReturnType<typeof startWebhook>>;
  let mode: "label" | "deny" | "patch-delete" = "label";

  before(async () => {
    hook = await startWebhook((review) => {
      const op = review.request?.operation;
      if (mode === "deny") {
        return {
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: review.request?.uid,
            allowed: false,
            status: { code: 403, message: "no pods today" },
          },
        };
      }
      if (op === "DELETE") {
        return allowWith(
          review,
          mode === "patch-delete" ? [{ op: "test", path: "/metadata", value: {} }] : undefined,
        );
      }
      return allowWith(review, [{ op: "add", path: "/metadata/annotations", value: { mutated: "yes" } }]);
    });
    server = await startFakeApiServer({
      webhooks: [
        {
          name: "mutate.simkube.io",
          url: hook.url,
          operations: ["CREATE", "UPDATE", "DELETE"],
          resources: ["pods"],
        },
      ],
    });
  });
  after(async () => {
    await server.close();
    await hook.close();
  });

  test("CREATE: the review is real and the returned patch is stored", async () => {
    const res = await call(
      server,
      "POST",
      PODS,
      { ...pod(""), metadata: { generateName: "web-" } },
      { "x-fake-user": "system:serviceaccount:simkube:sk-ctrl-sa" },
    );
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.metadata.annotations, { mutated: "yes" });
    const stored = server.store.get({ kind: "Pod", name: res.body.metadata.name });
    assert.deepEqual(stored?.metadata?.annotations, { mutated: "yes" });
    const review = hook.reviews.at(-1);
    const req = review?.request;
    assert.equal(review?.apiVersion, "admission.k8s.io/v1");
    assert.equal(req?.operation, "CREATE");
    assert.equal(req?.name, "", "generateName pods have no name yet");
    assert.equal(req?.namespace, "default");
    assert.deepEqual(req?.kind, { group: "", version: "v1", kind: "Pod" });
    assert.deepEqual(req?.resource, { group: "", version: "v1", resource: "pods" });
    assert.equal(req?.userInfo?.username, "system:serviceaccount:simkube:sk-ctrl-sa");
    assert.equal(req?.oldObject, null);
    assert.equal(req?.dryRun, false);
    assert.equal(server.admissions.at(-1)?.webhook, "mutate.simkube.io");
  });

  test("dryRun=All is passed on and nothing is stored", async () => {
    const res = await call(server, "POST", `${PODS}?dryRun=All`, pod("dry"));
    assert.equal(res.status, 201);
    assert.equal(hook.reviews.at(-1)?.request?.dryRun, true);
    assert.equal(server.store.get({ kind: "Pod", name: "dry" }), undefined);
  });

  test("DELETE: one review for the graceful delete, two for the final one", async () => {
    server.store.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "bound", namespace: "default" },
      spec: { nodeName: "n", containers: [{ name: "c", image: "i" }] },
      status: { phase: "Running" },
    });
    const before = hook.reviews.length;
    await call(server, "DELETE", `${PODS}/bound`, undefined, {
      "x-fake-user": "system:serviceaccount:kube-system:replicaset-controller",
    });
    const graceful = hook.reviews.slice(before);
    assert.equal(graceful.length, 1);
    assert.equal(graceful[0]?.request?.object, null);
    assert.equal(oldOf(graceful[0]).metadata.deletionTimestamp, undefined);
    assert.equal(graceful[0]?.request?.name, "bound");

    await call(server, "DELETE", `${PODS}/bound?gracePeriodSeconds=0`, undefined, { "x-fake-user": "kwok" });
    const final = hook.reviews.slice(before + 1);
    assert.equal(final.length, 2);
    const olds = final.map((r) => oldOf(r).metadata);
    assert.equal(olds[0].deletionGracePeriodSeconds, 30);
    assert.equal(olds[1].deletionGracePeriodSeconds, 0);
    assert.ok(olds.every((m) => m.deletionTimestamp));
    assert.equal(optionsOf(final[0]).gracePeriodSeconds, 0);
    assert.equal(final[0]?.request?.userInfo?.username, "kwok");
  });

  test("DeleteCollection reviews each pod with an empty name", async () => {
    for (const name of ["c1", "c2"]) {
      server.store.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: "coll" },
        spec: { containers: [] },
      });
    }
    const before = hook.reviews.length;
    await call(server, "DELETE", "/api/v1/namespaces/coll/pods");
    const reviews = hook.reviews.slice(before);
    // Unscheduled pods: update-then-delete, two reviews each.
    assert.equal(reviews.length, 4);
    assert.ok(reviews.every((r) => r.request?.name === ""));
    assert.deepEqual([...new Set(reviews.map((r) => oldOf(r).metadata.name))], ["c1", "c2"]);
  });

  test("terminateNamespace and finishPodTerminations replay a namespace teardown", async () => {
    for (const name of ["t1", "t2"]) {
      server.store.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: "teardown" },
        spec: { nodeName: "kwok-node", containers: [{ name: "c", image: "i" }] },
        status: { phase: "Running" },
      });
    }
    const before = hook.reviews.length;
    await server.terminateNamespace("teardown");
    const graceful = hook.reviews.slice(before);
    assert.deepEqual(
      graceful.map((r) => [r.request?.name, r.request?.userInfo?.username, oldOf(r).metadata.name]),
      [
        ["", "system:serviceaccount:kube-system:namespace-controller", "t1"],
        ["", "system:serviceaccount:kube-system:namespace-controller", "t2"],
      ],
    );
    assert.equal(server.store.list("Pod", "teardown").length, 2, "bound pods are only terminating");
    assert.equal(await server.finishPodTerminations({ namespace: "teardown" }), 2);
    const finals = hook.reviews.slice(before + 2);
    assert.equal(finals.length, 4);
    assert.ok(finals.every((r) => r.request?.userInfo?.username === "system:node:kwok-node"));
    assert.ok(finals.every((r) => r.request?.name === "t1" || r.request?.name === "t2"));
    assert.equal(server.store.list("Pod", "teardown").length, 0);
    server.finalizeNamespace("teardown");
    assert.equal(server.store.get({ kind: "Namespace", name: "teardown" }), undefined);
  });

  test("a denial is the webhook's code and message", async () => {
    mode = "deny";
    try {
      const res = await call(server, "POST", PODS, pod("denied"));
      assert.equal(res.status, 403);
      assert.equal(
        res.body.message,
        'admission webhook "mutate.simkube.io" denied the request: no pods today',
      );
    } finally {
      mode = "label";
    }
  });

  test("a patch on DELETE fails the request with 500", async () => {
    server.store.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "patched-delete" },
      spec: { containers: [] },
    });
    mode = "patch-delete";
    try {
      const res = await call(server, "DELETE", `${PODS}/patched-delete`);
      assert.equal(res.status, 500);
      assert.equal(res.body.reason, "InternalError");
      assert.match(
        res.body.message,
        /admission webhook "mutate\.simkube\.io" attempted to modify the object, which is not supported for this operation/,
      );
      assert.ok(server.store.get({ kind: "Pod", name: "patched-delete" }), "the pod stays");
    } finally {
      mode = "label";
    }
  });

  test("an unreachable webhook fails closed under Fail and is skipped under Ignore", async () => {
    const down = await startWebhook(() => ({}));
    await down.close();
    const saved = server.webhooks;
    try {
      server.webhooks = [{ url: down.url, operations: ["CREATE"], resources: ["pods"], timeoutMs: 2000 }];
      const fail = await call(server, "POST", PODS, pod("fail-closed"));
      assert.equal(fail.status, 500);
      assert.match(fail.body.message, /failed calling webhook "fake-webhook-1\.simkube\.io"/);
      server.webhooks = [
        { url: down.url, operations: ["CREATE"], resources: ["pods"], failurePolicy: "Ignore" },
      ];
      assert.equal((await call(server, "POST", PODS, pod("fail-open"))).status, 201);
    } finally {
      server.webhooks = saved;
    }
  });

  test("rules: pods does not match pods/status; configmaps are not reviewed", async () => {
    const before = hook.reviews.length;
    await call(server, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "unreviewed" } });
    const current = await call(server, "GET", `${PODS}/fail-open`);
    await call(server, "PUT", `${PODS}/fail-open/status`, { ...current.body, status: { phase: "Running" } });
    assert.equal(hook.reviews.length, before);
  });
});

describe("fake API server: writes racing with admission", () => {
  test("a write landing during admission: conditional PUT conflicts, an unconditional patch is retried", async () => {
    let server: FakeApiServer | undefined;
    let interfere = 0;
    const hook = await startWebhook((review) => {
      if (interfere > 0 && server) {
        interfere -= 1;
        server.store.update({ kind: "ConfigMap", name: "raced" }, (cm) => {
          cm.data = { ...(cm.data as Record<string, string>), other: "writer" };
        });
      }
      return allowWith(review);
    });
    server = await startFakeApiServer({
      webhooks: [{ url: hook.url, operations: ["UPDATE"], resources: ["configmaps"] }],
    });
    try {
      const cm = server.store.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "raced" },
        data: { a: "1" },
      });
      interfere = 1;
      const put = await server.request<Json>("PUT", "/api/v1/namespaces/default/configmaps/raced", {
        ...cm,
        data: { a: "2" },
      });
      assert.equal(put.status, 409);
      assert.equal(put.body.reason, "Conflict");

      interfere = 1;
      const before = hook.reviews.length;
      const patched = await server.request<Json>(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/raced",
        { data: { a: "3" } },
        { contentType: "application/merge-patch+json" },
      );
      assert.equal(patched.status, 200);
      assert.deepEqual(patched.body.data, { a: "3", other: "writer" });
      assert.equal(hook.reviews.length - before, 2, "admission ran again on the retry");
    } finally {
      await server.close();
      await hook.close();
    }
  });
});
