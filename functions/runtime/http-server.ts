// The Knative adapter: an HTTP server around one ReviewHandler. POST / takes the review, GET /healthz says
// the process answers (liveness), GET /readyz whether it can work (readiness.ts), GET /stats serves the
// counters (behind the same check as reviews), GET /metrics the same counts and more for Prometheus (open,
// like the probes: it names no one). It translates and
// nothing else: a well-formed review always gets 200 with the handler's answer; HTTP errors are for transport
// only (400 bad JSON or no uid to answer, 413 too large, 500 anything unexpected), always as JSON.
//
// POST / and the GET /healthz and /readyz probes are answered straight from node:http; express serves every other route.
// Measured with the teardown burst: a trivial handler behind express's router and res.json reached ~0.6 of a
// bare node:http server, the same handler on this path ~1.0. express is loaded on the first request that needs
// it, so a cold start (spawn, readiness probe, first review) never evaluates it: ~20 ms of CPU less per start.
//
// Who may call: with a path secret (WEBHOOK_PATH_SECRET) reviews are taken only at POST /<secret>, compared in
// constant time; with a client CA (CLIENT_CA_FILE, https only) only from a caller whose certificate that CA
// signed. GET /stats is guarded alike (GET /<secret>/stats). Everything else about a review is the handler's
// business.

import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { ErrorRequestHandler } from "express";
import {
  type AdmissionReview,
  type ReviewHandler,
  reviewJson,
  UnanswerableReviewError,
} from "../../shared/admission/index.js";
import type { Logger } from "../../shared/base/index.js";
import type { ClientCertSubject } from "../../shared/config/index.js";
import { certificateMatches } from "./client-cert.js";
import { type FunctionMetrics, reviewOutcome } from "./metrics.js";
import { reviewPathCheck } from "./path-secret.js";
import type { Readiness } from "./readiness.js";
import { createWriteBatch } from "./write-batch.js";

// A pod with large env/config can exceed express's 100kb default; the API server caps objects at ~3 MiB.
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface AppOptions {
  /**
   * Counters the function keeps (decisions by reason, clones created); served with the RSS at GET /stats, or
   * GET /<pathSecret>/stats, to callers that pass the same checks as reviews.
   */
  stats?: () => Record<string, unknown>;
  /** Take reviews only at POST /<pathSecret>; POST / then gets the same 404 as any unknown path. */
  pathSecret?: string;
  /** Take reviews only over a TLS connection whose client certificate the server's client CA verified. */
  requireClientCert?: boolean;
  /** With requireClientCert: only a certificate naming one of these (CLIENT_CERT_SUBJECTS; client-cert.ts). */
  clientCertSubjects?: readonly ClientCertSubject[];
  /** Prometheus metrics: every review is timed into them, GET /metrics serves them (open, like /healthz). */
  metrics?: FunctionMetrics;
  /** Called as each review arrives (idle-memory.ts's collectWhenIdle watches for the end of a burst). */
  onReview?: () => void;
  /** GET /readyz answers from it (200 ok, 503 not ready); without it /readyz answers as /healthz does. */
  readiness?: Readiness;
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
  sendText(res, status, JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

type BodyCallback = (err: unknown, body?: unknown) => void;

/**
 * How much of an oversized body is read and thrown away before its 413 is sent. Answering and closing while
 * the body still arrives resets the connection, and a caller that writes its whole body before reading (the
 * API server's Go client, curl) then sees EPIPE instead of the 413. Past this, or after DRAIN_TIMEOUT_MS, the
 * 413 goes out anyway and the connection is closed: a caller that will not stop gets no more of our time.
 */
export const MAX_DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_TIMEOUT_MS = 5_000;

/** Reads the rest of an oversized body (`seen` bytes so far) up to the bounds, then calls `done` with the 413. */
function refuseOversized(req: IncomingMessage, seen: number, limit: number, done: BodyCallback): void {
  let read = seen;
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    clearTimeout(timer);
    req.off("data", onData).off("end", finish).off("close", finish).off("error", finish);
    done(new HttpError(413, `request body exceeds ${limit} bytes`));
  };
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_DRAIN_BYTES) finish();
  };
  if (req.complete || Number(req.headers["content-length"]) > MAX_DRAIN_BYTES) {
    finish();
    return;
  }
  timer = setTimeout(finish, DRAIN_TIMEOUT_MS);
  req.on("data", onData).on("end", finish).on("close", finish).on("error", finish);
  req.resume();
}

