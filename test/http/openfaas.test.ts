// The OpenFaaS adapter: driven with fake event/context objects, through an express app that follows the
// node20/node22 template contract (openfaas/templates template/node22/index.js), and as the bundled CommonJS
// handler.js that
// the template require()s, against the fake API server.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import express from "express";
import fastJsonPatch from "fast-json-patch";
import request from "supertest";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import {
  createOpenfaasHandler,
  decodeBody,
  type OpenfaasContext,
  type OpenfaasEvent,
  type OpenfaasHandler,
} from "../../functions/runtime/openfaas/adapter.js";
import { buildStack } from "../../knative/openfaas-stack.js";
import {
  type AdmissionReview,
  allow,
  decodePatch,
  type ReviewHandler,
  UnanswerableReviewError,
} from "../../shared/admission/review.js";
import { SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  TEST_NAMESPACE,
} from "../support/builders.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { capturingLog } from "../support/logs.js";
import { rawPost } from "../support/raw-post.js";

interface Sent {
  status: number;
  headers: Record<string, string>;
  value?: unknown;
  failed?: unknown;
}

/** A context like the template's FunctionContext: chainable status/headers, succeed/fail record the answer. */
function fakeContext(): OpenfaasContext & { sent: Sent[] } {
  let status = 200;
  let headers: Record<string, string> = {};
  const sent: Sent[] = [];
  const context = {
    sent,
    status(code: number) {
      status = code;
      return context;
    },
    headers(values: Record<string, string>) {
      headers = values;
      return context;
    },
    succeed(value: unknown) {
      sent.push({ status, headers, value });
    },
    fail(err: unknown) {
      sent.push({ status: status === 200 ? 500 : status, headers, failed: err });
    },
  };
  return context;
}

const REVIEW = buildCreateReview({ pod: buildPod(), uid: "uid-1" });
const echo: ReviewHandler = async (body) => allow({ uid: (body as AdmissionReview).request?.uid ?? "" });

async function call(handler: OpenfaasHandler, event: OpenfaasEvent): Promise<Sent> {
  const context = fakeContext();
  const returned = await handler(event, context);
  assert.equal(returned, undefined, "the answer goes through succeed, not the return value");
  assert.equal(context.sent.length, 1, "exactly one answer per call");
  return context.sent[0] as Sent;
}

describe("decodeBody", () => {
  it("takes what the template made of the body: parsed object, text or Buffer", () => {
    assert.deepEqual(decodeBody({ a: 1 }), { ok: true, value: { a: 1 } });
    assert.deepEqual(decodeBody('{"a":1}'), { ok: true, value: { a: 1 } });
    assert.deepEqual(decodeBody(Buffer.from('{"a":1}')), { ok: true, value: { a: 1 } });
    assert.equal(decodeBody("{nope").ok, false);
    assert.equal(decodeBody(Buffer.alloc(0)).ok, false);
    assert.equal(decodeBody(undefined).ok, false);
  });
});

