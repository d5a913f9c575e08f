// The Knative adapter: an HTTP server around one ReviewHandler. POST / takes the review, GET /healthz says
// ready, GET /stats serves the counters. It translates and nothing else: a well-formed review always gets 200
// with the handler's answer; HTTP errors are for transport only (400 bad JSON or no uid to answer, 413 too
// large, 500 anything unexpected), always as JSON.
//
// POST / is answered straight from node:http; express serves every other route. Measured with the teardown
// burst: a trivial handler behind express's router and res.json reached ~0.6 of a bare node:http server,
// the same handler on this path ~1.0. The review route is the only hot one, so it is the only one we hand-write.

import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import express, { type ErrorRequestHandler } from "express";
import { type ReviewHandler, UnanswerableReviewError } from "../../shared/admission.js";
import type { Logger } from "../../shared/log.js";

// A pod with large env/config can exceed express's 100kb default; the API server caps objects at ~3 MiB.
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface AppOptions {
  /** Counters the function keeps (decisions by reason, clones created); served at GET /stats with the RSS. */
  stats?: () => Record<string, unknown>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** Reads the whole body within `limit` bytes and parses it as JSON. */
function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers["content-length"]) > limit) {
      req.resume();
      reject(new HttpError(413, `request body exceeds ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new HttpError(413, `request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", (err) => {
      if (!failed) {
        failed = true;
        reject(err);
      }
    });
    req.on("end", () => {
      if (failed) return;
      const text =
        chunks.length === 1
          ? (chunks[0] as Buffer).toString("utf8")
          : Buffer.concat(chunks, size).toString("utf8");
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`));
      }
    });
  });
}

function sendError(res: ServerResponse, err: unknown, log: Logger): void {
  const status = err instanceof HttpError ? err.status : err instanceof UnanswerableReviewError ? 400 : 500;
  if (status === 500) log.error({ err }, "request failed");
  else log.warn({ status, reason: (err as Error).message }, "bad request");
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A 413 answered before the body was read: close, or the client may keep streaming into a dead request.
  if (status === 413) res.setHeader("connection", "close");
  sendJson(res, status, { message: status === 500 ? "internal error" : (err as Error).message });
}

function reviewRoute(handle: ReviewHandler, log: Logger): RequestListener {
  return (req, res) => {
    readJson(req, MAX_BODY_BYTES)
      .then(handle)
      .then(
        (review) => sendJson(res, 200, review),
        (err: unknown) => sendError(res, err, log),
      );
  };
}

function isReviewRequest(req: IncomingMessage): boolean {
  if (req.method !== "POST") return false;
  const url = req.url ?? "";
  return url === "/" || url.startsWith("/?");
}

export function createApp(handle: ReviewHandler, log: Logger, options: AppOptions = {}): RequestListener {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok");
  });
  app.get("/stats", (_req, res) => {
    res.json({ ...(options.stats?.() ?? {}), rssBytes: process.memoryUsage().rss });
  });
  app.use((_req, res) => {
    res
      .status(404)
      .json({ message: "not found: POST / takes an AdmissionReview, GET /healthz reports readiness" });
  });
  const jsonErrors: ErrorRequestHandler = (err, _req, res, _next) => sendError(res, err, log);
  app.use(jsonErrors);

  const reviews = reviewRoute(handle, log);
  return (req, res) => {
    if (isReviewRequest(req)) reviews(req, res);
    else app(req, res);
  };
}

/** Listens on host:port (0 picks a free one); resolves once listening, so a listening server is a ready one. */
export function listen(app: RequestListener, port: number, host = "0.0.0.0"): Promise<Server> {
  const server = createServer(app);
  // Knative's queue-proxy keeps connections alive; outlive its idle timeout so it never races a close.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
