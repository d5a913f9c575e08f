// What the bench's reference servers share: a bare node:http server that reads the whole body, parses it as
// JSON and answers with what `answer` makes of it. No express, no handler framework, no API calls. Started
// like the functions (a child process, PORT from the environment, listening on 0.0.0.0), serving GET
// /healthz and GET /stats (its RSS) as they do, so every number is measured the same way for all of them.
// With batchWrites it writes its answers as the functions do (write-batch.ts), so a reference server can be
// compared with them with or without that difference. With TLS_CERT_FILE and TLS_KEY_FILE it serves https, as
// `serve --tls-cert --tls-key` does (bench:vs-simkube's floor over TLS).

import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { createWriteBatch } from "../../functions/runtime/write-batch.js";
import type { Answer } from "./answers.js";

function send(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export interface MinimalOptions {
  /** Write answers as functions/runtime/http-server.ts does: together, after the turn's reviews (write-batch.ts). */
  batchWrites?: boolean;
}

export function serveMinimal(answer: Answer, options: MinimalOptions = {}): void {
  const port = Number(process.env.PORT ?? 8080);
  const writeLater = options.batchWrites
    ? createWriteBatch((err) => process.stderr.write(`could not write an answer: ${String(err)}\n`))
    : undefined;
  const listener: http.RequestListener = (req, res) => {
    if (req.method === "GET") {
      if (req.url === "/healthz") return send(res, 200, '"ok"');
      if (req.url === "/stats")
        return send(res, 200, JSON.stringify({ rssBytes: process.memoryUsage().rss }));
      return send(res, 404, '{"message":"not found"}');
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return send(res, 400, '{"message":"request body is not valid JSON"}');
      }
      let text: string;
      try {
        text = answer(body);
      } catch (err) {
        return send(res, 400, JSON.stringify({ message: (err as Error).message }));
      }
      if (writeLater) writeLater(() => send(res, 200, text));
      else send(res, 200, text);
    });
  };
  const { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } = process.env;
  const server =
    cert && key
      ? https.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, listener)
      : http.createServer(listener);
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
