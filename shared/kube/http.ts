// A lean HTTP path for the calls on kinds whose paths are known (kube.ts, KNOWN_RESOURCES): one node:http(s)
// request on a shared keep-alive agent, JSON in and out. The sequence store's ConfigMap GET/PUT/POST go here,
// several per admission review under load.
//
// Why not client-node's request stack: per call it re-runs the kubeconfig's authentication (reading the CA,
// certificate and key files again, building a new Agent), then node-fetch wraps the request and the response
// in its own Headers and streams. Measured against the API double with a ConfigMap of 400 counters: 590-670
// µs of client CPU per PUT through that stack, 410-440 µs through node:http with the same body; the JSON of
// the object itself is most of what is left.
//
// What is kept from client-node: the kubeconfig and its authentication (token, token file, exec plugin,
// client certificate, basic auth, impersonation) through KubeConfig.applyToHTTPSOptions, re-read every
// AUTH_REFRESH_MS and after any 401, so rotated tokens and certificates are picked up as before.

import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node/dist/config.js";
import { KubeError, kubeErrorOfStatus } from "./api.js";

/** How long one reading of the kubeconfig's credentials is used before it is read again. */
export const AUTH_REFRESH_MS = 10_000;

type Agent = http.Agent | https.Agent;

/** What the kubeconfig contributes to a request: headers, and TLS options that decide the agent. */
interface Credentials {
  headers: Record<string, string>;
  tls: Record<string, unknown>;
}

/** TLS settings that decide whether two agents are interchangeable. */
export const TLS_KEYS = [
  "ca",
  "cert",
  "key",
  "pfx",
  "passphrase",
  "rejectUnauthorized",
  "servername",
] as const;

function sameTls(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return TLS_KEYS.every((k) => String(a[k] ?? "") === String(b[k] ?? ""));
}

/** The header values a request carries, as strings (https options may hold numbers or arrays). */
function headersOf(options: { headers?: unknown; auth?: unknown }): Record<string, string> {
  const out: Record<string, string> = {};
  const given = (options.headers ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(given)) {
    if (Array.isArray(value)) out[name] = value.map(String).join(", ");
    else if (typeof value === "string" || typeof value === "number") out[name] = String(value);
  }
  if (typeof options.auth === "string") {
    out.Authorization = `Basic ${Buffer.from(options.auth).toString("base64")}`;
  }
  return out;
}

async function readCredentials(kc: KubeConfig): Promise<Credentials> {
  const options: https.RequestOptions & { headers?: Record<string, unknown> } = {};
  await kc.applyToHTTPSOptions(options);
  // applyToHTTPSOptions also built an agent for this one request; ours is shared instead.
  (options.agent as Agent | undefined)?.destroy();
  const tls: Record<string, unknown> = {};
  for (const key of TLS_KEYS) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) tls[key] = value;
  }
  return { headers: headersOf(options), tls };
}

/** Whether a kubeconfig can use the lean path: a proxy-url needs the library's proxy agents. */
export function leanPathFits(kc: KubeConfig): boolean {
  const cluster = kc.getCurrentCluster();
  return cluster !== null && !cluster.proxyUrl;
}

export interface LeanTransportOptions {
  timeoutMs: number;
  /** Milliseconds clock for the credentials' age. Default performance.now. */
  now?: () => number;
}

/** One JSON request (`accept`: another Accept header); a non-2xx answer or no answer throws KubeError. */
export type LeanRequest = (method: string, path: string, body?: unknown, accept?: string) => Promise<unknown>;

