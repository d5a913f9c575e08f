// The functions this project serves, and how each is started from configuration.

import type { Server } from "node:http";
import type { ReviewHandler } from "../../shared/admission.js";
import type { FunctionConfig } from "../../shared/config.js";
import type { FunctionName } from "../../shared/function-names.js";
import type { KubeApi } from "../../shared/kube-api.js";
import type { Logger } from "../../shared/log.js";
import { buildMutateCreateDeps, createMutateCreateHandler } from "../mutate-create/handler.js";
import { buildRescheduleDeleteDeps, createRescheduleDeleteHandler } from "../reschedule-delete/handler.js";
import { type AppOptions, createApp, listen, readTlsMaterial } from "./http-server.js";

export interface BuiltFunction {
  handle: ReviewHandler;
  stats: () => Record<string, unknown>;
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
    return { handle: createMutateCreateHandler(deps), stats: () => deps.stats.snapshot() };
  }
  const deps = await buildRescheduleDeleteDeps(config, kube, log);
  return { handle: createRescheduleDeleteHandler(deps), stats: () => deps.stats?.snapshot() ?? {} };
}

export interface RunningFunction {
  server: Server;
  port: number;
}

export async function startFunction(
  name: FunctionName,
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
  host?: string,
): Promise<RunningFunction> {
  const tls = config.tls ? readTlsMaterial(config.tls) : undefined;
  const built = await buildFunction(name, config, kube, log);
  const appOptions: AppOptions = { stats: built.stats };
  if (config.pathSecret) appOptions.pathSecret = config.pathSecret;
  if (config.tls?.clientCaFile) appOptions.requireClientCert = true;
  const server = await listen(createApp(built.handle, log, appOptions), config.port, host, tls);
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
  return { server, port };
}
