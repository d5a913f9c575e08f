// The OpenFaaS adapter: the node20/node22 template's `module.exports = async (event, context) => ...`
// around one ReviewHandler. It translates and nothing else, like functions/runtime/http-server.ts does for Knative:
//   - event.body arrives parsed (JSON content type), as text (text/*) or as a Buffer (RAW_BODY=true);
//   - bad JSON, or a review with no uid to answer -> 400 {message}; a review -> 200 with the handler's answer as application/json
//     (without the content-type header the template sends a stringified object as text/html);
//   - the handler is built once, on the first call, and built again on the next call if building failed;
//   - it never throws: the template would answer 500 with err.toString() as plain text.
// The bundle (npm run bundle:openfaas) makes each entry in this folder (mutate-create.ts, reschedule-delete.ts) a CommonJS handler.js.

import { type ReviewHandler, UnanswerableReviewError } from "../../../shared/admission/index.js";
import { createLogger, errorMessage, type Logger, withDeadline } from "../../../shared/base/index.js";
import { type Env, type FunctionConfig, loadConfig } from "../../../shared/config/index.js";
import type { KubeApi } from "../../../shared/kube/index.js";
import { reviewPathCheck, withPathSecretFile } from "../path-secret.js";
import type { ReadinessVerdict } from "../readiness.js";

/** What the template passes as `event` (FunctionEvent). */
export interface OpenfaasEvent {
  body?: unknown;
  headers?: Record<string, string | string[] | undefined>;
  method?: string;
  path?: string;
  query?: unknown;
}

/** What the template passes as `context` (FunctionContext); status and headers are chainable. */
export interface OpenfaasContext {
  status(code: number): OpenfaasContext;
  headers(values: Record<string, string>): OpenfaasContext;
  succeed(value: unknown): void;
  fail(err: unknown): void;
}

export type OpenfaasHandler = (event: OpenfaasEvent, context: OpenfaasContext) => Promise<void>;

export interface OpenfaasAdapterOptions {
  /** Where adapter-level failures go (building the handler failed, the handler threw). Default: info to stdout. */
  log?: Logger;
  /**
   * Take reviews only at /<pathSecret>: the gateway forwards /function/<name>/<secret> to the function as
   * /<secret>. Any other path gets a 404 before the body is looked at. An Error (the secret file could not
   * be read) fails closed: every review gets a 500 with its message.
   */
  pathSecret?: string | Error;
  /** Called as each review is taken (the entries pass idle-memory.ts's collectWhenIdle, as `serve` does). */
  onReview?: () => void;
  /**
   * GET /readyz answers from it (200 ok, 503 not ready): the watchdog's /_/ready asks it when stack.yml sets
   * ready_path (openfaas-stack.ts). Without it /readyz answers ok, as every other GET does.
   */
  readiness?: () => Promise<ReadinessVerdict>;
}

const JSON_HEADERS = { "content-type": "application/json" };

export type DecodedBody = { ok: true; value: unknown } | { ok: false; message: string };

/** The review from whatever the template made of the body. */
export function decodeBody(body: unknown): DecodedBody {
  let text: string;
  if (Buffer.isBuffer(body)) text = body.toString("utf8");
  else if (typeof body === "string") text = body;
  else if (body === undefined || body === null) return { ok: false, message: "request body is empty" };
  else return { ok: true, value: body }; // already parsed by the template's JSON body parser
  if (text.trim() === "") return { ok: false, message: "request body is empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: `request body is not valid JSON: ${(err as Error).message}` };
  }
}

/** Builds the handler on first use; a failed build (missing SIM_NAME, trace not reachable) is retried on the next call, not cached. */
function lazyHandle(getHandle: () => Promise<ReviewHandler>): () => Promise<ReviewHandler> {
  let handle: Promise<ReviewHandler> | undefined;
  return () => {
    if (!handle) {
      const building = getHandle();
      handle = building;
      building.catch(() => {
        if (handle === building) handle = undefined;
      });
    }
    return handle;
  };
}

