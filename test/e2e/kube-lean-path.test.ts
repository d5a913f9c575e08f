// The lean HTTP path (shared/kube/http.ts) against the fake API server: the kubeconfig's credentials are read
// once per AUTH_REFRESH_MS and again after a 401, and answers that are not a metav1.Status still map to KubeError.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { KubeError, kubeErrorOfStatus } from "../../shared/kube/api.js";
import { AUTH_REFRESH_MS, createLeanTransport } from "../../shared/kube/http.js";

function withToken(kc: KubeConfig, server: string, token: string): void {
  kc.loadFromOptions({
    clusters: [{ name: "fake", server, skipTLSVerify: true }],
    users: [{ name: "u", token }],
    contexts: [{ name: "fake", cluster: "fake", user: "u" }],
    currentContext: "fake",
  });
}

describe("the lean path's credentials", () => {
  let server: FakeApiServer;
  before(async () => {
    server = await startFakeApiServer({
      users: { "token-a": { username: "alice" }, "token-b": { username: "bob" } },
    });
  });
  after(async () => {
    await server.close();
  });

  const lastUser = () => server.requests.at(-1)?.user;

  test("are read once per AUTH_REFRESH_MS, and again right after a 401", async () => {
    const kc = new KubeConfig();
    withToken(kc, server.url, "token-a");
    let clock = 0;
    const request = createLeanTransport(kc, { timeoutMs: 5_000, now: () => clock });
    const get = () => request("GET", "/api/v1/namespaces/default");

    await get();
    assert.equal(lastUser(), "alice");
    withToken(kc, server.url, "token-b");
    await get();
    assert.equal(lastUser(), "alice", "still the credentials read a moment ago");
    clock += AUTH_REFRESH_MS;
    await get();
    assert.equal(lastUser(), "bob", "read again once they are AUTH_REFRESH_MS old");

    withToken(kc, server.url, "token-a");
    server.failNext({ path: /^\/api\/v1\/namespaces\/default$/, status: 401 });
    await assert.rejects(get(), (err: unknown) => err instanceof KubeError && err.status === 401);
    await get();
    assert.equal(lastUser(), "alice", "a 401 drops the credentials without waiting for their age");
  });
});

describe("a plain-http server without insecure-skip-tls-verify", () => {
  test("is refused at the first call, not when the transport is made", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "plain", server: "http://127.0.0.1:9", skipTLSVerify: false }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "plain", cluster: "plain", user: "u" }],
      currentContext: "plain",
    });
    const request = createLeanTransport(kc, { timeoutMs: 1_000 });
    await assert.rejects(
      request("GET", "/api/v1/namespaces/default"),
      (err: unknown) => err instanceof KubeError && err.status === 400 && /skipTLSVerify/.test(err.message),
    );
  });
});

describe("kubeErrorOfStatus", () => {
  test("takes reason and message from a Status body", () => {
    const err = kubeErrorOfStatus(
      409,
      JSON.stringify({ kind: "Status", reason: "Conflict", message: "the object has been modified" }),
    );
    assert.deepEqual(
      [err.status, err.reason, err.message],
      [409, "Conflict", "the object has been modified"],
    );
  });

  test("derives the reason from the code for a body that is not a Status (a proxy's HTML, nothing)", () => {
    const html = kubeErrorOfStatus(502, "<html>bad gateway</html>");
    assert.deepEqual(
      [html.status, html.reason, html.message],
      [502, "Unknown", "HTTP 502: <html>bad gateway</html>"],
    );
    const empty = kubeErrorOfStatus(503, "");
    assert.deepEqual([empty.reason, empty.message], ["ServiceUnavailable", "HTTP 503"]);
  });
});