/**
 * Reads the whole body within `limit` bytes and parses it as JSON, calling `done` once. A callback, not a
 * promise: the review path then pays for one promise (the handler's) instead of three.
 */
function readJson(req: IncomingMessage, limit: number, done: BodyCallback): void {
  if (Number(req.headers["content-length"]) > limit) {
    refuseOversized(req, 0, limit, done);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else {
      req.off("data", onData).off("error", onError).off("end", onEnd);
      chunks.length = 0;
      refuseOversized(req, size, limit, done);
    }
  };
  const onError = (err: unknown) => {
    req.off("data", onData).off("end", onEnd);
    done(err);
  };
  const onEnd = () => {
    let body: unknown;
    try {
      body = parseBody(chunks, size);
    } catch (err) {
      done(err);
      return;
    }
    done(null, body);
  };
  req.on("data", onData).on("error", onError).on("end", onEnd);
}

function parseBody(chunks: Buffer[], size: number): unknown {
  const text =
    chunks.length === 1
      ? (chunks[0] as Buffer).toString("utf8")
      : Buffer.concat(chunks, size).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The answer to a caller that failed authentication (wrong path 404, no verified certificate 403): nothing
 * more of its request is read. `Connection: close` makes node:http end the socket once the answer is out,
 * and the socket stops reading now, so a body that keeps coming is never drained into this process.
 */
export function refuseCaller(res: ServerResponse, status: 403 | 404, message: string): void {
  res.setHeader("connection", "close");
  sendJson(res, status, { message });
}

function sendError(res: ServerResponse, err: unknown, log: Logger): void {
  const status = err instanceof HttpError ? err.status : err instanceof UnanswerableReviewError ? 400 : 500;
  if (status === 500) log.error({ err }, "request failed");
  else log.warn({ status, reason: (err as Error).message }, "bad request");
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A 413 leaves the connection in an unknown state (a body perhaps not read to its end): close it.
  if (status === 413) res.setHeader("connection", "close");
  sendJson(res, status, { message: status === 500 ? "internal error" : (err as Error).message });
}

function reviewRoute(handle: ReviewHandler, log: Logger, options: AppOptions): RequestListener {
  const { metrics, onReview } = options;
  const writeLater = createWriteBatch((err) => log.error({ err }, "could not write an answer"));
  return (req, res) => {
    onReview?.();
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const fail = (err: unknown) => {
      sendError(res, err, log);
      metrics?.observeReview("error", seconds());
    };
    readJson(req, MAX_BODY_BYTES, (err, body) => {
      if (err) return fail(err);
      let answer: Promise<AdmissionReview>;
      try {
        answer = handle(body);
      } catch (thrown) {
        return fail(thrown);
      }
      answer.then((review) => {
        let text: string;
        try {
          text = reviewJson(review);
        } catch (thrown) {
          return fail(thrown);
        }
        const outcome = reviewOutcome(review);
        writeLater(() => {
          sendText(res, 200, text);
          metrics?.observeReview(outcome, seconds());
        });
      }, fail);
    });
  };
}

/** Whether a request is for the review route: POST to the one expected path (the query is ignored). */
function reviewRequestCheck(pathSecret: string | undefined): (req: IncomingMessage) => boolean {
  const isReviewPath = reviewPathCheck(pathSecret);
  return (req) => req.method === "POST" && isReviewPath(req.url ?? "");
}

function hasVerifiedClientCert(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).authorized === true;
}

/** Whether a request is for the counters: GET /stats, or GET /<secret>/stats with a path secret. */
function statsRequestCheck(pathSecret: string | undefined): (req: IncomingMessage) => boolean {
  const isStatsPath = reviewPathCheck(pathSecret === undefined ? "stats" : `${pathSecret}/stats`);
  return (req) => (req.method === "GET" || req.method === "HEAD") && isStatsPath(req.url ?? "");
}

