// The OpenFaaS gateway's system API as faas-cli and a user call it, with CE's basic auth: list the functions,
// deploy or remove one, call one. `base` is an http URL of the gateway (its pod, reached over the node's
// route from this host).

import http from "node:http";
import { BASIC_AUTH_USER } from "./objects.js";

export interface GatewayClient {
  readonly base: string;
  /** The Authorization header value (Basic admin:<password>). */
  readonly authorization: string;
  request(method: string, path: string, body?: unknown, auth?: boolean): Promise<GatewayResponse>;
}

export interface GatewayResponse {
  status: number;
  body: string;
}

/** A function as GET /system/functions lists it (the fields read here). */
export interface GatewayFunction {
  name: string;
  image: string;
  namespace?: string;
  replicas?: number;
  availableReplicas?: number;
}

export function basicAuthorization(password: string): string {
  return `Basic ${Buffer.from(`${BASIC_AUTH_USER}:${password}`).toString("base64")}`;
}

export function createGatewayClient(base: string, password: string, timeoutMs = 10_000): GatewayClient {
  const authorization = basicAuthorization(password);
  const request = (method: string, path: string, body?: unknown, auth = true) =>
    new Promise<GatewayResponse>((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
      const headers: Record<string, string> = auth ? { authorization } : {};
      if (payload !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = String(Buffer.byteLength(payload));
      }
      const req = http.request(new URL(path, base), { method, headers, timeout: timeoutMs }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end(payload);
    });
  return { base, authorization, request };
}

/** GET /system/functions: throws with the status and body unless 200. */
export async function listFunctions(gateway: GatewayClient): Promise<GatewayFunction[]> {
  const res = await gateway.request("GET", "/system/functions");
  if (res.status !== 200)
    throw new Error(`GET /system/functions answered ${res.status}: ${res.body.trim().slice(0, 300)}`);
  return JSON.parse(res.body) as GatewayFunction[];
}
