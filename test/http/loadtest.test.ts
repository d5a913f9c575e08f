// The load loop and the loadtest command against tiny in-process servers on 127.0.0.1.

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { runLoadtestCommand } from "../../functions/cli/loadtest/command.js";
import { type LoadRequest, runLoad } from "../../functions/cli/loadtest/load.js";
import { buildTeardownReviews } from "../../functions/cli/loadtest/reviews.js";

type Answer = (
  review: { request: { uid: string; oldObject?: unknown; userInfo?: { username?: string } } },
  index: number,
) => unknown;

interface TestServer {
  url: URL;
  requests: number;
  connections: number;
  maxInFlight: number;
  stats?: Record<string, number>;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A server that answers each review with answer(review); `hang` leaves a request unanswered. */
async function startServer(
  answer: Answer | "hang",
  options: { stats?: Record<string, number> } = {},
): Promise<TestServer> {
  let inFlight = 0;
  const hanging: http.ServerResponse[] = [];
  const state: TestServer = {
    url: new URL("http://127.0.0.1/"),
    requests: 0,
    connections: 0,
    maxInFlight: 0,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  if (options.stats) state.stats = options.stats;
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/stats" && state.stats) {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ...state.stats, rssBytes: 42 * 1024 * 1024 }));
      return;
    }
    if (req.method !== "POST") {
      res.statusCode = 404;
      res.end("{}");
      return;
    }
    const index = state.requests++;
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (answer === "hang") {
        hanging.push(res);
        return;
      }
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const body = answer(review, index);
      // Answer on a later turn so that requests really overlap.
      setImmediate(() => {
        inFlight -= 1;
        if (body === "destroy") {
          res.destroy();
          return;
        }
        if (typeof body === "number") {
          res.statusCode = body;
          res.end('{"message":"boom"}');
          return;
        }
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(body));
      });
    });
  });
  server.on("connection", () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  servers.push(state);
  return state;
}

function allowed(uid: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid, allowed: true, ...extra },
  };
}

const NOW = new Date("2025-03-01T12:00:00Z");

function teardownRequests(count: number): LoadRequest[] {
  return buildTeardownReviews({
    count,
    simName: "s",
    rootName: "sk-s-driver-1-root",
    rootUid: "r",
    now: NOW,
  }).reviews.map((r) => ({ uid: r.uid, body: Buffer.from(JSON.stringify(r.review)) }));
}

describe("runLoad", () => {
  it("sends every review over at most `concurrency` keep-alive connections and checks every answer", async () => {
    const server = await startServer((review) => allowed(review.request.uid));
    const progress: number[] = [];
    const result = await runLoad({
      target: server.url,
      requests: teardownRequests(300),
      concurrency: 8,
      timeoutMs: 30_000,
      onProgress: (done) => progress.push(done),
    });
    assert.equal(result.sent, 300);
    assert.equal(result.ok, 300);
    assert.equal(result.errors, 0);
    assert.equal(result.timedOut, false);
    assert.equal(result.latenciesMs.length, 300);
    for (let i = 1; i < result.latenciesMs.length; i++) {
      assert.ok((result.latenciesMs[i - 1] as number) <= (result.latenciesMs[i] as number));
    }
    assert.equal(server.requests, 300);
    assert.ok(server.connections <= 8, `${server.connections} connections`);
    assert.ok(server.maxInFlight <= 8);
    assert.ok(server.maxInFlight > 1, "requests overlapped");
    assert.equal(progress.length, 300);
    assert.equal(progress.at(-1), 300);
  });

  it("counts each kind of bad answer as an error", async () => {
    const server = await startServer((review, index) => {
      const uid = review.request.uid;
      switch (index % 6) {
        case 0:
          return allowed(uid);
        case 1:
          return 500;
        case 2:
          return allowed("someone-else");
        case 3:
          return {
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: { uid, allowed: false },
          };
        case 4:
          return allowed(uid, { patchType: "JSONPatch", patch: "W10=" });
        default:
          return "destroy";
      }
    });
    const result = await runLoad({
      target: server.url,
      requests: teardownRequests(60),
      concurrency: 1, // one at a time, so request i is answered by case i % 6
      timeoutMs: 30_000,
    });
    assert.equal(result.ok, 10);
    assert.equal(result.errors, 50);
    assert.deepEqual(result.errorsByKind, {
      "http-status": 10,
      "uid-mismatch": 10,
      "not-allowed": 10,
      patch: 10,
      transport: 10,
    });
    assert.equal(result.errorSamples.length, 10);
    assert.equal(result.latenciesMs.length, 50, "transport failures have no latency");
  });

  it("bounds each request by its timeout", async () => {
    const server = await startServer("hang");
    const result = await runLoad({
      target: server.url,
      requests: teardownRequests(4),
      concurrency: 2,
      timeoutMs: 30_000,
      requestTimeoutMs: 100,
    });
    assert.equal(result.errors, 4);
    assert.deepEqual(result.errorsByKind, { timeout: 4 });
    assert.equal(result.timedOut, false);
  });

  it("stops at the overall timeout and abandons what is in flight", async () => {
    const server = await startServer("hang");
    const result = await runLoad({
      target: server.url,
      requests: teardownRequests(100),
      concurrency: 4,
      timeoutMs: 200,
      requestTimeoutMs: 60_000,
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.sent, 4);
    assert.deepEqual(result.errorsByKind, { deadline: 4 });
  });

  it("reports transport errors when nothing listens", async () => {
    const server = await startServer((review) => allowed(review.request.uid));
    const url = server.url;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const result = await runLoad({
      target: url,
      requests: teardownRequests(3),
      concurrency: 2,
      timeoutMs: 10_000,
    });
    assert.deepEqual(result.errorsByKind, { transport: 3 });
  });
});

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      stdout: { write: (t: string) => out.push(t), isTTY: false },
      stderr: { write: (t: string) => err.push(t) },
      now: () => NOW,
    },
    out,
    err,
  };
}