function answerStats(res: ServerResponse, options: AppOptions): void {
  const memory = process.memoryUsage();
  sendJson(res, 200, {
    ...(options.stats?.() ?? {}),
    rssBytes: memory.rss,
    // What of the RSS is V8's heap, and what of that is live: tells a grown heap from a leak.
    heapTotalBytes: memory.heapTotal,
    heapUsedBytes: memory.heapUsed,
    // Seconds since the process started: with the cold start gauge, when it started and began to listen.
    uptimeSeconds: process.uptime(),
  });
}

/** Why a caller of the review or /stats is refused (403), or undefined when it proved itself. */
function callerRefusal(options: AppOptions, log: Logger): (req: IncomingMessage) => string | undefined {
  if (!options.requireClientCert) return () => undefined;
  const pinned = options.clientCertSubjects ?? [];
  return (req) => {
    const remote = req.socket.remoteAddress;
    if (!hasVerifiedClientCert(req)) {
      log.warn({ remote, url: req.url }, "no verified client certificate");
      return "a client certificate signed by the configured client CA is required";
    }
    if (pinned.length === 0) return undefined;
    const cert = (req.socket as TLSSocket).getPeerCertificate();
    if (certificateMatches(cert, pinned)) return undefined;
    log.warn({ remote, url: req.url, subject: cert.subject?.CN }, "client certificate not pinned");
    return "the client certificate names none of CLIENT_CERT_SUBJECTS";
  };
}

/** express for every GET but the review, the probe and /stats: /metrics, 404s and transport errors. */
function expressRoutes(express: typeof import("express"), log: Logger, options: AppOptions): RequestListener {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  const { metrics } = options;
  if (metrics) {
    app.get("/metrics", (_req, res, next) => {
      metrics.exposition().then((text) => res.type(metrics.contentType).send(text), next);
    });
  }
  app.use((_req, res) => refuseCaller(res, 404, NOT_FOUND));
  const jsonErrors: ErrorRequestHandler = (err, _req, res, _next) => sendError(res, err, log);
  app.use(jsonErrors);
  return app;
}

const NOT_FOUND =
  "not found: POST / takes an AdmissionReview, GET /healthz reports liveness, GET /readyz readiness";

/** Loads express on the first request that needs it: evaluating it was a large part of every cold start. */
function lazyExpressRoutes(log: Logger, options: AppOptions): RequestListener {
  let routes: Promise<RequestListener> | undefined;
  return (req, res) => {
    routes ??= import("express").then((express) => expressRoutes(express.default, log, options));
    routes.then(
      (listener) => listener(req, res),
      (err: unknown) => sendError(res, err, log),
    );
  };
}

type Probe = "live" | "ready";

/**
 * The probes, answered without express so a cold start never loads it: GET /healthz (live: the process
 * answers) and GET /readyz (ready: readiness.ts). Open to every caller, as kubelet and Knative's queue-proxy
 * probe without the path secret or a client certificate; they answer "ok" or "not ready" and nothing more.
 */
function probeOf(req: IncomingMessage): Probe | undefined {
  if (req.method !== "GET" && req.method !== "HEAD") return undefined;
  const url = req.url ?? "";
  const query = url.indexOf("?");
  const path = query === -1 ? url : url.slice(0, query);
  return path === "/healthz" ? "live" : path === "/readyz" ? "ready" : undefined;
}

function answerProbe(req: IncomingMessage, res: ServerResponse, ok: boolean): void {
  const text = ok ? "ok" : "not ready";
  res.writeHead(ok ? 200 : 503, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : text);
}

function probeRoute(
  readiness: Readiness | undefined,
): (probe: Probe, req: IncomingMessage, res: ServerResponse) => void {
  return (probe, req, res) => {
    if (probe === "live" || !readiness) return answerProbe(req, res, true);
    readiness.current().then(
      (verdict) => answerProbe(req, res, verdict.ready),
      () => answerProbe(req, res, false),
    );
  };
}

export function createApp(handle: ReviewHandler, log: Logger, options: AppOptions = {}): RequestListener {
  const others = lazyExpressRoutes(log, options);
  const reviews = reviewRoute(handle, log, options);
  const isReviewRequest = reviewRequestCheck(options.pathSecret);
  // /stats is behind the same check as reviews: at /<secret>/stats, and only for a verified caller.
  const isStatsRequest = statsRequestCheck(options.pathSecret);
  const refusal = callerRefusal(options, log);
  const probes = probeRoute(options.readiness);
  return (req, res) => {
    const probe = probeOf(req);
    if (probe) return probes(probe, req, res);
    const review = isReviewRequest(req);
    if (!review && !isStatsRequest(req)) {
      // Only GET and HEAD have routes besides the review; a body sent anywhere else is never read.
      if (req.method === "GET" || req.method === "HEAD") others(req, res);
      else refuseCaller(res, 404, NOT_FOUND);
      return;
    }
    const refused = refusal(req);
    if (refused !== undefined) refuseCaller(res, 403, refused);
    else if (review) reviews(req, res);
    else answerStats(res, options);
  };
}

