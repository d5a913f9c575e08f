// Function configuration from environment and flags. Pure: the CLI is the only reader of process.env.

import {
  DEFAULT_DRIVER_USERS,
  isLogFormat,
  isLogLevel,
  LOG_FORMATS,
  type LogFormat,
  type LogLevel,
} from "../base/index.js";
import { type AllowedLocation, parseAllowedLocation } from "../trace/index.js";

export type SequenceStoreKind = "cluster" | "memory";

export interface FunctionConfig {
  /**
   * The one Simulation served (SIM_NAME). Unset: every Simulation, each pod's found from the SimulationRoot
   * in its owner chain (or its virtual namespace's), with that Simulation's settings.
   */
  simName?: string;
  /** File path, file:// URL or http(s):// URL of the .sktrace; without it no lifecycles are applied. */
  tracePath?: string;
  /**
   * Where a Simulation's spec.driver.tracePath may point, besides TRACE_PATH (TRACE_ALLOWED_LOCATIONS,
   * --allow-trace-location); unset: nowhere. Downloads' redirects must stay inside it too.
   */
  traceAllowlist?: AllowedLocation[];
  /** What bounds a trace's memory; unset: the defaults (TRACE_MEMORY_DEFAULTS). */
  traceMemory?: TraceMemoryConfig;
  /** How Simulations' traces are loaded (without TRACE_PATH); unset: the trace cache's defaults. */
  traceLoads?: TraceLoadConfig;
  port: number;
  logLevel: LogLevel;
  /** LOG_FORMAT: json (string levels, ISO times; default), gcp (Cloud Logging's severity), pino (numbers). */
  logFormat?: LogFormat;
  /** Usernames whose deletes are the simulation itself replaying production (never interruptions). */
  driverUsers: string[];
  sequenceStore: SequenceStoreKind;
  /** Namespace for the cluster sequence store's ConfigMap; the function's own namespace in a cluster. */
  storeNamespace: string;
  /** Reviews are accepted only at POST /<secret> (WEBHOOK_PATH_SECRET); unset: at POST /. */
  pathSecret?: string;
  /**
   * reschedule-delete with `--pod-reads virtual-namespaces` (POD_READ_ROLE, POD_READ_ACCOUNT): it binds this
   * ClusterRole to this account in each virtual namespace before reading pods there. Unset: it reads pods
   * through its ClusterRole, cluster-wide.
   */
  podReads?: { role: string; account: { namespace: string; name: string } };
  /** Serve https with this certificate and key (PEM file paths) instead of plain http. */
  tls?: TlsFiles;
  /**
   * RESCHEDULE_SERVED (mutate-create; the manifests set it): whether this deployment registers reschedule-delete's
   * DELETE webhook. false: a Simulation asking for rescheduling gets a warning and an Event. Unset: not known,
   * nothing is said.
   */
  rescheduleServed?: boolean;
  /** MAX_CONNECTIONS: open connections the server keeps at most; unset: its default (http-server.ts). */
  maxConnections?: number;
  /** SIMKUBE_FN_COMMIT: the source commit the image was built from, for simkube_fn_build_info; unset: unknown. */
  commit?: string;
}

export interface TraceMemoryConfig {
  /** TRACE_MAX_MIB: the largest trace file read, in bytes (file or download, before decoding). */
  maxTraceBytes: number;
  /** TRACE_CACHE_MAX_TRACES: traces kept at most (without TRACE_PATH: one per location). */
  cacheMaxTraces: number;
  /** TRACE_CACHE_MAX_MIB: the kept traces' file bytes at most; at least TRACE_MAX_MIB. */
  cacheMaxBytes: number;
  /** TRACE_RECHECK_SECONDS, in ms: how long a kept trace is used before its source is asked if it changed. */
  recheckMs: number;
}

const MiB = 1024 * 1024;

/** The memory limit the manifests render is sized for these (knative/manifests.ts). */
export const TRACE_MEMORY_DEFAULTS: Readonly<TraceMemoryConfig> = {
  maxTraceBytes: 64 * MiB,
  cacheMaxTraces: 16,
  cacheMaxBytes: 64 * MiB,
  recheckMs: 30_000,
};