function lazyLog(options: OpenfaasAdapterOptions): () => Logger {
  let fallbackLog: Logger | undefined;
  return () => {
    if (options.log) return options.log;
    if (!fallbackLog) fallbackLog = createLogger("info").child({ adapter: "openfaas" });
    return fallbackLog;
  };
}

function reply(context: OpenfaasContext, status: number, value: unknown): void {
  context.status(status).headers(JSON_HEADERS).succeed(value);
}

interface Dispatch {
  handler: () => Promise<ReviewHandler>;
  log: () => Logger;
  secretError: Error | undefined;
  isReviewPath: (path: string) => boolean;
  onReview: (() => void) | undefined;
  readiness: (() => Promise<ReadinessVerdict>) | undefined;
}

/** Why a request other than GET is not a review to handle, as [HTTP status, message]. */
function refusalOf(method: string, event: OpenfaasEvent, d: Dispatch): [number, string] | undefined {
  if (method !== "POST") return [405, "POST an AdmissionReview; GET answers ok"];
  if (d.secretError) return [500, d.secretError.message];
  if (!d.isReviewPath(event.path ?? "/")) return [404, "not found"];
  return undefined;
}

/**
 * Answers every request that is not a review to handle (GET, other methods, a bad path or body) and
 * returns undefined; otherwise returns the decoded review, unanswered.
 */
function reviewBodyOf(
  event: OpenfaasEvent,
  context: OpenfaasContext,
  d: Dispatch,
): { value: unknown } | undefined {
  const method = (event.method ?? "POST").toUpperCase();
  if (method === "GET") {
    // The watchdog answers /_/health itself; this is for a person (or probe) calling the function.
    context.status(200).headers({ "content-type": "text/plain" }).succeed("ok");
    return undefined;
  }
  const refusal = refusalOf(method, event, d);
  if (refusal) {
    reply(context, refusal[0], { message: refusal[1] });
    return undefined;
  }
  const decoded = decodeBody(event.body);
  if (!decoded.ok) {
    reply(context, 400, { message: decoded.message });
    return undefined;
  }
  return decoded;
}

function isReadinessProbe(event: OpenfaasEvent): boolean {
  return (event.method ?? "POST").toUpperCase() === "GET" && (event.path ?? "/").split("?")[0] === "/readyz";
}

/** "ok" or "not ready", nothing more: the probe is open to anyone who reaches the function. */
async function answerReadiness(
  readiness: () => Promise<ReadinessVerdict>,
  context: OpenfaasContext,
): Promise<void> {
  const ready = await readiness().then(
    (verdict) => verdict.ready,
    () => false,
  );
  context
    .status(ready ? 200 : 503)
    .headers({ "content-type": "text/plain" })
    .succeed(ready ? "ok" : "not ready");
}

async function answerReview(body: unknown, context: OpenfaasContext, d: Dispatch): Promise<void> {
  d.onReview?.();
  let review: unknown;
  try {
    review = await (await d.handler())(body);
  } catch (err) {
    if (err instanceof UnanswerableReviewError) {
      reply(context, 400, { message: err.message });
      return;
    }
    d.log().error({ err }, "review failed");
    // The API server treats a 500 as a failed call: mutate-create fails closed, reschedule-delete open.
    reply(context, 500, { message: `internal error: ${errorMessage(err)}` });
    return;
  }
  reply(context, 200, review);
}

export function createOpenfaasHandler(
  getHandle: () => Promise<ReviewHandler>,
  options: OpenfaasAdapterOptions = {},
): OpenfaasHandler {
  const secretError = options.pathSecret instanceof Error ? options.pathSecret : undefined;
  const d: Dispatch = {
    handler: lazyHandle(getHandle),
    log: lazyLog(options),
    secretError,
    isReviewPath: reviewPathCheck(secretError ? undefined : (options.pathSecret as string | undefined)),
    onReview: options.onReview,
    readiness: options.readiness,
  };
  return async (event, context) => {
    try {
      if (d.readiness && isReadinessProbe(event)) return await answerReadiness(d.readiness, context);
      const decoded = reviewBodyOf(event, context, d);
      if (decoded) await answerReview(decoded.value, context, d);
    } catch (err) {
      // The context itself failed (not the template's); nothing left to answer with.
      try {
        d.log().error({ err }, "openfaas context failed");
      } catch {
        // never throw out of the handler
      }
    }
  };
}

