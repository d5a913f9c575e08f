// The OpenFaaS adapter: the node20/node22 template's `module.exports = async (event, context) => ...`
// around one ReviewHandler. It translates and nothing else, like functions/runtime/http-server.ts does for Knative:
//   - event.body arrives parsed (JSON content type), as text (text/*) or as a Buffer (RAW_BODY=true);
//   - bad JSON, or a review with no uid to answer -> 400 {message}; a review -> 200 with the handler's answer as application/json
//     (without the content-type header the template sends a stringified object as text/html);
//   - the handler is built once, on the first call, and built again on the next call if building failed;
//   - it never throws: the template would answer 500 with err.toString() as plain text.
// The bundle (npm run bundle:openfaas) makes each entry in this folder (mutate-create.ts, reschedule-delete.ts) a CommonJS handler.js.

import { type ReviewHandler, UnanswerableReviewError } from "../../../shared/admission.js";
import { type Env, type FunctionConfig, loadConfig } from "../../../shared/config.js";
import type { KubeApi } from "../../../shared/kube-api.js";
import { createLogger, type Logger } from "../../../shared/log.js";

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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function createOpenfaasHandler(
  getHandle: () => Promise<ReviewHandler>,
  options: OpenfaasAdapterOptions = {},
): OpenfaasHandler {
  let handle: Promise<ReviewHandler> | undefined;
  let fallbackLog: Logger | undefined;
  const log = (): Logger => {
    if (options.log) return options.log;
    if (!fallbackLog) fallbackLog = createLogger("info").child({ adapter: "openfaas" });
    return fallbackLog;
  };

  function handler(): Promise<ReviewHandler> {
    if (!handle) {
      const building = getHandle();
      handle = building;
      // A failed build (missing SIM_NAME, trace not reachable) is retried on the next call, not cached.
      building.catch(() => {
        if (handle === building) handle = undefined;
      });
    }
    return handle;
  }

  function reply(context: OpenfaasContext, status: number, value: unknown): void {
    context.status(status).headers(JSON_HEADERS).succeed(value);
  }

  return async (event, context) => {
    try {
      const method = (event.method ?? "POST").toUpperCase();
      if (method === "GET") {
        // The watchdog answers /_/health itself; this is for a person (or probe) calling the function.
        context.status(200).headers({ "content-type": "text/plain" }).succeed("ok");
        return;
      }
      if (method !== "POST") {
        reply(context, 405, { message: "POST an AdmissionReview; GET answers ok" });
        return;
      }
      const decoded = decodeBody(event.body);
      if (!decoded.ok) {
        reply(context, 400, { message: decoded.message });
        return;
      }
      let review: unknown;
      try {
        review = await (await handler())(decoded.value);
      } catch (err) {
        if (err instanceof UnanswerableReviewError) {
          reply(context, 400, { message: err.message });
          return;
        }
        log().error({ err }, "review failed");
        // The API server treats a 500 as a failed call: mutate-create fails closed, reschedule-delete open.
        reply(context, 500, { message: `internal error: ${errorMessage(err)}` });
        return;
      }
      reply(context, 200, review);
    } catch (err) {
      // The context itself failed (not the template's); nothing left to answer with.
      try {
        log().error({ err }, "openfaas context failed");
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

/**
 * The OpenFaaS entry's equivalent of `simkube-fn serve`'s start-up: config from env, one logger, the kube
 * client (imported lazily, so that require()-ing the bundle stays cheap and side-effect free).
 */
export async function loadOpenfaasRuntime(env: Env, functionName: string): Promise<OpenfaasRuntime> {
  const config = loadConfig(env);
  const log = createLogger(config.logLevel).child({ function: functionName, platform: "openfaas" });
  const { createKubeApi } = await import("../../../shared/kube.js");
  return { config, log, kube: createKubeApi() };
}