/** Each set only when its variable is; the trace cache has the defaults (10 s, 5 s, 2). */
export interface TraceLoadConfig {
  /** TRACE_LOAD_TIMEOUT_SECONDS, in ms: how long a review waits for its trace, and the load's deadline. */
  loadTimeoutMs?: number;
  /** TRACE_FAILURE_CACHE_SECONDS, in ms: how long a failed or late load is remembered. */
  failureCacheMs?: number;
  /** TRACE_CONCURRENT_LOADS: loads of different locations at once. */
  maxConcurrentLoads?: number;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** Require a client certificate signed by this CA (CLIENT_CA_FILE): the API server's, from its kubeConfigFile. */
  clientCaFile?: string;
  /**
   * CLIENT_CERT_SUBJECTS: of the certificates that CA signed, only one naming one of these (subject CN, or a
   * DNS or URI SAN) is taken: the API server's own identity.
   */
  clientCertSubjects?: ClientCertSubject[];
}

/** A name a client certificate must carry: its subject CN, or a DNS or URI subject alternative name. */
export interface ClientCertSubject {
  kind: "CN" | "DNS" | "URI";
  value: string;
}

export interface ConfigFlags {
  port?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** --allow-trace-location, repeated: replaces TRACE_ALLOWED_LOCATIONS. */
  allowTraceLocations?: readonly string[];
  /** The namespace of the pod's service account (its token mount), read by the CLI when running in a pod. */
  serviceAccountNamespace?: string;
}

/** A path segment the API server sends verbatim and a URL never needs to escape; long enough not to guess. */
const PATH_SECRET = /^[A-Za-z0-9_-]{24,256}$/;

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
  const simName = env.SIM_NAME?.trim() || undefined;

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

  const logFormat = env.LOG_FORMAT?.trim() || "json";
  if (!isLogFormat(logFormat)) {
    throw new ConfigError(`LOG_FORMAT must be one of ${LOG_FORMATS.join(", ")}; got "${logFormat}"`);
  }

  const driverUsers = driverUsersOf(env);

  const store = env.SEQUENCE_STORE?.trim() || "cluster";
  if (store !== "cluster" && store !== "memory") {
    throw new ConfigError(`SEQUENCE_STORE must be "cluster" or "memory", got "${store}"`);
  }

  const config: FunctionConfig = {
    port,
    logLevel,
    logFormat,
    driverUsers,
    sequenceStore: store,
    storeNamespace: storeNamespaceOf(env, flags),
  };
  if (simName) config.simName = simName;
  const commit = env.SIMKUBE_FN_COMMIT?.trim();
  if (commit) config.commit = commit;
  const tracePath = env.TRACE_PATH?.trim();
  if (tracePath) config.tracePath = tracePath;
  const podReads = podReadsOf(env);
  if (podReads) config.podReads = podReads;
  const pathSecret = pathSecretOf(env);
  if (pathSecret) config.pathSecret = pathSecret;
  const tls = tlsOf(env, flags);
  if (tls) config.tls = tls;
  const traceAllowlist = traceAllowlistOf(env, flags);
  if (traceAllowlist.length > 0) config.traceAllowlist = traceAllowlist;
  const traceMemory = traceMemoryOf(env);
  if (traceMemory) config.traceMemory = traceMemory;
  const traceLoads = traceLoadsOf(env);
  if (traceLoads) config.traceLoads = traceLoads;
  const rescheduleServed = booleanSetting(env, "RESCHEDULE_SERVED");
  if (rescheduleServed !== undefined) config.rescheduleServed = rescheduleServed;
  const maxConnections = positiveInteger(env, "MAX_CONNECTIONS");
  if (maxConnections !== undefined) config.maxConnections = maxConnections;
  return config;
}

/** TRACE_LOAD_TIMEOUT_SECONDS, TRACE_FAILURE_CACHE_SECONDS, TRACE_CONCURRENT_LOADS; undefined if none is set. */
function traceLoadsOf(env: Env): TraceLoadConfig | undefined {
  const timeout = positiveInteger(env, "TRACE_LOAD_TIMEOUT_SECONDS");
  const failure = positiveInteger(env, "TRACE_FAILURE_CACHE_SECONDS");
  const loads = positiveInteger(env, "TRACE_CONCURRENT_LOADS");
  if (timeout === undefined && failure === undefined && loads === undefined) return undefined;
  if (timeout !== undefined && timeout >= 30) {
    // 30 s is the longest webhook timeout the API server allows: a load as long answers nobody.
    throw new ConfigError(
      `TRACE_LOAD_TIMEOUT_SECONDS must be well below the webhook's timeout (at most 30 s), got ${timeout}`,
    );
  }
  return {
    ...(timeout !== undefined ? { loadTimeoutMs: timeout * 1000 } : {}),
    ...(failure !== undefined ? { failureCacheMs: failure * 1000 } : {}),
    ...(loads !== undefined ? { maxConcurrentLoads: loads } : {}),
  };
}

