// Who may send a review: the path secret (WEBHOOK_PATH_SECRET) and, when the function serves TLS itself,
// the API server's client certificate (CLIENT_CA_FILE), as the API server would present it from its
// AdmissionConfiguration kubeConfigFile. Certificates: test/support/tls (test-only).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import request from "supertest";
import { type AppOptions, createApp, drainAndClose, listen } from "../../functions/runtime/http-server.js";
import { createFunctionMetrics } from "../../functions/runtime/metrics.js";
import { readTlsMaterial } from "../../functions/runtime/tls-files.js";
import {
  type AdmissionReview,
  allow,
  parseReview,
  type ReviewHandler,
  rejectReview,
} from "../../shared/admission/review.js";
import { silentLog } from "../support/logs.js";

const quiet = silentLog();
const SECRET = "Zm9vYmFyYmF6cXV4LXNlY3JldC1wYXRo";
const review = (uid: string) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid, operation: "CREATE", object: { kind: "Pod" } },
});

function countingEcho() {
  const seen: string[] = [];
  const handle: ReviewHandler = async (body) => {
    const parsed = parseReview(body);
    if (parsed.ok) seen.push(parsed.request.uid);
    return parsed.ok ? allow(parsed.request) : rejectReview(parsed);
  };
  return { handle, seen };
}

describe("path secret", () => {
  it("takes reviews at POST /<secret> (query allowed) and refuses every other path with a 404", async () => {
    const { handle, seen } = countingEcho();
    const app = createApp(handle, quiet, { pathSecret: SECRET });
    const ok = await request(app).post(`/${SECRET}`).send(review("a")).expect(200);
    assert.equal((ok.body as AdmissionReview).response?.uid, "a");
    await request(app).post(`/${SECRET}?timeout=5s`).send(review("b")).expect(200);

    const wrongSameLength = `${SECRET.slice(0, -1)}X`;
    for (const path of [
      "/",
      `/${wrongSameLength}`,
      `/${SECRET}/x`,
      `/${SECRET.slice(0, 10)}`,
      `//${SECRET}`,
    ]) {
      await request(app).post(path).send(review("refused")).expect(404);
    }
    assert.deepEqual(seen, ["a", "b"], "refused reviews never reach the handler");
    await request(app).get("/healthz").expect(200, "ok");
  });

  it("serves /stats only at GET /<secret>/stats; /healthz and /metrics stay open", async () => {
    const { handle } = countingEcho();
    const metrics = createFunctionMetrics("mutate-create", () => ({ reviews: 3 }));
    const app = createApp(handle, quiet, { pathSecret: SECRET, stats: () => ({ reviews: 3 }), metrics });
    await request(app).get("/stats").expect(404);
    await request(app)
      .get(`/${SECRET.slice(0, -1)}X/stats`)
      .expect(404);
    const stats = await request(app).get(`/${SECRET}/stats`).expect(200);
    assert.equal((stats.body as { reviews: number }).reviews, 3);
    await request(app).get("/healthz").expect(200);
    await request(app).get("/readyz").expect(200);
    await request(app).get("/metrics").expect(200);
  });

  it("without a secret, POST / is the review route as before", async () => {
    const { handle } = countingEcho();
    await request(createApp(handle, quiet)).post("/").send(review("c")).expect(200);
    await request(createApp(handle, quiet)).post(`/${SECRET}`).send(review("d")).expect(404);
  });
});

const here = dirname(fileURLToPath(import.meta.url));
const tlsDir = resolve(here, "../../../test/support/tls"); // dist/test/http -> repo/test/support/tls
const pem = (name: string) => readFileSync(resolve(tlsDir, name));

interface Answer {
  status: number;
  body: string;
}

