// Polling until something is ready: the processes' health endpoints, objects the controllers create. Every
// wait has a deadline and names what it waited for; a watched process that exits ends the wait at once.

import http from "node:http";
import https from "node:https";
import type { ManagedProcess } from "./processes.js";

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** A process whose exit means the wait can never succeed. */
  process?: ManagedProcess;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `check` until it returns true; throws naming `what` (and the process's log tail) otherwise. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  options: WaitOptions,
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = "";
  for (;;) {
    const exited = options.process?.exitedWith();
    if (exited) {
      throw new Error(
        `${options.process?.name} exited (${exited}) while waiting for ${what}:\n${options.process?.logTail()}`,
      );
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (Date.now() > deadline) {
      const tail = options.process ? `\n${options.process.logTail()}` : "";
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${what}${lastError ? ` (${lastError})` : ""}${tail}`,
      );
    }
    await sleep(options.intervalMs ?? 200);
  }
}

export interface ProbeOptions {
  ca?: string;
  token?: string;
  /** Accept any certificate (the controllers' self-signed health ports). */
  insecure?: boolean;
}

/** GET url; resolves to [status, body]. */
export function httpGet(url: string, options: ProbeOptions = {}): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
    const tls = url.startsWith("https:");
    const requestOptions: https.RequestOptions = { method: "GET", headers, timeout: 3_000 };
    if (tls) {
      if (options.ca) requestOptions.ca = options.ca;
      requestOptions.rejectUnauthorized = !options.insecure;
    }
    const req = (tls ? https : http).request(url, requestOptions, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve([res.statusCode ?? 0, body]));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on("error", reject);
    req.end();
  });
}
