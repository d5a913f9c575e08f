// The Knative adapter: an HTTP server around one ReviewHandler. POST / takes the review, GET /healthz says
// ready. It translates and nothing else: a well-formed review always gets 200 with the handler's answer;
// HTTP errors are for transport only (400 bad JSON, 413 too large, 500 anything unexpected), as JSON.

import type { Server } from "node:http";
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import type { ReviewHandler } from "../shared/admission.js";
import type { Logger } from "../shared/log.js";

// A pod with large env/config can exceed express's 100kb default; the API server caps objects at ~3 MiB.
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads and parses the JSON body ourselves: one pass, one limit, and clear 400/413 answers. */
function jsonBody(limit: number): RequestHandler {
  return (req, _res, next) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > limit) {
      next(new HttpError(413, `request body exceeds ${limit} bytes`));
      req.resume();
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
        next(new HttpError(413, `request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", (err) => {
      if (!failed) {
        failed = true;
        next(err);
      }
    });
    req.on("end", () => {
      if (failed) return;
      try {
        req.body = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
      } catch (err) {
        failed = true;
        next(new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`));
        return;
      }
      next();
    });
  };
}

function jsonErrors(log: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const status = err instanceof HttpError ? err.status : 500;
    if (status === 500) log.error({ err }, "request failed");
    else log.warn({ status, reason: err.message }, "bad request");
    res.status(status).json({ message: status === 500 ? "internal error" : err.message });
  };
}

export interface AppOptions {
  /** Counters the function keeps (decisions by reason, clones created); served at GET /stats with the RSS. */
  stats?: () => Record<string, unknown>;
}

export function createApp(handle: ReviewHandler, log: Logger, options: AppOptions = {}): Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok");
  });
  app.get("/stats", (_req, res) => {
    res.json({ ...(options.stats?.() ?? {}), rssBytes: process.memoryUsage().rss });
  });
  app.post("/", jsonBody(MAX_BODY_BYTES), async (req, res, next) => {
    try {
      res.json(await handle(req.body));
    } catch (err) {
      next(err);
    }
  });
  app.use((_req, res) => {
    res
      .status(404)
      .json({ message: "not found: POST / takes an AdmissionReview, GET /healthz reports readiness" });
  });
  app.use(jsonErrors(log));
  return app;
}

/** Listens on 0.0.0.0:port (0 picks a free one); resolves once listening, so a listening server is a ready one. */
export function listen(app: Express, port: number, host = "0.0.0.0"): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    // Knative's queue-proxy keeps connections alive; outlive its idle timeout so it never races a close.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
  });
}