describe("createOpenfaasHandler with a fake context", () => {
  it("answers a review with 200 and application/json, whatever form the body came in", async () => {
    const handler = createOpenfaasHandler(async () => echo);
    for (const body of [REVIEW, JSON.stringify(REVIEW), Buffer.from(JSON.stringify(REVIEW))]) {
      const sent = await call(handler, { method: "POST", body });
      assert.equal(sent.status, 200);
      assert.deepEqual(sent.headers, { "content-type": "application/json" });
      assert.deepEqual(sent.value, allow({ uid: "uid-1" }));
    }
  });

  it("bad JSON is a 400 with a JSON {message}; the handler is never built for it", async () => {
    let builds = 0;
    const handler = createOpenfaasHandler(async () => {
      builds++;
      return echo;
    });
    for (const body of ["{not json", Buffer.from("]"), "", undefined]) {
      const sent = await call(handler, { method: "POST", body });
      assert.equal(sent.status, 400);
      assert.deepEqual(sent.headers, { "content-type": "application/json" });
      assert.equal(typeof (sent.value as { message: string }).message, "string");
    }
    assert.equal(builds, 0);
  });

  it("builds the handler once, on the first call, even for concurrent calls", async () => {
    let builds = 0;
    const handler = createOpenfaasHandler(async () => {
      builds++;
      await new Promise((resolve) => setImmediate(resolve));
      return echo;
    });
    assert.equal(builds, 0, "nothing is built before the first call");
    const answers = await Promise.all([1, 2, 3].map(() => call(handler, { method: "POST", body: REVIEW })));
    await call(handler, { method: "POST", body: REVIEW });
    assert.equal(builds, 1);
    assert.ok(answers.every((a) => a.status === 200));
  });

  it("a failed build answers 500 JSON, is logged, and is retried on the next call", async () => {
    const { log, lines } = capturingLog("info");
    let builds = 0;
    const handler = createOpenfaasHandler(
      async () => {
        builds++;
        if (builds === 1) throw new Error("SIM_NAME is required");
        return echo;
      },
      { log },
    );
    const first = await call(handler, { method: "POST", body: REVIEW });
    assert.equal(first.status, 500);
    assert.deepEqual(first.headers, { "content-type": "application/json" });
    assert.match((first.value as { message: string }).message, /SIM_NAME is required/);
    assert.equal(lines[0]?.msg, "review failed");
    const second = await call(handler, { method: "POST", body: REVIEW });
    assert.equal(second.status, 200);
    assert.equal(builds, 2);
  });

  it("a handler that throws is a 500 JSON answer, never a throw out of the function", async () => {
    const { log } = capturingLog("info");
    const handler = createOpenfaasHandler(
      async () => async () => {
        throw new TypeError("boom");
      },
      { log },
    );
    const sent = await call(handler, { method: "POST", body: REVIEW });
    assert.equal(sent.status, 500);
    assert.deepEqual(sent.value, { message: "internal error: boom" });

    const broken: OpenfaasContext = {
      status() {
        throw new Error("context broke");
      },
      headers() {
        return broken;
      },
      succeed() {},
      fail() {},
    };
    await assert.doesNotReject(handler({ method: "POST", body: REVIEW }, broken));
  });

  it("a review the handler cannot answer (no uid) is a 400 JSON answer, not a 500", async () => {
    const { log, lines } = capturingLog("info");
    const handler = createOpenfaasHandler(
      async () => async () => {
        throw new UnanswerableReviewError("admission request has no uid");
      },
      { log },
    );
    const sent = await call(handler, { method: "POST", body: { request: { operation: "DELETE" } } });
    assert.equal(sent.status, 400);
    assert.equal(sent.headers["content-type"], "application/json");
    assert.deepEqual(sent.value, { message: "admission request has no uid" });
    assert.equal(lines.filter((l) => (l.level as number) >= 50).length, 0, "not logged as an error");
  });

  it("tells onReview of each review taken, and of nothing else", async () => {
    let reviews = 0;
    const handler = createOpenfaasHandler(async () => echo, { onReview: () => reviews++ });
    await call(handler, { method: "POST", body: REVIEW });
    await call(handler, { method: "POST", body: JSON.stringify(REVIEW) });
    await call(handler, { method: "GET", path: "/healthz" });
    await call(handler, { method: "POST", body: "{not json" });
    await call(handler, { method: "PUT", body: REVIEW });
    assert.equal(reviews, 2);
  });

  it("GET answers ok (a probe or a person); other methods get 405", async () => {
    const handler = createOpenfaasHandler(async () => echo);
    const get = await call(handler, { method: "GET", path: "/healthz" });
    assert.equal(get.status, 200);
    assert.equal(get.value, "ok");
    const put = await call(handler, { method: "PUT", body: REVIEW });
    assert.equal(put.status, 405);
  });

  it("GET /readyz answers from readiness (the watchdog's /_/ready with ready_path), saying nothing more", async () => {
    let verdict: { ready: boolean; reason?: string } = {
      ready: false,
      reason: "RBAC forbids get simulations",
    };
    const handler = createOpenfaasHandler(async () => echo, { readiness: async () => verdict });
    const notReady = await call(handler, { method: "GET", path: "/readyz" });
    assert.deepEqual([notReady.status, notReady.value], [503, "not ready"]);
    verdict = { ready: true };
    const ready = await call(handler, { method: "GET", path: "/readyz?x=1" });
    assert.deepEqual([ready.status, ready.value], [200, "ok"]);
    const failing = createOpenfaasHandler(async () => echo, {
      readiness: async () => {
        throw new Error("no kubeconfig");
      },
    });
    assert.equal((await call(failing, { method: "GET", path: "/readyz" })).status, 503);
    // /healthz stays the liveness answer whatever readiness says.
    verdict = { ready: false };
    assert.equal((await call(handler, { method: "GET", path: "/healthz" })).status, 200);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The template's request path, written from its documented contract: a default text/plain content type,
// text/* as a string, JSON parsed with a size limit (MAX_JSON_SIZE), objects JSON-stringified with the
// headers the function set, fail() -> err.toString().

function templateApp(handler: OpenfaasHandler, jsonLimit: number | string = "100kb"): express.Express {
  const app = express();
  app.use((req, _res, next) => {
    if (!req.headers["content-type"]) req.headers["content-type"] = "text/plain";
    next();
  });
  app.use(express.text({ type: "text/*" }));
  app.use(express.json({ limit: jsonLimit }));
  app.use((req, res) => {
    let status = 200;
    let headers: Record<string, string> = {};
    let called = false;
    const send = (err: unknown, value?: unknown) => {
      if (err) return void res.status(status).send(String(err));
      const body = typeof value === "object" && value !== null ? JSON.stringify(value) : value;
      res.set(headers).status(status).send(body);
    };
    const context: OpenfaasContext = {
      status(code) {
        status = code;
        return context;
      },
      headers(values) {
        headers = values;
        return context;
      },
      succeed(value) {
        called = true;
        send(undefined, value);
      },
      fail(err) {
        called = true;
        if (status === 200) status = 500;
        send(err);
      },
    };
    const event = {
      body: req.body,
      headers: req.headers,
      method: req.method,
      path: req.path,
      query: req.query,
    };
    Promise.resolve(handler(event, context)).then(
      (value) => {
        if (!called) context.succeed(value);
      },
      (err) => send(err),
    );
  });
  // express's default error answer (413 from the JSON parser), without its stack trace on stderr
  app.use(((err, _req, res, _next) => {
    res.status((err as { status?: number }).status ?? 500).send(String((err as Error).message));
  }) as express.ErrorRequestHandler);
  return app;
}

describe("through the template's request path (express, supertest)", () => {
  const maxJsonSize = Number(
    buildStack({ simName: "s" }).functions["simkube-fn-mutate-create"]?.environment.MAX_JSON_SIZE,
  );

  it("a JSON review comes back as application/json with the handler's answer", async () => {
    const res = await request(
      templateApp(
        createOpenfaasHandler(async () => echo),
        maxJsonSize,
      ),
    )
      .post("/")
      .send(REVIEW)
      .expect(200);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    assert.deepEqual(res.body, allow({ uid: "uid-1" }));
  });

  it("a review sent as text is parsed by the adapter; bad text is a JSON 400", async () => {
    const app = templateApp(
      createOpenfaasHandler(async () => echo),
      maxJsonSize,
    );
    const ok = await request(app).post("/").set("content-type", "text/plain").send(JSON.stringify(REVIEW));
    assert.equal(ok.status, 200);
    assert.equal(ok.body.response.uid, "uid-1");
    const bad = await request(app).post("/").set("content-type", "text/plain").send("{oops").expect(400);
    assert.match(String(bad.headers["content-type"]), /^application\/json/);
    assert.match(bad.body.message, /not valid JSON/);
  });

  it("a 2 MiB review passes with the stack's MAX_JSON_SIZE and fails with the template's 100kb default", async () => {
    const big = structuredClone(REVIEW);
    const pod = big.request?.object as KubeObject & { metadata: { annotations?: Record<string, string> } };
    pod.metadata.annotations = { filler: "x".repeat(2 * 1024 * 1024) };
    const handler = createOpenfaasHandler(async () => echo);
    await request(templateApp(handler, maxJsonSize)).post("/").send(big).expect(200);
    await request(templateApp(handler)).post("/").send(big).expect(413);
  });

  it("a body over MAX_JSON_SIZE gets its 413 over a real socket: the body parser reads the body to its end first", async () => {
    const app = templateApp(
      createOpenfaasHandler(async () => echo),
      maxJsonSize,
    );
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as { port: number };
      for (const framing of ["content-length", "chunked"] as const) {
        const outcome = await rawPost({ port, bodyBytes: 2 * maxJsonSize, framing });
        assert.match(outcome.response, /^HTTP\/1\.1 413 /, framing);
        assert.equal(outcome.error, undefined, framing);
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// The bundle the OpenFaaS template require()s: npm run bundle:openfaas -> dist/openfaas/<fn>/handler.js.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const requireCjs = createRequire(import.meta.url);

describe("bundled CommonJS handler.js (npm run bundle:openfaas)", () => {
  let server: FakeApiServer;
  let kubeconfig: string;
  let bundled: Record<string, OpenfaasHandler> = {};
  const savedEnv = { ...process.env };

  before(async () => {
    // Building is part of the test: esbuild refuses top-level await in CJS output, so a build that passes
    // proves the ESM-only client library went into a CommonJS file that require() can load.
    const built = spawnSync("npm", ["run", "--silent", "bundle:openfaas"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(built.status, 0, `bundle:openfaas failed: ${built.stderr}${built.error ?? ""}`);
    bundled = {};
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const file = path.join(ROOT, "dist/openfaas", fn, "handler.js");
      assert.ok(existsSync(file), `${file} was not written`);
      const pkg = JSON.parse(readFileSync(path.join(ROOT, "dist/openfaas", fn, "package.json"), "utf8"));
      assert.equal(pkg.type, undefined, "no type: module, so handler.js is CommonJS");
      assert.equal(typeof pkg.scripts?.test, "string", "the template's Dockerfile runs npm test");
      bundled[fn] = requireCjs(file) as OpenfaasHandler;
    }

    server = await startFakeApiServer({ namespaces: ["default", "kube-system", TEST_NAMESPACE] });
    server.store.put(buildSimulation());
    server.store.put(buildSimulationRoot());
    kubeconfig = await writeKubeconfig(server.url);
    // What stack.yml's environment gives the function; read on the first call, not at require() time.
    Object.assign(process.env, {
      SIM_NAME: "test-sim",
      KUBECONFIG: kubeconfig,
      SEQUENCE_STORE: "memory",
      LOG_LEVEL: "silent",
    });
  });

  after(async () => {
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
    await server?.close();
    if (kubeconfig) await removeKubeconfig(kubeconfig);
  });

  it("module.exports is the handler itself, not { handler } or { default }", () => {
    for (const handler of Object.values(bundled)) {
      assert.equal(typeof handler, "function");
      assert.equal(handler.length, 2);
    }
  });

  it("mutate-create: a bare simulation pod comes back patched onto virtual nodes", async () => {
    const handler = bundled["mutate-create"] as OpenfaasHandler;
    const pod = buildPod({ name: "bare-pod", phase: "Pending" });
    const sent = await call(handler, {
      method: "POST",
      body: JSON.stringify(buildCreateReview({ pod, uid: "b-1" })),
    });
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.headers, { "content-type": "application/json" });
    const review = sent.value as AdmissionReview;
    assert.equal(review.response?.uid, "b-1");
    assert.equal(review.response?.allowed, true, review.response?.status?.message);
    const out = fastJsonPatch.applyPatch(
      structuredClone(pod),
      decodePatch(review.response ?? { uid: "", allowed: true }),
    ).newDocument as typeof pod & { spec: { nodeSelector?: Record<string, string> } };
    assert.deepEqual(out.spec.nodeSelector, { type: "virtual" });
    assert.equal(out.metadata?.labels?.["simkube.io/simulation"], "test-sim");
    assert.ok(server.count("GET", /simulationroots/) >= 1, "the bundled kube client reached the API server");

    const bad = await call(handler, { method: "POST", body: "{" });
    assert.equal(bad.status, 400);
  });

  it("reschedule-delete: the driver's own delete is allowed, with no patch", async () => {
    const handler = bundled["reschedule-delete"] as OpenfaasHandler;
    const review = buildDeleteReview({ pod: buildPod(), user: SIMKUBE_DRIVER_USER, uid: "d-1" });
    const sent = await call(handler, { method: "POST", body: review });
    assert.equal(sent.status, 200);
    const answer = sent.value as AdmissionReview;
    assert.equal(answer.response?.uid, "d-1");
    assert.equal(answer.response?.allowed, true);
    assert.equal(answer.response?.patch, undefined);
  });
});