/** PEM contents for https serving; with `ca`, clients are asked for a certificate that CA signed. */
export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

/**
 * What any caller may cost before it has proved who it is. A review is small and the API server sends it at
 * once; the webhook's own timeout is 30 s at most, so a request that takes longer to arrive is answered to
 * nobody. Measured with 2,000 hostile TLS connections to 127.0.0.1 (docs/safety.md): before these limits
 * they held ~+100 MiB for ~88 s (headers never ended) or indefinitely (a slow body after a 404).
 */
export interface ServerLimits {
  /** From a request's first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body. */
  requestTimeoutMs: number;
  /** https: from the connection to the end of the TLS handshake. */
  handshakeTimeoutMs: number;
  /** Open connections at most (MAX_CONNECTIONS); more are closed as they arrive. */
  maxConnections: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = {
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  handshakeTimeoutMs: 5_000,
  maxConnections: 1_000,
};

/** An http server, or an https one (asking for a client certificate when `tls.ca` is set), with `limits`. */
export function createAnyServer(tls: TlsMaterial | undefined, limits: Partial<ServerLimits> = {}): Server {
  const l = { ...DEFAULT_SERVER_LIMITS, ...limits };
  // Node checks the header and request timeouts every connectionsCheckingInterval (30 s by default, which
  // would let a 5 s limit hold a connection for 35 s).
  const http = {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, l.headersTimeoutMs),
  };
  let server: Server;
  if (!tls) server = createServer(http);
  else {
    // rejectUnauthorized false: the handshake still succeeds without a certificate, so kubelet probes reach
    // /healthz and /readyz; the review route itself refuses any caller the CA did not verify (createApp's requireClientCert).
    const credentials = tls.ca
      ? { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: false }
      : { cert: tls.cert, key: tls.key };
    const options = { ...credentials, ...http, handshakeTimeout: l.handshakeTimeoutMs };
    server = createHttpsServer(options) as unknown as Server;
  }
  server.maxConnections = l.maxConnections;
  // Knative's queue-proxy keeps connections alive; outlive its idle timeout so it never races a close. An idle
  // keep-alive connection is not a request, so the header and request timeouts above do not cut it.
  server.keepAliveTimeout = 65_000;
  return server;
}

/**
 * Listens on host:port (0 picks a free one), over https when `tls` is given; resolves once listening, so a
 * listening server is a ready one. Stop it with drainAndClose.
 */
