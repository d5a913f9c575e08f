// Function configuration from environment and flags. Pure: the CLI is the only reader of process.env.

import { DEFAULT_DRIVER_USERS } from "./identities.js";
import { isLogLevel, type LogLevel } from "./log.js";

export type SequenceStoreKind = "cluster" | "memory";

export interface FunctionConfig {
  simName: string;
  /** File path, file:// URL or http(s):// URL of the .sktrace; without it no lifecycles are applied. */
  tracePath?: string;
  port: number;
  logLevel: LogLevel;
  /** Usernames whose deletes are the simulation itself replaying production (never interruptions). */
  driverUsers: string[];
  sequenceStore: SequenceStoreKind;
  /** Namespace for the cluster sequence store's ConfigMap; the function's own namespace in a cluster. */
  storeNamespace: string;
}

export interface ConfigFlags {
  port?: string;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type Env = Readonly<Record<string, string | undefined>>;

function parsePort(raw: string, source: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`${source} must be a port number from 0 to 65535, got "${raw}"`);
  }
  return port;
}

/** Flag beats env beats default. */
export function loadConfig(env: Env, flags: ConfigFlags = {}): FunctionConfig {
  const simName = env.SIM_NAME?.trim();
  if (!simName)
    throw new ConfigError("SIM_NAME is required: the name of the simkube.io/v1 Simulation to serve");

  const port =
    flags.port !== undefined
      ? parsePort(flags.port, "--port")
      : env.PORT
        ? parsePort(env.PORT, "PORT")
        : 8080;

  const logLevel = env.LOG_LEVEL?.trim() || "info";
  if (!isLogLevel(logLevel)) {
    throw new ConfigError(
      `LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "${logLevel}"`,
    );
  }

  const driverUsers = env.DRIVER_USERS?.trim()
    ? env.DRIVER_USERS.split(",")
        .map((user) => user.trim())
        .filter((user) => user !== "")
    : [...DEFAULT_DRIVER_USERS];

  const store = env.SEQUENCE_STORE?.trim() || "cluster";
  if (store !== "cluster" && store !== "memory") {
    throw new ConfigError(`SEQUENCE_STORE must be "cluster" or "memory", got "${store}"`);
  }

  const config: FunctionConfig = {
    simName,
    port,
    logLevel,
    driverUsers,
    sequenceStore: store,
    storeNamespace: env.SEQUENCE_NAMESPACE?.trim() || env.POD_NAMESPACE?.trim() || "simkube",
  };
  const tracePath = env.TRACE_PATH?.trim();
  if (tracePath) config.tracePath = tracePath;
  return config;
}