/** Requests to the kubeconfig's current cluster; `path` is appended to its server URL. */
export function createLeanTransport(kc: KubeConfig, options: LeanTransportOptions): LeanRequest {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeError(400, "ClientError", "kubeconfig has no current cluster");
  const base = new URL(cluster.server);
  const secure = base.protocol === "https:";
  const prefix = base.pathname.replace(/\/+$/, "");
  // Refused per call, not here, as the library refuses it: a process may start without ever calling.
  const plainRefused = !secure && !cluster.skipTLSVerify;
  const now = options.now ?? (() => performance.now());
  const agent = new KeepAliveAgent();
  let cached: { at: number; credentials: Promise<Credentials> } | undefined;
  const current = (): Promise<Credentials> => {
    const t = now();
    if (cached === undefined || t - cached.at >= AUTH_REFRESH_MS) {
      const entry = { at: t, credentials: readCredentials(kc) };
      // A failed read is not kept: the next call tries again.
      entry.credentials.catch(() => {
        if (cached === entry) cached = undefined;
      });
      cached = entry;
    }
    return cached.credentials;
  };
  return async (method, path, body, accept) => {
    if (plainRefused) {
      throw new KubeError(
        400,
        "ClientError",
        "HTTP protocol is not allowed when skipTLSVerify is not set or false",
      );
    }
    const creds = await current();
    const target = { base, path: `${prefix}${path}`, secure, timeoutMs: options.timeoutMs };
    try {
      return await send(target, agent.for(creds.tls, secure), creds.headers, method, body, accept);
    } catch (err) {
      // Credentials the server no longer takes (a rotated token): read them again for the next call.
      if (err instanceof KubeError && err.status === 401) cached = undefined;
      throw err;
    }
  };
}

/**
 * One keep-alive agent, rebuilt when the TLS settings or the protocol change (e.g. a rotated client
 * certificate). Both transports keep one: the lean path here, and kube.ts in place of the fresh agent
 * client-node makes per request.
 */
export class KeepAliveAgent {
  private current: Agent | undefined;
  private options: Record<string, unknown> = {};

  /** `options`: the agent's settings, of which TLS_KEYS decide whether the current agent still fits. */
  for(options: Record<string, unknown>, secure: boolean): Agent {
    // The same reading of the credentials (the common case) needs no comparison of certificate bytes.
    const fits = options === this.options || sameTls(this.options, options);
    if (this.current && fits && this.current instanceof https.Agent === secure) {
      this.options = options;
      return this.current;
    }
    this.current?.destroy();
    this.options = options;
    const settings = { ...options, keepAlive: true, maxSockets: 64, scheduling: "lifo" as const };
    this.current = secure ? new https.Agent(settings) : new http.Agent(settings);
    return this.current;
  }
}

interface Target {
  base: URL;
  path: string;
  secure: boolean;
  timeoutMs: number;
}

function send(
  target: Target,
  agent: Agent,
  auth: Record<string, string>,
  method: string,
  body: unknown,
  accept = "application/json",
): Promise<unknown> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string | number> = { ...auth, Accept: accept };
  if (payload) {
    headers["Content-Type"] = "application/json";
    headers["Content-Length"] = payload.length;
  }
  const request = target.secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: target.base.protocol,
        hostname: target.base.hostname,
        port: target.base.port,
        path: target.path,
        method,
        agent,
        headers,
      },
      (res) => readAnswer(res, resolve, reject),
    );
    const timer = setTimeout(() => req.destroy(new NoAnswer(target.timeoutMs)), target.timeoutMs);
    timer.unref();
    req.on("close", () => clearTimeout(timer));
    req.on("error", (err) => reject(connectionError(err)));
    req.end(payload);
  });
}

class NoAnswer extends Error {
  constructor(ms: number) {
    super(`no answer from the API server in time (${ms} ms)`);
  }
}

function connectionError(err: Error): KubeError {
  return new KubeError(0, "ConnectionError", err.message || String(err));
}

function readAnswer(
  res: http.IncomingMessage,
  resolve: (value: unknown) => void,
  reject: (err: unknown) => void,
): void {
  const chunks: Buffer[] = [];
  res.on("data", (chunk: Buffer) => chunks.push(chunk));
  res.on("error", (err) => reject(connectionError(err)));
  res.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    const status = res.statusCode ?? 0;
    if (status >= 200 && status <= 299) {
      try {
        resolve(JSON.parse(text));
      } catch (err) {
        reject(new KubeError(0, "ConnectionError", `unreadable answer: ${(err as Error).message}`));
      }
      return;
    }
    reject(kubeErrorOfStatus(status, text));
  });
}