/** "true" or "false", or undefined when unset or blank. */
function booleanSetting(env: Env, name: string): boolean | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (raw !== "true" && raw !== "false") throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  return raw === "true";
}

/** A whole number from 1 up, or undefined when unset or blank (the default then). */
function positiveInteger(env: Env, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be a whole number from 1 up, got "${raw}"`);
  }
  return Number(raw);
}

/** TRACE_MAX_MIB, TRACE_CACHE_MAX_TRACES, TRACE_CACHE_MAX_MIB, TRACE_RECHECK_SECONDS; undefined if none is set. */
function traceMemoryOf(env: Env): TraceMemoryConfig | undefined {
  const maxMiB = positiveInteger(env, "TRACE_MAX_MIB");
  const traces = positiveInteger(env, "TRACE_CACHE_MAX_TRACES");
  const cacheMiB = positiveInteger(env, "TRACE_CACHE_MAX_MIB");
  const recheckSeconds = positiveInteger(env, "TRACE_RECHECK_SECONDS");
  if ([maxMiB, traces, cacheMiB, recheckSeconds].every((v) => v === undefined)) return undefined;
  const d = TRACE_MEMORY_DEFAULTS;
  const maxTraceBytes = maxMiB === undefined ? d.maxTraceBytes : maxMiB * MiB;
  // Unset, the cache holds at least one trace at the cap.
  const cacheMaxBytes = cacheMiB === undefined ? Math.max(d.cacheMaxBytes, maxTraceBytes) : cacheMiB * MiB;
  if (cacheMaxBytes < maxTraceBytes) {
    throw new ConfigError(
      `TRACE_CACHE_MAX_MIB (${cacheMiB}) must be at least TRACE_MAX_MIB (${maxTraceBytes / MiB}): a trace ` +
        "the cache cannot keep would be read again for every pod",
    );
  }
  return {
    maxTraceBytes,
    cacheMaxTraces: traces ?? d.cacheMaxTraces,
    cacheMaxBytes,
    recheckMs: recheckSeconds === undefined ? d.recheckMs : recheckSeconds * 1000,
  };
}

/** The flag's entries, else the variable's (comma-separated); each checked, an error naming its source. */
function traceAllowlistOf(env: Env, flags: ConfigFlags): AllowedLocation[] {
  const [source, entries] =
    flags.allowTraceLocations !== undefined
      ? ["--allow-trace-location", flags.allowTraceLocations]
      : ["TRACE_ALLOWED_LOCATIONS", (env.TRACE_ALLOWED_LOCATIONS ?? "").split(",")];
  return entries
    .filter((entry) => entry.trim() !== "")
    .map((entry) => {
      const allowed = parseAllowedLocation(entry);
      if (typeof allowed === "string") throw new ConfigError(`${source}: ${allowed}`);
      return allowed;
    });
}

/**
 * Blank means SimKube's default. A list of only commas names nobody, and then every delete by the driver
 * would be judged an interruption: a ConfigError, not an empty list.
 */
function driverUsersOf(env: Env): string[] {
  if (!env.DRIVER_USERS?.trim()) return [...DEFAULT_DRIVER_USERS];
  const users = env.DRIVER_USERS.split(",")
    .map((user) => user.trim())
    .filter((user) => user !== "");
  if (users.length === 0) throw new ConfigError(`DRIVER_USERS names no user: "${env.DRIVER_USERS}"`);
  return users;
}

/**
 * The functions' own namespace, never SimKube's: a function that may update ConfigMaps must only reach its
 * own. SEQUENCE_NAMESPACE, else POD_NAMESPACE (the manifests set it), else the service account's namespace,
 * else "default" (a kubeconfig outside a cluster, like kubectl).
 */
function storeNamespaceOf(env: Env, flags: ConfigFlags): string {
  return (
    env.SEQUENCE_NAMESPACE?.trim() ||
    env.POD_NAMESPACE?.trim() ||
    flags.serviceAccountNamespace?.trim() ||
    "default"
  );
}

/**
 * A setting that turns a check on: unset means off, so set but blank must not mean off too (a Secret with an
 * empty value, a template that rendered nothing). Blank is a ConfigError naming the setting.
 */
export function guardSetting(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") throw new ConfigError(`${name} is set but empty; unset it to turn it off`);
  return trimmed;
}

/** The path secret's form, checked wherever it comes from (`source` names the variable or file). */
export function checkPathSecret(secret: string, source: string): string {
  if (!PATH_SECRET.test(secret)) {
    throw new ConfigError(
      `${source} must be 24 to 256 characters of A-Z a-z 0-9 _ - (it is one URL path segment)`,
    );
  }
  return secret;
}

const SERVICE_ACCOUNT_USER =
  /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/;

/** Both or neither: one alone would leave reschedule-delete unable to read pods, or binding to nobody. */
function podReadsOf(env: Env): FunctionConfig["podReads"] {
  const role = guardSetting(env.POD_READ_ROLE, "POD_READ_ROLE");
  const account = guardSetting(env.POD_READ_ACCOUNT, "POD_READ_ACCOUNT");
  if (role === undefined && account === undefined) return undefined;
  if (role === undefined || account === undefined) {
    throw new ConfigError("POD_READ_ROLE and POD_READ_ACCOUNT are set together or not at all");
  }
  const match = SERVICE_ACCOUNT_USER.exec(account);
  if (!match) {
    throw new ConfigError(
      `POD_READ_ACCOUNT must be system:serviceaccount:<namespace>:<name> (the function's own account), got "${account}"`,
    );
  }
  return { role, account: { namespace: match[1] as string, name: match[3] as string } };
}

