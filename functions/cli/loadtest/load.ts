// The load loop: POST prepared AdmissionReviews to a function over keep-alive connections, `concurrency` at a
// time, check every answer, record latencies. Also reads the function's GET /stats. The answer checks and
// the percentile maths are pure and exported for tests; everything else here is I/O.

import http from "node:http";
import https from "node:https";
import { performance } from "node:perf_hooks";
import { isRecord } from "../../../shared/base/index.js";

/** Why one review counts as an error (see checkAnswer). */
export type ErrorKind =
  | "http-status"
  | "transport"
  | "timeout"
  | "not-a-review"
  | "uid-mismatch"
  | "not-allowed"
  | "patch"
  /** Still in flight when the overall deadline passed. */
  | "deadline";

export interface LoadRequest {
  /** The serialized AdmissionReview. */
  body: Buffer;
  /** request.uid, which the answer must echo. */
  uid: string;
}

export interface AnswerCheckOptions {
  /** A patch on DELETE fails the delete with a 500 in the API server, so by default any patch is an error. */
  allowPatch?: boolean;
}

export interface CheckedAnswer {
  error?: ErrorKind;
  detail?: string;
}

/** Pure: does this HTTP answer admit the review the way the API server needs it to? */
export function checkAnswer(
  status: number,
  body: string,
  uid: string,
  options: AnswerCheckOptions = {},
): CheckedAnswer {
  if (status !== 200) return { error: "http-status", detail: `HTTP ${status}: ${body.slice(0, 200)}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { error: "not-a-review", detail: `body is not JSON: ${body.slice(0, 200)}` };
  }
  if (!isRecord(parsed) || parsed.kind !== "AdmissionReview" || !isRecord(parsed.response)) {
    return {
      error: "not-a-review",
      detail: `body is not an AdmissionReview with a response: ${body.slice(0, 200)}`,
    };
  }
  const response = parsed.response;
  if (response.uid !== uid) {
    return { error: "uid-mismatch", detail: `expected uid ${uid}, got ${String(response.uid)}` };
  }
  if (response.allowed !== true) {
    const status = isRecord(response.status) ? response.status : {};
    return { error: "not-allowed", detail: `denied: ${String(status.message ?? "no message")}` };
  }
  if (!options.allowPatch && (response.patch !== undefined || response.patchType !== undefined)) {
    return { error: "patch", detail: "the answer carries a patch; the API server fails a DELETE with it" };
  }
  return {};
}

/** Pure: the p-th percentile (0..100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  const index = Math.min(sorted.length - 1, Math.max(0, rank - 1));
  return sorted[index] as number;
}

export interface LoadOptions {
  /** Where reviews are POSTed (http:// or https://). */
  target: URL;
  requests: readonly LoadRequest[];
  concurrency: number;
  /** Overall bound: no new request after it, and requests still in flight are abandoned. */
  timeoutMs: number;
  /** Per-request bound; the API server's default webhook timeout is 10 s. */
  requestTimeoutMs?: number;
  check?: AnswerCheckOptions;
  /** Skip TLS certificate checks (self-signed certificates on test clusters). */
  insecure?: boolean;
  /** https: the CA to trust and the name to send as SNI, when the target is an address (an ingress's pod). */
  tls?: { ca?: string; servername?: string };
  /** Extra request headers, e.g. the Host an ingress routes by. */
  headers?: Record<string, string>;
  /** Called after each answered or failed request. */
  onProgress?: (done: number, total: number) => void;
  /** How many error details to keep; default 10. */
  maxErrorSamples?: number;
}

export interface LoadResult {
  total: number;
  /** Requests started (not started: the deadline passed first). */
  sent: number;
  ok: number;
  errors: number;
  errorsByKind: Partial<Record<ErrorKind, number>>;
  errorSamples: string[];
  /** Milliseconds, ascending, one per request that got a whole HTTP answer (errors included). */
  latenciesMs: Float64Array;
  durationMs: number;
  /** True when the overall timeout stopped the run. */
  timedOut: boolean;
}

interface Attempt {
  status?: number;
  body?: string;
  failure?: "transport" | "timeout" | "deadline";
  message?: string;
  latencyMs: number;
}

function isTls(target: URL): boolean {
  return target.protocol === "https:";
}

export function validateTarget(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `target is not a URL: ${raw}`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `target must be an http:// or https:// URL, got ${url.protocol}`;
  }
  return url;
}

/** One run's connections and everything it counts; the workers share it. */
interface LoadRun {
  options: LoadOptions;
  total: number;
  requestTimeoutMs: number;
  maxSamples: number;
  agent: http.Agent;
  send: typeof http.request;
  latencies: Float64Array;
  answered: number;
  next: number;
  sent: number;
  ok: number;
  errors: number;
  done: number;
  timedOut: boolean;
  errorsByKind: Partial<Record<ErrorKind, number>>;
  errorSamples: string[];
  inFlight: Set<http.ClientRequest>;
}

