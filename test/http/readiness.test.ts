// Readiness against the API double over real HTTP: GET /readyz is 200 only when the function can read the
// API, 503 (and nothing more) when it cannot; GET /healthz answers as long as the process does; both open to
// callers without the path secret. `serve --check` from the bundle exits 1 with one line naming what is
// missing: no kubeconfig, an unreachable API server, RBAC.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import request from "supertest";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { apiReadinessCheck } from "../../functions/runtime/api-readiness.js";
import { createApp } from "../../functions/runtime/http-server.js";
import { createReadiness } from "../../functions/runtime/readiness.js";
import { allow, parseReview, type ReviewHandler, rejectReview } from "../../shared/admission/review.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { silentLog } from "../support/logs.js";
import { CLI } from "../support/serve-cli.js";

const echo: ReviewHandler = async (body) => {
  const parsed = parseReview(body);
  return parsed.ok ? allow(parsed.request) : rejectReview(parsed);
};

const SECRET = "a".repeat(32);
const SIMULATIONS = /\/apis\/simkube\.io\/v1\/simulations\//;

/** `simkube-fn serve <fn> --check` from the bundle, asynchronously (the API double answers in this process). */
function serveCheck(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, "serve", "mutate-create", "--check", "--port", "0"],
      { env: { PATH: process.env.PATH ?? "", SEQUENCE_STORE: "memory", ...env }, timeout: 30_000 },
      (err, _stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stderr }),
    );
  });
}

describe("readiness against the API double", () => {
  let api: FakeApiServer;
  let kubeconfig: string;
  let home: string;

  before(async () => {
    api = await startFakeApiServer();
    kubeconfig = await writeKubeconfig(api.url);
    home = await mkdtemp(path.join(tmpdir(), "simkube-fn-home-"));
  });
  after(async () => {
    await api.close();
    await removeKubeconfig(kubeconfig);
    await rm(home, { recursive: true, force: true });
  });

  const appWith = (checkOptions: { ttlMs?: number } = {}) => {
    const kube = createKubeApi({ kubeconfigPath: kubeconfig, timeoutMs: 2_000 });
    const readiness = createReadiness(apiReadinessCheck(kube, "sim-1"), checkOptions);
    return { app: createApp(echo, silentLog(), { readiness, pathSecret: SECRET }), readiness };
  };

  it("is ready when the Simulation can be read (absent is a 404: the read is allowed); probes need no secret", async () => {
    const { app } = appWith();
    const before = api.count("GET", SIMULATIONS);
    await request(app).get("/readyz").expect(200, "ok");
    await request(app).head("/readyz").expect(200);
    await request(app).get("/healthz").expect(200, "ok");
    for (let i = 0; i < 10; i++) await request(app).get("/readyz").expect(200);
    assert.equal(api.count("GET", SIMULATIONS) - before, 1, "one API read for 12 probes within the TTL");
  });

  it("RBAC forbids the read: 503 'not ready' and nothing more; the reason names the read", async () => {
    api.failNext({ method: "GET", path: SIMULATIONS, status: 403, message: "user cannot get", times: 1 });
    const { app, readiness } = appWith();
    const res = await request(app).get("/readyz").expect(503);
    assert.equal(res.text, "not ready");
    api.failNext({ method: "GET", path: SIMULATIONS, status: 403, message: "user cannot get", times: 1 });
    const verdict = await readiness.checkNow();
    assert.equal(verdict.ready, false);
    assert.match(
      verdict.reason ?? "",
      /^RBAC forbids the read this function needs \(get simulations\.simkube\.io\)/,
    );
    await request(app).get("/healthz").expect(200, "ok");
  });

  it("a ready function stays ready through one failed read (a 503 from the API server, a reset)", async () => {
    const { app, readiness } = appWith({ ttlMs: 0 });
    assert.equal((await readiness.checkNow()).ready, true);
    api.failNext({ method: "GET", path: SIMULATIONS, status: 503, times: 1 });
    assert.deepEqual((await readiness.checkNow()).ready, true);
    api.failNext({ method: "GET", path: SIMULATIONS, action: "reset", times: 1 });
    assert.deepEqual((await readiness.checkNow()).ready, true);
    await request(app).get("/readyz").expect(200);
  });

  it("serve --check: exit 0 when the API can be read", async () => {
    const run = await serveCheck({ KUBECONFIG: kubeconfig, HOME: home, SIM_NAME: "sim-1" });
    assert.equal(run.code, 0, run.stderr);
  });

  it("serve --check: exit 1 and one line for RBAC, no kubeconfig, an unreachable API server", async () => {
    // Both reads the start makes (the Simulation's and readiness's) are refused; no other test reads this name.
    const refused = /\/simulations\/sim-forbidden$/;
    api.failNext({ method: "GET", path: refused, status: 403, message: "user cannot get", times: 2 });
    const forbidden = await serveCheck({ KUBECONFIG: kubeconfig, HOME: home, SIM_NAME: "sim-forbidden" });
    assert.equal(forbidden.code, 1);
    assert.match(
      forbidden.stderr,
      /^simkube-fn: not ready: RBAC forbids the read this function needs[^\n]*\n$/m,
    );

    const nothing = await serveCheck({ HOME: home, SIM_NAME: "sim-1" });
    assert.equal(nothing.code, 1);
    assert.match(
      nothing.stderr,
      /^simkube-fn: no kubeconfig \(\$KUBECONFIG unset, no ~\/\.kube\/config\) and no in-cluster service account[^\n]*\n$/,
    );

    const closed = await startFakeApiServer();
    const gone = await writeKubeconfig(closed.url);
    await closed.close();
    try {
      const unreachable = await serveCheck({ KUBECONFIG: gone, HOME: home, SIM_NAME: "sim-1" });
      assert.equal(unreachable.code, 1);
      assert.match(
        unreachable.stderr,
        /^simkube-fn: not ready: the API server is unreachable: [^\n]*ECONNREFUSED[^\n]*\n$/m,
      );
    } finally {
      await removeKubeconfig(gone);
    }
  });
});
