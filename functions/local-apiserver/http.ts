// The HTTP front: who is calling, injected faults and latency, the request log, and errors as Status bodies.

import type http from "node:http";
import type { UserInfo } from "../../shared/admission/index.js";
import { ADMIN_USER } from "../../shared/base/index.js";
import { STATUS_REASON_BY_CODE } from "../../shared/kube/index.js";
import type { Backend } from "./backend.js";
import { clone } from "./objects.js";
import { route } from "./routing.js";
import { ApiError, failure, internalError } from "./status.js";
import type { Ctx, FakeApiServerOptions, Fault, Reply, RequestRecord } from "./types.js";

export const DEFAULT_USER: UserInfo = {
  username: ADMIN_USER,
  groups: ["kubeadm:cluster-admins", "system:authenticated"],
};

/** Faults waiting for a matching request, each for its number of times. */
export class FaultQueue {
  private readonly faults: (Fault & { left: number })[] = [];

  push(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  take(method: string, path: string): Fault | undefined {
    const at = this.faults.findIndex(
      (f) => (!f.method || f.method.toUpperCase() === method) && (!f.path || f.path.test(path)),
    );
    const fault = this.faults[at];
    if (!fault) return undefined;
    fault.left -= 1;
    if (fault.left <= 0) this.faults.splice(at, 1);
    return fault;
  }
}

/** What the front needs besides the backend. */
export interface Front {
  options: Pick<FakeApiServerOptions, "users" | "defaultUser">;
  requests: RequestRecord[];
  faults: FaultQueue;
  latencyMs(): number;
}

/** x-fake-user (and x-fake-groups) wins, then a known bearer token, then the default user. */
function userOf(front: Front, req: http.IncomingMessage): UserInfo {
  const header = req.headers["x-fake-user"];
  if (typeof header === "string" && header) {
    const groups = req.headers["x-fake-groups"];
    const user: UserInfo = { username: header };
    user.groups =
      typeof groups === "string" && groups
        ? groups.split(",").map((g) => g.trim())
        : ["system:authenticated"];
    return user;
  }
  const auth = req.headers.authorization;
  const token = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice(7) : undefined;
  const known = token !== undefined ? front.options.users?.[token] : undefined;
  return clone(known ?? front.options.defaultUser ?? DEFAULT_USER);
}

export function send(res: http.ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

function faultReply(fault: Fault): Reply {
  const code = fault.status ?? 500;
  const reason = fault.reason ?? STATUS_REASON_BY_CODE[code];
  const message = fault.message ?? `injected failure (${code})`;
  const reply: Reply = { status: code, body: failure(code, reason, message).body };
  if (code === 429) reply.headers = { "retry-after": "1" };
  return reply;
}

async function routed(b: Backend, path: string, ctx: Ctx): Promise<Reply> {
  try {
    return await route(b, path.split("/").filter(Boolean), ctx);
  } catch (err) {
    if (err instanceof ApiError) return { status: err.body.code, body: err.body };
    return { status: 500, body: internalError((err as Error).message).body };
  }
}

function contentTypeOf(req: http.IncomingMessage): string {
  return (
    String(req.headers["content-type"] ?? "application/json")
      .split(";")[0]
      ?.trim() ?? ""
  );
}

async function handle(b: Backend, front: Front, req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = (req.method ?? "GET").toUpperCase();
  const user = userOf(front, req);
  const record: RequestRecord = {
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    status: 0,
  };
  if (user.username) record.user = user.username;
  front.requests.push(record);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const latencyMs = front.latencyMs();
  if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));

  const fault = front.faults.take(method, url.pathname);
  if (fault?.action === "reset") {
    req.socket.destroy();
    return;
  }
  if (fault?.action === "hang") return;
  const body = Buffer.concat(chunks).toString("utf8");
  const ctx: Ctx = { method, query: url.searchParams, body, contentType: contentTypeOf(req), user };
  if (typeof req.headers.accept === "string") ctx.accept = req.headers.accept;
  const reply = fault ? faultReply(fault) : await routed(b, url.pathname, ctx);
  record.status = reply.status;
  if (!res.destroyed) send(res, reply);
}

/** The node:http listener; an error that escapes becomes a 500 Status. */
export function requestListener(b: Backend, front: Front): http.RequestListener {
  return (req, res) => {
    handle(b, front, req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        send(res, { status: 500, body: internalError(String(err)).body });
      }
    });
  };
}