function startRun(options: LoadOptions, concurrency: number): LoadRun {
  const total = options.requests.length;
  const tls = isTls(options.target);
  const agentOptions = { keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency };
  const agent = tls
    ? new https.Agent({ ...agentOptions, ...options.tls, rejectUnauthorized: !options.insecure })
    : new http.Agent(agentOptions);
  return {
    options,
    total,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    maxSamples: options.maxErrorSamples ?? 10,
    agent,
    send: tls ? https.request : http.request,
    latencies: new Float64Array(total),
    answered: 0,
    next: 0,
    sent: 0,
    ok: 0,
    errors: 0,
    done: 0,
    timedOut: false,
    errorsByKind: {},
    errorSamples: [],
    inFlight: new Set<http.ClientRequest>(),
  };
}

function recordError(run: LoadRun, kind: ErrorKind, detail: string): void {
  run.errors += 1;
  run.errorsByKind[kind] = (run.errorsByKind[kind] ?? 0) + 1;
  if (run.errorSamples.length < run.maxSamples) run.errorSamples.push(`${kind}: ${detail}`);
}

/** A connection failure after the overall deadline is the deadline's doing, not the function's. */
function brokenBy(run: LoadRun): "deadline" | "transport" {
  return run.timedOut ? "deadline" : "transport";
}

/** POSTs one review; resolves (never rejects) with its answer or why there was none. */
function postReview(run: LoadRun, request: LoadRequest): Promise<Attempt> {
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const finish = (result: Omit<Attempt, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.inFlight.delete(req);
      resolve({ ...result, latencyMs: performance.now() - started });
    };
    const req = run.send(
      run.options.target,
      {
        method: "POST",
        agent: run.agent,
        headers: {
          ...run.options.headers,
          "content-type": "application/json",
          "content-length": request.body.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", (err) => finish({ failure: brokenBy(run), message: err.message }));
        res.on("close", () => {
          if (!res.complete) finish({ failure: brokenBy(run), message: "answer cut short" });
        });
      },
    );
    const timer = setTimeout(() => {
      finish({ failure: "timeout", message: `no answer within ${run.requestTimeoutMs} ms` });
      req.destroy();
    }, run.requestTimeoutMs);
    req.on("error", (err) => finish({ failure: brokenBy(run), message: err.message }));
    run.inFlight.add(req);
    req.end(request.body);
  });
}

function recordResult(run: LoadRun, request: LoadRequest, result: Attempt): void {
  if (result.failure) {
    recordError(run, result.failure, result.message ?? result.failure);
  } else {
    run.latencies[run.answered++] = result.latencyMs;
    const checked = checkAnswer(result.status ?? 0, result.body ?? "", request.uid, run.options.check);
    if (checked.error) recordError(run, checked.error, checked.detail ?? checked.error);
    else run.ok += 1;
  }
  run.done += 1;
  run.options.onProgress?.(run.done, run.total);
}

/** One of `concurrency` loops: takes the next review until none is left or the deadline passed. */
async function worker(run: LoadRun): Promise<void> {
  while (!run.timedOut && run.next < run.total) {
    const request = run.options.requests[run.next++] as LoadRequest;
    run.sent += 1;
    const result = await postReview(run, request);
    recordResult(run, request, result);
  }
}

/** Runs the load; never rejects (failures are counted), and always resolves within about timeoutMs. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const total = options.requests.length;
  const concurrency = Math.max(1, Math.min(options.concurrency, total || 1));
  const run = startRun(options, concurrency);
  const started = performance.now();
  const deadline = setTimeout(() => {
    run.timedOut = true;
    for (const req of run.inFlight) req.destroy(new Error("overall timeout reached"));
  }, options.timeoutMs);
  try {
    await Promise.all(Array.from({ length: concurrency }, () => worker(run)));
  } finally {
    clearTimeout(deadline);
    run.agent.destroy();
  }
  const durationMs = performance.now() - started;
  const sorted = run.latencies.slice(0, run.answered).sort();
  const { sent, ok, errors, errorsByKind, errorSamples, timedOut } = run;
  return { total, sent, ok, errors, errorsByKind, errorSamples, latenciesMs: sorted, durationMs, timedOut };
}

/** GET /stats next to the target (same path prefix): the function's counters and RSS, or undefined. */
export function statsUrl(target: URL): URL {
  const base = new URL(target.href);
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  base.search = "";
  return new URL("stats", base);
}

export interface StatsOptions {
  timeoutMs?: number;
  insecure?: boolean;
}

/** The function's GET /stats as JSON, or undefined when it is absent, not JSON, or does not answer in time. */
export function fetchStats(
  url: URL,
  options: StatsOptions = {},
): Promise<Record<string, unknown> | undefined> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const tls = isTls(url);
  const get = tls ? https.get : http.get;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: Record<string, unknown> | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const req = get(
      url,
      { agent: false, ...(tls ? { rejectUnauthorized: !options.insecure } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", () => finish(undefined));
        res.on("end", () => {
          if (res.statusCode !== 200) return finish(undefined);
          try {
            const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            finish(isRecord(parsed) ? parsed : undefined);
          } catch {
            finish(undefined);
          }
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(undefined);
    }, timeoutMs);
    req.on("error", () => finish(undefined));
  });
}
