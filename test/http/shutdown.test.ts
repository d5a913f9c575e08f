// SIGTERM as `simkube-fn serve` handles it (drainAndClose): with 200 reviews in flight on keep-alive
// connections and a slow handler, every review is answered and the server is done as soon as the grace has
// passed and the last answer is out, not after the 10 s cap. Before: server.close() at once (reviews still
// queued got ECONNRESET) and a wait for keep-alive sockets that only the 10 s cap ended. A review written onto
// an idle kept-alive connection just before the SIGTERM is answered too (it once got ECONNRESET, as the drain
// closed idle connections at once).

import assert from "node:assert/strict";
import { Agent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import {
  createApp,
  drainAndClose,
  KEEP_ALIVE_GRACE_MS,
  listen,
} from "../../functions/runtime/http-server.js";
import {
  type AdmissionReview,
  allow,
  parseReview,
  type ReviewHandler,
  rejectReview,
} from "../../shared/admission/review.js";
import { silentLog } from "../support/logs.js";

const quiet = silentLog();
const REVIEWS = 200;
/** Far below the 10 s cap the old shutdown waited for; far above what draining takes here after the grace. */
const PROMPT_MS = KEEP_ALIVE_GRACE_MS + 2_000;

function slowHandler() {
  let entered = 0;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handle: ReviewHandler = async (body) => {
    entered += 1;
    await gate;
    const parsed = parseReview(body);
    return parsed.ok ? allow(parsed.request) : rejectReview(parsed);
  };
  return { handle, entered: () => entered, release };
}

interface Answer {
  status: number;
  uid: string | undefined;
  connection: string | undefined;
}

/** POSTs one review; `onSent` is called once the whole request is handed to the kernel. */
function post(agent: Agent, port: number, uid: string, onSent?: () => void): Promise<Answer> {
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid },
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/",
        method: "POST",
        agent,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            uid: (JSON.parse(text) as AdmissionReview).response?.uid,
            connection: res.headers.connection,
          }),
        );
      },
    );
    req.on("error", reject);
    if (onSent) req.once("finish", onSent);
    req.end(body);
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A server whose handler answers at once, on 127.0.0.1. */
async function answeringServer() {
  const { handle, release } = slowHandler();
  release();
  return listen(createApp(handle, quiet), 0, "127.0.0.1");
}

/** Sends REVIEWS reviews, starts the shutdown once `ready` holds, releases the handler a little later. */
async function shutdownUnderLoad(ready: (entered: number) => boolean) {
  const { handle, entered, release } = slowHandler();
  const server = await listen(createApp(handle, quiet), 0, "127.0.0.1");
  const port = (server.address() as AddressInfo).port;
  // Keep-alive, as Knative's queue-proxy connects: after its answer each socket would idle in keep-alive.
  const agent = new Agent({ keepAlive: true, maxSockets: REVIEWS });
  try {
    const answers = Array.from({ length: REVIEWS }, (_, i) => post(agent, port, `review-${i}`));
    await until(() => ready(entered()), "reviews to reach the handler");
    const started = performance.now();
    const drained = drainAndClose(server, 10_000);
    setTimeout(release, 100); // the slow handler answers only after the shutdown began
    const results = await Promise.allSettled(answers);
    const outcome = await drained;
    return { results, outcome, elapsedMs: performance.now() - started };
  } finally {
    release();
    agent.destroy();
    server.close();
  }
}

function assertAllAnswered(results: PromiseSettledResult<Answer>[]): void {
  const failed = results
    .filter((r) => r.status === "rejected")
    .map((r) => String((r as PromiseRejectedResult).reason));
  assert.deepEqual(failed, [], "no review lost to a reset connection");
  const answered = results.map((r) => (r as PromiseFulfilledResult<Answer>).value);
  assert.equal(answered.filter((a) => a.status === 200).length, REVIEWS);
  assert.deepEqual(new Set(answered.map((a) => a.uid)).size, REVIEWS, "each review got its own answer");
}

