// The benchmark baseline: a bare node:http server that parses the JSON body and admits the review, echoing
// its uid. No express, no handler, no API calls: what any admission webhook in Node costs at the least.
// Started like the functions (a child process, PORT from the environment, listening on 0.0.0.0), and it
// serves GET /stats with its RSS as they do, so every number is measured the same way for both.

import http from "node:http";

const port = Number(process.env.PORT ?? 8080);

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) serve();

function serve(): void {
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      if (req.url === "/healthz") return send(res, 200, "ok");
      if (req.url === "/stats") return send(res, 200, { rssBytes: process.memoryUsage().rss });
      return send(res, 404, { message: "not found" });
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let review: { request?: { uid?: unknown } };
      try {
        review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return send(res, 400, { message: "request body is not valid JSON" });
      }
      const uid = typeof review?.request?.uid === "string" ? review.request.uid : "";
      send(res, 200, {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: { uid, allowed: true },
      });
    });
  });
  // As functions/runtime/http-server.ts does: outlive the client's idle keep-alive.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.listen(port, "0.0.0.0");

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
