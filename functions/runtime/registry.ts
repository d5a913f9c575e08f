// The functions this project serves, and how each is started from configuration.

import type { Server } from "node:http";
import type { ReviewHandler } from "../../shared/admission/index.js";
import { type FunctionName, type Logger, VERSION } from "../../shared/base/index.js";
import type { FunctionConfig } from "../../shared/config/index.js";
import type { KubeApi } from "../../shared/kube/index.js";
import { createMutateCreateHandler } from "../mutate-create/handler.js";
import { buildMutateCreateDeps } from "../mutate-create/wiring.js";
import { createRescheduleDeleteHandler, pendingSettleMs } from "../reschedule-delete/handler.js";
import { buildRescheduleDeleteDeps } from "../reschedule-delete/wiring.js";
import { createFunctionReadiness } from "./api-readiness.js";
import { type AppOptions, createApp, listen } from "./http-server.js";
import { collectWhenIdle } from "./idle-memory.js";
import { countingApiErrors, createFunctionMetrics } from "./metrics.js";
import type { Readiness } from "./readiness.js";
import { readTlsMaterial } from "./tls-files.js";

export interface BuiltFunction {
  handle: ReviewHandler;
  stats: () => Record<string, unknown>;
  /** Seconds spent reading the trace at start-up, when there is one. */
  traceLoadSeconds?: number;
  /**
   * Work still running after its review was answered (reschedule-delete's clones waiting for their
   * deletion), for a shutdown to wait for: true when it all ended within its own bound.
   */
  settle: () => Promise<boolean>;
}

/** Everything a function needs (trace, caches, stores), built before it listens: a listening server is ready. */
export async function buildFunction(
  name: FunctionName,
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
): Promise<BuiltFunction> {
  if (name === "mutate-create") {
    const deps = await buildMutateCreateDeps(config, kube, log);
    const built: BuiltFunction = {
      handle: createMutateCreateHandler(deps),
      stats: () => deps.stats.snapshot(),
      // Leases on sequence shards are let go, their reserved numbers given back (cluster-sequence-store.ts).
      settle: async () => {
        await deps.sequences.close?.();
        return true;
      },
    };
    if (deps.traceLoadSeconds !== undefined) built.traceLoadSeconds = deps.traceLoadSeconds;
    return built;
  }
  const deps = await buildRescheduleDeleteDeps(config, kube, log);
  return {
    handle: createRescheduleDeleteHandler(deps),
    stats: () => deps.stats.snapshot(),
    settle: () => deps.pending.settle(pendingSettleMs(deps)),
  };
}

export interface RunningFunction {
  server: Server;
  port: number;
  /** What GET /readyz answers from; `serve --check` asks it once. */
  readiness: Readiness;
  /** See BuiltFunction.settle. */
  settle: () => Promise<boolean>;
}

export async function startFunction(
  name: FunctionName,
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
  host?: string,
): Promise<RunningFunction> {
  const tls = config.tls ? readTlsMaterial(config.tls) : undefined;
  // The stats are read at scrape time; until the function is built there are none.
  let stats: () => Record<string, unknown> = () => ({});
  const metrics = createFunctionMetrics(name, () => stats(), {
    version: VERSION,
    nodeVersion: process.version,
    ...(config.commit ? { commit: config.commit } : {}),
  });
  const countedKube = countingApiErrors(kube, metrics.registry, name);
  const built = await buildFunction(name, config, countedKube, log);
  stats = built.stats;
  if (built.traceLoadSeconds !== undefined) metrics.setTraceLoad(built.traceLoadSeconds);
  const readiness = createFunctionReadiness(config, countedKube, log);
  // The first check runs while the server starts listening: it also opens the connection and warms the
  // discovery the first review's Simulation read needs.
  void readiness.checkNow();
  const appOptions: AppOptions = { stats: built.stats, metrics, onReview: collectWhenIdle(), readiness };
  if (config.pathSecret) appOptions.pathSecret = config.pathSecret;
  if (config.tls?.clientCaFile) appOptions.requireClientCert = true;
  if (config.tls?.clientCertSubjects) appOptions.clientCertSubjects = config.tls.clientCertSubjects;
  const limits = config.maxConnections === undefined ? {} : { maxConnections: config.maxConnections };
  const server = await listen(createApp(built.handle, log, appOptions), config.port, host, tls, limits);
  // process.uptime() counts from the process's own start: the cold start as far as Node can see it.
  metrics.setColdStart(process.uptime());
  metrics.collectProcessMetrics();
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  log.info(
    {
      port,
      simName: config.simName,
      scheme: tls ? "https" : "http",
      caller: config.tls?.clientCaFile ? "client-certificate" : config.pathSecret ? "path-secret" : "any",
    },
    "listening",
  );
  return { server, port, readiness, settle: built.settle };
}