export function listen(
  app: RequestListener,
  port: number,
  host = "0.0.0.0",
  tls?: TlsMaterial,
  limits: Partial<ServerLimits> = {},
): Promise<Server> {
  const server = createAnyServer(tls, limits);
  server.on("request", trackConnections(server).wrap(app));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Graceful shutdown. On SIGTERM every review already sent must be answered, including those on connections
// the kernel has queued but node has not read yet, and those the caller is writing onto a kept-alive
// connection right now. So from the SIGTERM on every answer says `Connection: close` (the caller then never
// reuses that connection), and the listener stays open while anything is in flight. A connection idling in
// keep-alive is not closed at once: the caller may have written its next review onto it a moment ago (in the
// kernel, not yet read), and closing it would lose that review: the API server reports EOF and, as its Go
// client never resends a POST, the CREATE fails. Such a connection is given KEEP_ALIVE_GRACE_MS to carry one
// more review (answered, then closed); after that it is closed, as a caller that has not used it meanwhile is
// not about to. The listener stays open for the grace too, so a caller that has not yet seen the endpoint go
// (the API server's endpoint list lags the pod's deletion) still connects. A connection that was accepted but
// has not sent its request yet is not idle in this sense: it is a queued review, and it is served.
//
// Per request this costs one property read (has the socket served before?) and one flag test: no listener,
// no set. The state of each socket is read when the drain starts and when the grace ends, from what
// node:http keeps on it: the response it is writing (`_httpMessage`, set from the request until the answer is
// out). Requests pipelined behind that response are not waited for (the API server's Go client never
// pipelines).

/**
 * How long after SIGTERM a kept-alive connection idle at that moment may still bring a review. The API server
 * reuses a connection within milliseconds during a burst; a second covers a busy event loop and the lag of
 * its endpoint list.
 */
export const KEEP_ALIVE_GRACE_MS = 1_000;

interface ConnectionTracker {
  /** Wraps the request listener: marks sockets that have served, and closes connections once draining. */
  wrap(app: RequestListener): RequestListener;
  drain(graceMs: number, onDrained: () => void): void;
}

const trackers = new WeakMap<Server, ConnectionTracker>();
const SERVED = Symbol("simkube-fn.served");

/** A socket as node:http leaves it: the response it is writing now, if any. */
type HttpSocket = Socket & { [SERVED]?: true; _httpMessage?: ServerResponse | null };

/** At the SIGTERM: a socket being answered closes once its answer is out. */
function closeWhenAnswered(socket: HttpSocket): void {
  const current = socket._httpMessage;
  if (!current) return; // idle, or accepted but not yet read from: its next request is answered with close
  // Still being answered (perhaps ended and flushing: node:http clears _httpMessage on "finish").
  if (!current.headersSent) current.setHeader("connection", "close");
  else current.once("close", () => socket.end());
}

/** When the grace ends: a served socket now idle brought nothing since, so closing it loses nothing. */
function closeIfIdle(socket: HttpSocket): void {
  if (!socket._httpMessage) socket.destroy();
}

function trackConnections(server: Server): ConnectionTracker {
  const open = new Set<Socket>();
  /** Sockets that carried a request (for https the TLS sockets, not the TCP ones "connection" saw). */
  const served = new Set<HttpSocket>();
  let draining = false;
  let graceOver = false;
  let onDrained: (() => void) | undefined;

  const checkDrained = () => {
    // After the poll phase (setImmediate): connections the kernel queued are accepted before we look.
    setImmediate(() => {
      if (graceOver && open.size === 0 && onDrained) {
        const done = onDrained;
        onDrained = undefined;
        done();
      }
    });
  };
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => {
      open.delete(socket);
      checkDrained();
    });
  });
  const firstRequest = (socket: HttpSocket) => {
    socket[SERVED] = true;
    served.add(socket);
    socket.once("close", () => served.delete(socket));
  };
  const tracker: ConnectionTracker = {
    wrap: (app) => (req, res) => {
      const socket = req.socket as HttpSocket;
      if (socket[SERVED] !== true) firstRequest(socket);
      if (draining) res.setHeader("connection", "close");
      app(req, res);
    },
    drain(graceMs, done) {
      draining = true;
      onDrained = done;
      for (const socket of served) closeWhenAnswered(socket);
      const endGrace = () => {
        graceOver = true;
        for (const socket of served) closeIfIdle(socket);
        checkDrained();
      };
      // Unref'd: the listener and the sockets keep the process alive as long as there is anything to wait for.
      setTimeout(endGrace, graceMs).unref();
    },
  };
  trackers.set(server, tracker);
  return tracker;
}

export type DrainOutcome = "drained" | "timed-out";

/**
 * Stops the server gracefully: answers everything in flight or queued, and every review that arrives on a
 * kept-alive connection or a new one within `graceMs`, then closes the listener. Resolves "drained" as soon as
 * the grace has passed and the last connection closed, or "timed-out" after `timeoutMs` if something hangs
 * (the server is then closed regardless; what is left is for the caller's exit to cut). A `graceMs` of 0 is
 * for a server no caller is still using (tests' clean-up).
 */
export function drainAndClose(
  server: Server,
  timeoutMs = 10_000,
  graceMs = KEEP_ALIVE_GRACE_MS,
): Promise<DrainOutcome> {
  return new Promise((resolve) => {
    const tracker = trackers.get(server);
    let settled = false;
    const finish = (outcome: DrainOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      server.close();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish("timed-out"), timeoutMs);
    timer.unref();
    if (tracker) tracker.drain(graceMs, () => finish("drained"));
    else server.close(() => finish("drained"));
  });
}