describe("simkube-fn loadtest teardown", () => {
  it("passes against a function that admits every delete and clones nothing, and reads /stats", async () => {
    const server = await startServer((review) => allowed(review.request.uid), {
      stats: { "clone:created": 5 },
    });
    const { io, out } = captureIo();
    const code = await runLoadtestCommand(
      ["teardown", "--target", server.url.href, "--reviews", "200", "--concurrency", "4", "--json"],
      io,
    );
    const report = JSON.parse(out.join(""));
    assert.equal(code, 0);
    assert.equal(report.ok, 200);
    assert.equal(report.errors, 0);
    assert.equal(report.clonesCreated, 0);
    assert.equal(report.expectedClones, 0);
    assert.equal(report.serverRssBytes, 42 * 1024 * 1024);
    assert.equal(server.requests, 200);
  });

  it("fails when the function clones during a teardown", async () => {
    const stats = { "clone:created": 0 };
    const server = await startServer(
      (review) => {
        stats["clone:created"] += 1;
        return allowed(review.request.uid);
      },
      { stats },
    );
    const { io, out } = captureIo();
    const code = await runLoadtestCommand(["teardown", "--target", server.url.href, "--reviews", "20"], io);
    assert.equal(code, 1);
    const text = out.join("");
    assert.match(text, /clones\s+20 created \(expected 0\)/);
    assert.match(text, /FAIL/);
  });

  it("says unknown for clones and RSS without /stats, and still passes on clean answers", async () => {
    const server = await startServer((review) => allowed(review.request.uid));
    const { io, out } = captureIo();
    const code = await runLoadtestCommand(["teardown", "--target", server.url.href, "--reviews", "10"], io);
    assert.equal(code, 0);
    assert.match(out.join(""), /clones\s+unknown/);
    assert.match(out.join(""), /server RSS\s+unknown/);
  });

  it("allows up to one clone per interruption when asked for them", async () => {
    const stats = { "clone:created": 0 };
    const server = await startServer(
      (review) => {
        const user = review.request.userInfo?.username ?? "";
        // Stands in for a correct function: clones on the interruptions' first reviews only.
        if (user === "kubernetes-admin" || user.endsWith(":node-controller")) stats["clone:created"] += 1;
        return allowed(review.request.uid);
      },
      { stats },
    );
    const { io, out } = captureIo();
    const code = await runLoadtestCommand(
      ["teardown", "--target", server.url.href, "--reviews", "100", "--interruptions", "0.5", "--json"],
      io,
    );
    const report = JSON.parse(out.join(""));
    assert.ok(report.expectedClones > 0);
    assert.equal(report.clonesCreated, report.expectedClones);
    assert.equal(code, 0);
  });

  it("answers bad flags with exit code 2 and the usage", async () => {
    const { io, err } = captureIo();
    assert.equal(await runLoadtestCommand(["teardown"], io), 2);
    assert.match(err.join(""), /--target URL is required/);
    assert.equal(await runLoadtestCommand(["teardown", "--target", "http://x/", "--bogus"], io), 2);
  });
});