function call(
  port: number,
  path: string,
  client?: "apiserver" | "stranger",
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolvePromise, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: body === undefined ? "GET" : "POST",
        ca: pem("test-ca.crt"),
        ...(client ? { cert: pem(`${client}.crt`), key: pem(`${client}.key`) } : {}),
        headers: { "content-type": "application/json" },
        agent: false,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe("TLS with a client CA (the API server's client certificate)", () => {
  let server: Server;
  let port: number;
  const { handle, seen } = countingEcho();

  before(async () => {
    const tls = readTlsMaterial({
      certFile: resolve(tlsDir, "server.crt"),
      keyFile: resolve(tlsDir, "server.key"),
      clientCaFile: resolve(tlsDir, "test-ca.crt"),
    });
    const app = createApp(handle, quiet, { requireClientCert: true, stats: () => ({ reviews: 1 }) });
    server = await listen(app, 0, "127.0.0.1", tls);
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await drainAndClose(server, 2_000, 0);
  });

  it("answers a review from a caller whose certificate the CA signed", async () => {
    const answer = await call(port, "/", "apiserver", review("from-apiserver"));
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as AdmissionReview).response?.uid, "from-apiserver");
  });

  it("refuses a review with no certificate, or one another CA signed, with a 403", async () => {
    for (const client of [undefined, "stranger"] as const) {
      const answer = await call(port, "/", client, review(`from-${client ?? "nobody"}`));
      assert.equal(answer.status, 403, String(client));
      assert.match(answer.body, /client certificate/);
    }
    assert.deepEqual(seen, ["from-apiserver"]);
  });

  it("serves /stats only to a caller whose certificate the CA signed", async () => {
    for (const client of [undefined, "stranger"] as const) {
      assert.equal((await call(port, "/stats", client)).status, 403, String(client));
    }
    const stats = await call(port, "/stats", "apiserver");
    assert.equal(stats.status, 200);
    assert.equal((JSON.parse(stats.body) as { reviews: number }).reviews, 1);
  });

  it("keeps /healthz and /readyz open to callers without a certificate (kubelet probes)", async () => {
    assert.deepEqual(await call(port, "/healthz"), { status: 200, body: "ok" });
    assert.deepEqual(await call(port, "/readyz"), { status: 200, body: "ok" });
  });
});

describe("client certificates pinned to the API server's identity (CLIENT_CERT_SUBJECTS)", () => {
  const servers: Server[] = [];
  after(async () => {
    for (const s of servers) await drainAndClose(s, 2_000, 0);
  });

  async function pinnedTo(subjects: AppOptions["clientCertSubjects"]) {
    const { handle, seen } = countingEcho();
    const tls = readTlsMaterial({
      certFile: resolve(tlsDir, "server.crt"),
      keyFile: resolve(tlsDir, "server.key"),
      clientCaFile: resolve(tlsDir, "test-ca.crt"),
    });
    const options: AppOptions = { requireClientCert: true, stats: () => ({ reviews: 1 }) };
    if (subjects) options.clientCertSubjects = subjects;
    const server = await listen(createApp(handle, quiet, options), 0, "127.0.0.1", tls);
    servers.push(server);
    return { port: (server.address() as AddressInfo).port, seen };
  }

  it("answers the certificate whose CN is pinned", async () => {
    const { port, seen } = await pinnedTo([{ kind: "CN", value: "kube-apiserver" }]);
    assert.equal((await call(port, "/", "apiserver", review("pinned"))).status, 200);
    assert.equal((await call(port, "/stats", "apiserver")).status, 200);
    assert.deepEqual(seen, ["pinned"]);
  });

  it("refuses a certificate the client CA signed for anyone else (403), for reviews and /stats", async () => {
    const { port, seen } = await pinnedTo([
      { kind: "CN", value: "kube-apiserver-webhook-client" },
      { kind: "DNS", value: "kube-apiserver" },
    ]);
    const answer = await call(port, "/", "apiserver", review("not-pinned"));
    assert.equal(answer.status, 403);
    assert.match(answer.body, /CLIENT_CERT_SUBJECTS/);
    assert.equal((await call(port, "/stats", "apiserver")).status, 403);
    assert.equal((await call(port, "/healthz")).status, 200);
    assert.deepEqual(seen, []);
  });
});
