// A fault-injecting HTTP proxy on 127.0.0.1 between a KubeApi client and the real API server: plain HTTP in,
// HTTPS (the run's CA) out, every header passed on. Faults are queued per method and taken in order:
// - "drop-answer": forward the request, wait for the API server's answer, then reset the client's connection
//   (the write landed; the client cannot know);
// - "conflict": answer 409 Conflict without forwarding (another writer won);
// - { delayMs }: forward, and hold the answer that long (past the client's deadline).

import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";

export type Fault = "drop-answer" | "conflict" | { delayMs: number };

export interface FaultProxy {
  url: string;
  /** Queue `fault` for the next `times` requests with this method (e.g. "PUT"). */
  inject(method: string, fault: Fault, times?: number): void;
  /** Requests seen per "METHOD fault" ("PUT forward", "PUT drop-answer", ...). */
  readonly seen: Map<string, number>;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function readBody(stream: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

function forward(upstream: URL, ca: Buffer, req: http.IncomingMessage, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: upstream.host, "content-length": String(body.length) };
    const out = https.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, ca },
      (res) => {
        readBody(res).then(
          (b) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: b }),
          reject,
        );
      },
    );
    out.on("error", reject);
    out.end(body);
  });
}

const conflict = (): Answer => {
  const body = Buffer.from(
    JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "Conflict",
      code: 409,
      message: "Operation cannot be fulfilled: the object has been modified (injected by the fault proxy)",
    }),
  );
  return { status: 409, headers: { "content-type": "application/json" }, body };
};

export async function startFaultProxy(upstreamUrl: string, caPem: string): Promise<FaultProxy> {
  const upstream = new URL(upstreamUrl);
  const ca = Buffer.from(caPem);
  const queued: Array<{ method: string; fault: Fault; left: number }> = [];
  const seen = new Map<string, number>();
  const take = (method: string): Fault | "forward" => {
    const i = queued.findIndex((q) => q.method === method);
    if (i < 0) return "forward";
    const q = queued[i] as (typeof queued)[number];
    q.left -= 1;
    if (q.left <= 0) queued.splice(i, 1);
    return q.fault;
  };
  const server = http.createServer(async (req, res) => {
    const fault = take(req.method ?? "");
    const name = typeof fault === "string" ? fault : "delay";
    seen.set(`${req.method} ${name}`, (seen.get(`${req.method} ${name}`) ?? 0) + 1);
    try {
      const body = await readBody(req);
      const answer = fault === "conflict" ? conflict() : await forward(upstream, ca, req, body);
      if (fault === "drop-answer") {
        req.socket.destroy();
        return;
      }
      if (typeof fault === "object") await new Promise((r) => setTimeout(r, fault.delayMs));
      res.writeHead(answer.status, { "content-type": answer.headers["content-type"] ?? "application/json" });
      res.end(answer.body);
    } catch (err) {
      res.writeHead(502).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    inject(method, fault, times = 1) {
      queued.push({ method, fault, left: times });
    },
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