/** Everything the handler factories need, from the function's environment (stack.yml `environment`). */
export interface OpenfaasRuntime {
  config: FunctionConfig;
  log: Logger;
  kube: KubeApi;
}

/** loadOpenfaasRuntime once, shared by the handler and readiness; a failed load is tried again on the next call. */
export function lazyOpenfaasRuntime(env: Env, functionName: string): () => Promise<OpenfaasRuntime> {
  let runtime: Promise<OpenfaasRuntime> | undefined;
  return () => {
    if (!runtime) {
      const loading = loadOpenfaasRuntime(env, functionName);
      runtime = loading;
      loading.catch(() => {
        if (runtime === loading) runtime = undefined;
      });
    }
    return runtime;
  };
}

/**
 * Readiness as `serve` has it (api-readiness.ts), made once the runtime loads; a runtime that cannot load
 * (bad configuration, no kubeconfig) is not ready, and its reason is logged.
 */
export function openfaasReadiness(runtime: () => Promise<OpenfaasRuntime>): () => Promise<ReadinessVerdict> {
  let readiness: Promise<() => Promise<ReadinessVerdict>> | undefined;
  return async () => {
    readiness ??= Promise.all([runtime(), import("../api-readiness.js")]).then(
      ([{ config, kube, log }, { createFunctionReadiness }]) => {
        const made = createFunctionReadiness(config, kube, log);
        return () => made.current();
      },
    );
    try {
      return await (await readiness)();
    } catch (err) {
      readiness = undefined;
      return { ready: false, reason: errorMessage(err) };
    }
  };
}

/**
 * The OpenFaaS entry's equivalent of `simkube-fn serve`'s start-up: config from env, one logger, the kube
 * client (imported lazily, so that require()-ing the bundle stays cheap and side-effect free).
 */
export async function loadOpenfaasRuntime(env: Env, functionName: string): Promise<OpenfaasRuntime> {
  const config = loadConfig(withPathSecretFile(env));
  const log = createLogger(config.logLevel).child({ function: functionName, platform: "openfaas" });
  const { createKubeApi } = await import("../../../shared/kube/index.js");
  return { config, log, kube: createKubeApi() };
}

/**
 * The path secret the entries hand to createOpenfaasHandler, read when the template loads the handler
 * (loadConfig checks its form again when the handler is built). Unreadable: the error, so that the
 * adapter fails closed instead of taking reviews at an unprotected path.
 */
export function openfaasPathSecret(env: Env): string | Error | undefined {
  try {
    return withPathSecretFile(env).WEBHOOK_PATH_SECRET?.trim() || undefined;
  } catch (err) {
    return err as Error;
  }
}

/** How long a stopping replica may take to give back what its sequence store leases. */
export const LET_GO_MS = 2_000;

const closeOnStop = new Set<() => Promise<void>>();

/**
 * OpenFaaS stops a replica with SIGTERM, whose default in Node is to end at once. The template's process has
 * no `serve`-style shutdown of its own, so this lets go of the sequence store's leases first (within
 * LET_GO_MS): a lease dropped with the process would leave its reserved numbers as a gap (docs/traces.md).
 * One listener for the process, however many handlers were built.
 */
export function closeOnSigterm(close: () => Promise<void>, log: Logger): void {
  if (closeOnStop.size === 0) {
    process.once("SIGTERM", () => {
      const closing = Promise.allSettled([...closeOnStop].map((c) => c()));
      void withDeadline(closing, LET_GO_MS, () => []).then(() => {
        log.info("sequence store leases let go; exiting");
        // We listened, so Node did not end on SIGTERM; end as it would have, unless someone else listens too.
        if (process.listenerCount("SIGTERM") === 0) process.exit(0);
      });
    });
  }
  closeOnStop.add(close);
}
