// The launcher's own API calls (CRDs, RBAC, nodes, token requests, the webhook configuration): plain JSON over
// https with the run's CA and a bearer token. Not the functions' client (shared/kube/client.ts): set-up needs
// subresources (serviceaccounts/token), status writes and arbitrary paths, and must not depend on discovery
// of CRDs it is itself creating.

import type { IncomingMessage } from "node:http";
import https from "node:https";

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

export interface RestClient {
  readonly server: string;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<T>;
  /** GET a plain-text answer (the API server's /metrics). */
  getText(path: string): Promise<string>;
  /** POST, and treat 409 AlreadyExists as done. */
  ensure(path: string, body: unknown): Promise<void>;
  /** DELETE, and treat 404 NotFound as done. */
  remove(path: string): Promise<void>;
}

interface Connection {
  server: string;
  agent: https.Agent;
  token: string;
}

function requestHeaders(token: string, payload: string | undefined, contentType: string, accept: string) {
  return {
    authorization: `Bearer ${token}`,
    accept,
    ...(payload !== undefined
      ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) }
      : {}),
  };
}

/** Collects the answer: `parse` of its text on 2xx, a RestError otherwise. */
function readAnswer<T>(
  res: IncomingMessage,
  method: string,
  path: string,
  parse: (text: string) => T,
  resolve: (value: T) => void,
  reject: (err: Error) => void,
): void {
  let text = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    text += chunk;
  });
  res.on("error", reject);
  res.on("aborted", () => reject(new Error(`${method} ${path}: response aborted`)));
  res.on("end", () => {
    const status = res.statusCode ?? 0;
    if (status >= 300) reject(new RestError(status, method, path, text));
    else resolve(parse(text));
  });
}

const parseJson = <T>(text: string): T => (text ? JSON.parse(text) : {}) as T;

interface Exchange<T> {
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
  parse: (text: string) => T;
}

function sendRequest<T>(c: Connection, x: Exchange<T>): Promise<T> {
  const { method, path } = x;
  const payload = x.body === undefined ? undefined : JSON.stringify(x.body);
  const headers = requestHeaders(
    c.token,
    payload,
    x.contentType ?? "application/json",
    x.accept ?? "application/json",
  );
  return new Promise<T>((resolve, reject) => {
    const req = https.request(
      `${c.server}${path}`,
      { method, agent: c.agent, timeout: 15_000, headers },
      (res) => readAnswer(res, method, path, x.parse, resolve, reject),
    );
    // A deadline for the whole exchange (the socket timeout alone misses a request queued in the agent).
    const deadline = setTimeout(() => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)), 30_000);
    req.on("close", () => clearTimeout(deadline));
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

export function createRestClient(server: string, ca: string, token: string): RestClient {
  const connection: Connection = {
    server,
    agent: new https.Agent({ ca, keepAlive: true, maxSockets: 8 }),
    token,
  };
  const request = <T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> =>
    sendRequest<T>(connection, {
      method,
      path,
      body,
      ...(contentType ? { contentType } : {}),
      parse: parseJson<T>,
    });
  return {
    server,
    request,
    getText: (path) =>
      sendRequest(connection, { method: "GET", path, accept: "text/plain", parse: (text) => text }),
    async ensure(path, body) {
      try {
        await request("POST", path, body);
      } catch (err) {
        if (!(err instanceof RestError && err.status === 409)) throw err;
      }
    },
    async remove(path) {
      try {
        await request("DELETE", path);
      } catch (err) {
        if (!(err instanceof RestError && err.status === 404)) throw err;
      }
    },
  };
}
