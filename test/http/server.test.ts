import assert from "node:assert/strict";
import { describe, it } from "node:test";
import request from "supertest";
import { createApp, drainAndClose, listen, MAX_BODY_BYTES } from "../../functions/runtime/http-server.js";
import {
  type AdmissionReview,
  allow,
  parseReview,
  type ReviewHandler,
  rejectReview,
  UnanswerableReviewError,
} from "../../shared/admission/review.js";
import { capturingLog } from "../support/logs.js";
import { rawPost } from "../support/raw-post.js";

const echo: ReviewHandler = async (body) => {
  const parsed = parseReview(body);
  return parsed.ok ? allow(parsed.request) : rejectReview(parsed);
};

const review = (uid: string) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid, operation: "CREATE", object: { kind: "Pod" } },
});

describe("createApp", () => {
  it("answers a review with 200 and the handler's review, echoing the uid", async () => {
    const { log } = capturingLog("info");
    const res = await request(createApp(echo, log)).post("/").send(review("abc-123")).expect(200);
    assert.match(res.headers["content-type"] ?? "", /application\/json/);
    assert.deepEqual(res.body as AdmissionReview, {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "abc-123", allowed: true },
    });
  });

  it("tells onReview of each review it takes, not of probes or other routes", async () => {
    let reviews = 0;
    const { log } = capturingLog("info");
    const app = createApp(echo, log, { onReview: () => reviews++ });
    await request(app).post("/").send(review("a")).expect(200);
    await request(app).post("/").send(review("b")).expect(200);
    await request(app).get("/healthz").expect(200);
    await request(app).get("/nowhere").expect(404);
    assert.equal(reviews, 2);
  });

  it("accepts the query string the API server may append", async () => {
    const { log } = capturingLog("info");
    const res = await request(createApp(echo, log)).post("/?timeout=10s").send(review("q")).expect(200);
    assert.equal((res.body as AdmissionReview).response?.uid, "q");
  });

  it("answers 400 with a JSON message when the handler cannot answer the review (no uid)", async () => {
    const { log } = capturingLog("info");
    const refuse: ReviewHandler = async (body) => {
      const parsed = parseReview(body);
      if (!parsed.ok && !parsed.uid) throw new UnanswerableReviewError(parsed.message);
      return echo(body);
    };
    const res = await request(createApp(refuse, log))
      .post("/")
      .send({ kind: "AdmissionReview", request: { operation: "DELETE" } })
      .expect(400);
    assert.match(res.headers["content-type"] ?? "", /application\/json/);
    assert.deepEqual(res.body, { message: "admission request has no uid" });
  });

  it("answers a review without request with allowed false and a message", async () => {
    const { log } = capturingLog("info");
    const res = await request(createApp(echo, log)).post("/").send({ kind: "AdmissionReview" }).expect(200);
    assert.equal((res.body as AdmissionReview).response?.allowed, false);
    assert.match((res.body as AdmissionReview).response?.status?.message ?? "", /no request/);
  });

  it("rejects malformed JSON with 400 and a JSON message", async () => {
    const { log, lines } = capturingLog("info");
    const res = await request(createApp(echo, log))
      .post("/")
      .set("content-type", "application/json")
      .send("{not json")
      .expect(400);
    assert.match((res.body as { message: string }).message, /not valid JSON/);
    assert.equal(lines.at(-1)?.msg, "bad request");
  });

  it("rejects a body over the limit with 413, declared or streamed", async () => {
    const { log } = capturingLog("info");
    const app = createApp(echo, log);
    const big = JSON.stringify({ request: { uid: "x", pad: "a".repeat(MAX_BODY_BYTES) } });
    const res = await request(app).post("/").set("content-type", "application/json").send(big).expect(413);
    assert.match((res.body as { message: string }).message, /exceeds/);
  });

  // A client that writes its whole body before reading (the API server's, curl) must still read the 413:
  // answering and closing while the body is arriving made its writes fail with EPIPE and lost the answer.
  for (const framing of ["content-length", "chunked"] as const) {
    it(`answers an oversized body (${framing}) with a 413 the caller receives, over a real socket`, async () => {
      const { log } = capturingLog("info");
      const server = await listen(createApp(echo, log), 0, "127.0.0.1");
      try {
        const { port } = server.address() as { port: number };
        for (const bodyBytes of [MAX_BODY_BYTES + 1, 2 * MAX_BODY_BYTES, 5 * MAX_BODY_BYTES]) {
          const outcome = await rawPost({ port, bodyBytes, framing });
          assert.match(outcome.response, /^HTTP\/1\.1 413 /, `${bodyBytes} bytes: ${outcome.error}`);
          assert.match(outcome.response, /connection: close/i);
          assert.match(outcome.response, /"message":"request body exceeds \d+ bytes"/);
          assert.equal(outcome.error, undefined, `${bodyBytes} bytes`);
          assert.equal(outcome.written, bodyBytes);
        }
        await request(server).post("/").send(review("after")).expect(200);
      } finally {
        await drainAndClose(server, 1_000, 0);
      }
    });
  }

  it("reads no more than its bound from a caller that will not stop: answers 413 and closes", async () => {
    const { log } = capturingLog("info");
    const server = await listen(createApp(echo, log), 0, "127.0.0.1");
    try {
      const { port } = server.address() as { port: number };
      const bodyBytes = 1024 * 1024 * 1024;
      for (const framing of ["content-length", "chunked"] as const) {
        const outcome = await rawPost({ port, bodyBytes, framing });
        assert.ok(outcome.written < bodyBytes / 4, `${framing}: wrote ${outcome.written} bytes`);
      }
    } finally {
      await drainAndClose(server, 1_000, 0);
    }
  });

  it("turns a handler that throws into 500 without a stack, and keeps serving", async () => {
    const { log, lines } = capturingLog("info");
    const app = createApp(async () => {
      throw new Error("boom at /secret/path");
    }, log);
    const res = await request(app).post("/").send(review("u")).expect(500);
    assert.deepEqual(res.body, { message: "internal error" });
    assert.equal(lines.at(-1)?.msg, "request failed");
    await request(app).get("/healthz").expect(200, "ok");
  });

  it("answers 500 for a review it cannot write as JSON, and keeps serving", async () => {
    const { log, lines } = capturingLog("info");
    // A BigInt is not JSON: JSON.stringify throws, as it would for any answer that cannot be sent.
    const unwritable = { ...allow({ uid: "u" }), extra: 1n } as unknown as AdmissionReview;
    const app = createApp(async () => unwritable, log);
    const res = await request(app).post("/").send(review("u")).expect(500);
    assert.deepEqual(res.body, { message: "internal error" });
    assert.equal(lines.at(-1)?.msg, "request failed");
    await request(app).post("/?again").send(review("v")).expect(500);
    await request(app).get("/healthz").expect(200, "ok");
  });

  it("answers reviews that arrive together each with its own answer", async () => {
    const { log } = capturingLog("info");
    const server = await listen(createApp(echo, log), 0, "127.0.0.1");
    try {
      const { port } = server.address() as { port: number };
      const uids = Array.from({ length: 40 }, (_, i) => `together-${i}`);
      const answers = await Promise.all(
        uids.map(async (uid) => {
          const res = await fetch(`http://127.0.0.1:${port}/`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(review(uid)),
          });
          return ((await res.json()) as AdmissionReview).response?.uid;
        }),
      );
      assert.deepEqual(answers, uids);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("serves healthz, stats with the RSS, and JSON 404s", async () => {
    const { log } = capturingLog("info");
    const app = createApp(echo, log, { stats: () => ({ reviews: 7 }) });
    await request(app).get("/healthz").expect(200, "ok");
    const stats = await request(app).get("/stats").expect(200);
    assert.equal((stats.body as { reviews: number }).reviews, 7);
    const memory = stats.body as { rssBytes: number; heapTotalBytes: number; heapUsedBytes: number };
    assert.ok(memory.rssBytes > memory.heapTotalBytes);
    assert.ok(memory.heapTotalBytes >= memory.heapUsedBytes && memory.heapUsedBytes > 0);
    const { uptimeSeconds } = stats.body as { uptimeSeconds: number };
    assert.ok(uptimeSeconds > 0 && uptimeSeconds <= process.uptime(), `uptimeSeconds ${uptimeSeconds}`);
    const missing = await request(app).post("/other").send({}).expect(404);
    assert.match((missing.body as { message: string }).message, /POST \/ takes an AdmissionReview/);
    await request(app).get("/").expect(404);
  });

  it("answers the readiness probe itself, with a query and on HEAD, as express's route did", async () => {
    const { log } = capturingLog("info");
    const app = createApp(echo, log);
    const probe = await request(app).get("/healthz?full=1").expect(200, "ok");
    assert.equal(probe.headers["content-type"], "text/plain; charset=utf-8");
    const head = await request(app).head("/healthz").expect(200);
    assert.equal(head.headers["content-length"], "2");
    await request(app).post("/healthz").send({}).expect(404);
  });
});
