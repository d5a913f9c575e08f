// Both functions served in this process on 127.0.0.1 over TLS (the run's CA signed their certificate), each
// with its own API identity and log file, exactly as `simkube-fn serve` builds them (runtime/registry.ts),
// guarded as its configuration says (a path secret, a client CA), as `serve` guards them.
// Each can be stopped and started again on the same port, so a test can take a webhook down; and every review
// can be recorded with its answer, which is how the tests see what each function was sent.

import { createWriteStream } from "node:fs";
import type { Server } from "node:http";
import type { AdmissionRequest, AdmissionResponse, AdmissionReview } from "../../shared/admission/index.js";
import type { FunctionName } from "../../shared/base/index.js";
import { createLogger, type LogLevel } from "../../shared/base/index.js";
import type { FunctionConfig } from "../../shared/config/index.js";
import { createKubeApi } from "../../shared/kube/index.js";
import { type AppOptions, createAnyServer, createApp } from "../runtime/http-server.js";
import { buildFunction } from "../runtime/registry.js";
import { readTlsMaterial } from "../runtime/tls-files.js";

export interface RecordedReview {
  function: FunctionName;
  /** Milliseconds since the epoch when the review arrived. */
  at: number;
  /** Milliseconds the function took to answer (fractional). */
  ms: number;
  request: AdmissionRequest;
  response: AdmissionResponse | undefined;
}

export interface LocalFunction {
  readonly name: FunctionName;
  /** The review URL: https://127.0.0.1:<port>/, plus the path secret when there is one. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops open connections: the API server then sees a connection refused. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  stats(): Record<string, unknown>;
  /** Reviews answered since the start (recorded or not). */
  reviewsSeen(): number;
}

export interface ServeFunctionOptions {
  name: FunctionName;
  /** With `tls` (required here) and, when guarded, `pathSecret` and `tls.clientCaFile`. */
  config: FunctionConfig;
  kubeconfig: string;
  port: number;
  logFile: string;
  logLevel: LogLevel;
  /** Called with every review and its answer (the tests' record of what the function saw). */
  onReview?: (review: RecordedReview) => void;
}

function listenOn(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

export async function serveFunction(o: ServeFunctionOptions): Promise<LocalFunction> {
  const log = createLogger(o.logLevel, createWriteStream(o.logFile, { flags: "a" })).child({
    function: o.name,
  });
  // reschedule-delete retries inside a 3 s deadline: shorter calls leave room for a second attempt (as `serve`).
  const kube = createKubeApi({
    kubeconfigPath: o.kubeconfig,
    ...(o.name === "reschedule-delete" ? { timeoutMs: 2_000 } : {}),
  });
  const built = await buildFunction(o.name, o.config, kube, log);
  let seen = 0;
  const handle = async (body: unknown): Promise<AdmissionReview> => {
    const at = Date.now();
    const started = performance.now();
    const answer = await built.handle(body);
    seen++;
    const request = (body as { request?: AdmissionRequest } | undefined)?.request;
    if (request)
      o.onReview?.({
        function: o.name,
        at,
        ms: performance.now() - started,
        request,
        response: answer.response,
      });
    return answer;
  };
  const appOptions: AppOptions = { stats: built.stats };
  if (o.config.pathSecret) appOptions.pathSecret = o.config.pathSecret;
  if (o.config.tls?.clientCaFile) appOptions.requireClientCert = true;
  if (o.config.tls?.clientCertSubjects) appOptions.clientCertSubjects = o.config.tls.clientCertSubjects;
  const app = createApp(handle, log, appOptions);
  if (!o.config.tls) throw new Error(`${o.name}: the local cluster serves the functions over TLS only`);
  const tls = readTlsMaterial(o.config.tls);
  let server: Server | undefined;
  const start = async () => {
    if (server) return;
    const next = createAnyServer(tls);
    next.on("request", app);
    await listenOn(next, o.port);
    server = next;
  };
  await start();
  const caller = appOptions.requireClientCert ? "client-certificate" : "any";
  log.info(
    { port: o.port, simName: o.config.simName, caller, pathSecret: Boolean(appOptions.pathSecret) },
    "listening (local cluster, TLS)",
  );
  return {
    name: o.name,
    url: `https://127.0.0.1:${o.port}/${o.config.pathSecret ?? ""}`,
    port: o.port,
    start,
    async stop() {
      const current = server;
      server = undefined;
      if (!current) return;
      const closed = new Promise<void>((resolve) => current.close(() => resolve()));
      current.closeAllConnections();
      await closed;
    },
    stats: built.stats,
    reviewsSeen: () => seen,
  };
}