function pathSecretOf(env: Env): string | undefined {
  // withPathSecretFile (functions/runtime/path-secret.ts) reads the file into WEBHOOK_PATH_SECRET first.
  if (env.WEBHOOK_PATH_SECRET === undefined && env.WEBHOOK_PATH_SECRET_FILE !== undefined) {
    throw new ConfigError("WEBHOOK_PATH_SECRET_FILE was not read: load the configuration through serve");
  }
  const secret = guardSetting(env.WEBHOOK_PATH_SECRET, "WEBHOOK_PATH_SECRET");
  return secret === undefined ? undefined : checkPathSecret(secret, "WEBHOOK_PATH_SECRET");
}

function tlsOf(env: Env, flags: ConfigFlags): TlsFiles | undefined {
  const certFile =
    guardSetting(flags.tlsCert, "--tls-cert") ?? guardSetting(env.TLS_CERT_FILE, "TLS_CERT_FILE");
  const keyFile = guardSetting(flags.tlsKey, "--tls-key") ?? guardSetting(env.TLS_KEY_FILE, "TLS_KEY_FILE");
  const clientCaFile = guardSetting(env.CLIENT_CA_FILE, "CLIENT_CA_FILE");
  const subjects = clientCertSubjectsOf(env);
  if (subjects && !clientCaFile) {
    throw new ConfigError(
      "CLIENT_CERT_SUBJECTS needs CLIENT_CA_FILE: it narrows the certificates that CA signed",
    );
  }
  if (!certFile && !keyFile) {
    if (clientCaFile) {
      throw new ConfigError(
        "CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates are checked only when serving https",
      );
    }
    return undefined;
  }
  if (!certFile || !keyFile) {
    throw new ConfigError(
      "TLS needs both a certificate and a key (--tls-cert/TLS_CERT_FILE, --tls-key/TLS_KEY_FILE)",
    );
  }
  if (!clientCaFile) return { certFile, keyFile };
  return subjects
    ? { certFile, keyFile, clientCaFile, clientCertSubjects: subjects }
    : { certFile, keyFile, clientCaFile };
}

const SUBJECT_KINDS = [
  ["CN=", "CN"],
  ["DNS:", "DNS"],
  ["URI:", "URI"],
] as const;

/** Names of another kind, which are not pinned (a bare name is a CN, and `system:` CNs are common). */
const OTHER_NAME_KINDS = /^(IP|IP Address|email|othername|DirName|Registered ID):|^[A-Za-z]{1,12}=/i;

/** CLIENT_CERT_SUBJECTS: comma-separated `CN=name`, `DNS:name`, `URI:uri`, or a bare name (a CN). */
function clientCertSubjectsOf(env: Env): ClientCertSubject[] | undefined {
  const raw = guardSetting(env.CLIENT_CERT_SUBJECTS, "CLIENT_CERT_SUBJECTS");
  if (raw === undefined) return undefined;
  const entries = raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0) throw new ConfigError(`CLIENT_CERT_SUBJECTS names no subject: "${raw}"`);
  return entries.map((entry) => {
    const prefixed = SUBJECT_KINDS.find(([prefix]) => entry.startsWith(prefix));
    const subject: ClientCertSubject = prefixed
      ? { kind: prefixed[1], value: entry.slice(prefixed[0].length) }
      : { kind: "CN", value: entry };
    if (subject.value === "" || (!prefixed && OTHER_NAME_KINDS.test(entry))) {
      throw new ConfigError(
        `CLIENT_CERT_SUBJECTS: "${entry}" is not CN=, DNS: or URI: followed by a name (or a bare CN)`,
      );
    }
    return subject;
  });
}