describe("graceful shutdown (SIGTERM)", () => {
  it(`answers all ${REVIEWS} reviews in flight, then is done at once despite keep-alive sockets`, async () => {
    const { results, outcome, elapsedMs } = await shutdownUnderLoad((n) => n === REVIEWS);
    assertAllAnswered(results);
    assert.equal(outcome, "drained");
    assert.ok(elapsedMs < PROMPT_MS, `drained after ${elapsedMs.toFixed(0)} ms`);
  });

  it("answers reviews still queued when the shutdown starts (connections not yet read)", async () => {
    const { results, outcome, elapsedMs } = await shutdownUnderLoad((n) => n >= 1);
    assertAllAnswered(results);
    assert.equal(outcome, "drained");
    assert.ok(elapsedMs < PROMPT_MS, `drained after ${elapsedMs.toFixed(0)} ms`);
  });

  it("an idle server closes its idle keep-alive sockets as soon as the grace has passed", async () => {
    const server = await answeringServer();
    const agent = new Agent({ keepAlive: true });
    try {
      const port = (server.address() as AddressInfo).port;
      await Promise.all([post(agent, port, "a"), post(agent, port, "b")]);
      const started = performance.now();
      assert.equal(await drainAndClose(server, 10_000), "drained");
      const elapsed = performance.now() - started;
      assert.ok(
        elapsed >= KEEP_ALIVE_GRACE_MS - 5,
        `closed after ${elapsed.toFixed(0)} ms, before the grace`,
      );
      assert.ok(elapsed < KEEP_ALIVE_GRACE_MS + 1_000, `closed after ${elapsed.toFixed(0)} ms`);
    } finally {
      agent.destroy();
    }
  });

  it("answers a review written onto an idle keep-alive connection just before the SIGTERM", async () => {
    const server = await answeringServer();
    // One socket, so the second review goes onto the connection the first one left idle in keep-alive.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const port = (server.address() as AddressInfo).port;
      const first = await post(agent, port, "first");
      assert.notEqual(first.connection, "close");
      let drained: Promise<string> | undefined;
      // The SIGTERM lands once the review is in the kernel, before the server's event loop has read it: what
      // the API server met when it reused a connection as the kubelet stopped the pod.
      const second = await post(agent, port, "second", () => {
        drained = drainAndClose(server, 10_000);
      });
      assert.equal(second.status, 200);
      assert.equal(second.uid, "second");
      assert.equal(second.connection, "close", "answered, and the connection is not reused");
      assert.equal(await drained, "drained");
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it("answers a review on a new connection during the grace, and refuses connections after it", async () => {
    const server = await answeringServer();
    const agent = new Agent({ keepAlive: true });
    try {
      const port = (server.address() as AddressInfo).port;
      const drained = drainAndClose(server, 10_000);
      // A caller whose list of endpoints still holds the pod (the API server's lags its deletion) connects anew.
      await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_GRACE_MS / 2));
      const late = await post(agent, port, "late");
      assert.equal(late.status, 200);
      assert.equal(late.uid, "late");
      assert.equal(late.connection, "close");
      assert.equal(await drained, "drained");
      await assert.rejects(post(agent, port, "after"), /ECONNREFUSED/, "the listener is closed once drained");
    } finally {
      agent.destroy();
      server.close();
    }
  });

  it("finishes an answer whose headers were already out when the shutdown began, then closes", async () => {
    let finish: (() => void) | undefined;
    const server = await listen(
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("first half, ");
        finish = () => res.end("second half");
      },
      0,
      "127.0.0.1",
    );
    const agent = new Agent({ keepAlive: true });
    try {
      const port = (server.address() as AddressInfo).port;
      const body = new Promise<string>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve(text));
        });
        req.on("error", reject);
        req.end();
      });
      await until(() => finish !== undefined, "the answer's headers to be out");
      const started = performance.now();
      const drained = drainAndClose(server, 10_000);
      setTimeout(() => finish?.(), 100);
      assert.equal(await body, "first half, second half");
      assert.equal(await drained, "drained", "its keep-alive socket was closed once the answer was out");
      assert.ok(performance.now() - started < PROMPT_MS);
    } finally {
      finish?.();
      agent.destroy();
      server.close();
    }
  });
});

// The drain reads what node:http keeps on a socket; if a Node release changed it, this says so first.
describe("node:http's socket state that the drain relies on", () => {
  it("keeps the response being written on its socket (_httpMessage) until it finishes", async () => {
    const seen: { during?: boolean; after?: unknown } = {};
    const server = await listen(
      (req, res) => {
        const socket = req.socket as unknown as { _httpMessage?: unknown };
        seen.during = socket._httpMessage === res;
        res.on("finish", () => setImmediate(() => (seen.after = socket._httpMessage)));
        res.end("ok");
      },
      0,
      "127.0.0.1",
    );
    const agent = new Agent({ keepAlive: true });
    try {
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
          res.resume();
          res.on("end", () => resolve());
        });
        req.on("error", reject);
        req.end();
      });
      await until(() => "after" in seen, "the response to finish");
      assert.equal(seen.during, true);
      assert.equal(seen.after, null);
    } finally {
      agent.destroy();
      await drainAndClose(server, 2_000, 0);
    }
  });
});
