// What an unauthenticated caller may cost the server before it proves who it is (issue 35, point 4): short
// header and request timeouts, a cap on connections, and nothing read from a request that failed the path
// secret (404) or the client certificate (403): the answer goes out and the connection is closed at once.
// Bounded by counts and generous waits that a slow machine cannot trip (a connection the server keeps open
// fails the test at the wait's end), never by timing the server.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { dirname, resolve } from "node:path";
import { afterEach, describe, it } from "node:test";
import tls from "node:tls";
import { fileURLToPath } from "node:url";
import {
  createApp,
  DEFAULT_SERVER_LIMITS,
  drainAndClose,
  listen,
  type ServerLimits,
} from "../../functions/runtime/http-server.js";
import { readTlsMaterial } from "../../functions/runtime/tls-files.js";
import { allow, parseReview, type ReviewHandler, rejectReview } from "../../shared/admission/review.js";
import { silentLog } from "../support/logs.js";

const quiet = silentLog();
const SECRET = "Zm9vYmFyYmF6cXV4LXNlY3JldC1wYXRo";
const here = dirname(fileURLToPath(import.meta.url));
const tlsDir = resolve(here, "../../../test/support/tls");
const pem = (name: string) => readFileSync(resolve(tlsDir, name));
/** Far beyond every limit under test, far below Node's 300 s request timeout and the old 66 s header one. */
const GENEROUS_MS = 25_000;

const handle: ReviewHandler = async (body) => {
  const parsed = parseReview(body);
  return parsed.ok ? allow(parsed.request) : rejectReview(parsed);
};

let server: Server | undefined;
afterEach(async () => {
  if (server) await drainAndClose(server, 1_000, 0);
  server = undefined;
});

function portOf(s: Server): number {
  return (s.address() as AddressInfo).port;
}

interface Held {
  /** Everything the server sent. */
  received(): string;
  /** Resolves true when the server closed the connection, false when GENEROUS_MS passed first. */
  closed: Promise<boolean>;
  socket: net.Socket;
}

function hold(socket: net.Socket): Held {
  let text = "";
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  const closed = new Promise<boolean>((done) => {
    const timer = setTimeout(() => done(false), GENEROUS_MS);
    socket.once("close", () => {
      clearTimeout(timer);
      done(true);
    });
  });
  return { received: () => text, closed, socket };
}

function plain(port: number): Promise<Held> {
  return new Promise((done, fail) => {
    const socket = net.connect(port, "127.0.0.1", () => done(hold(socket)));
    socket.once("error", fail);
  });
}

function secure(port: number, client?: "apiserver"): Promise<Held> {
  return new Promise((done, fail) => {
    const socket = tls.connect(
      {
        port,
        host: "127.0.0.1",
        ca: pem("test-ca.crt"),
        ...(client ? { cert: pem(`${client}.crt`), key: pem(`${client}.key`) } : {}),
      },
      () => done(hold(socket)),
    );
    socket.once("error", fail);
  });
}

/** Headers of a POST announcing a 1 MB body, and its first byte: the rest never comes. */
const slowPost = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`;

describe("pre-authentication limits", () => {
  it("defaults: headers within a few seconds, the whole request well inside the webhook timeout, a connection cap", () => {
    const d: ServerLimits = DEFAULT_SERVER_LIMITS;
    assert.ok(d.headersTimeoutMs <= 10_000, `headers ${d.headersTimeoutMs}`);
    assert.ok(d.requestTimeoutMs <= 15_000, `request ${d.requestTimeoutMs} (webhook timeout: 30 s at most)`);
    assert.ok(d.handshakeTimeoutMs <= 10_000, `TLS handshake ${d.handshakeTimeoutMs}`);
    assert.ok(d.maxConnections >= 64 && d.maxConnections <= 10_000, `cap ${d.maxConnections}`);
  });

  it("a listening server carries them (and a caller's own)", async () => {
    server = await listen(createApp(handle, quiet), 0, "127.0.0.1");
    assert.equal(server.headersTimeout, DEFAULT_SERVER_LIMITS.headersTimeoutMs);
    assert.equal(server.requestTimeout, DEFAULT_SERVER_LIMITS.requestTimeoutMs);
    assert.equal(server.maxConnections, DEFAULT_SERVER_LIMITS.maxConnections);
    await drainAndClose(server, 1_000, 0);
    server = await listen(createApp(handle, quiet), 0, "127.0.0.1", undefined, { maxConnections: 7 });
    assert.equal(server.maxConnections, 7);
  });

  it("closes a connection whose headers never end", async () => {
    server = await listen(createApp(handle, quiet), 0, "127.0.0.1", undefined, {
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    const held = await plain(portOf(server));
    held.socket.write("POST / HTTP/1.1\r\nHost: a\r\n");
    assert.equal(await held.closed, true, "the server kept a connection whose headers never ended");
  });

  it("closes a connection whose body never ends", async () => {
    server = await listen(createApp(handle, quiet), 0, "127.0.0.1", undefined, {
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    const held = await plain(portOf(server));
    held.socket.write(slowPost("/"));
    assert.equal(await held.closed, true, "the server kept a connection whose body never ended");
  });

  it("refuses connections beyond the cap, and takes new ones when one ends", async () => {
    server = await listen(createApp(handle, quiet), 0, "127.0.0.1", undefined, { maxConnections: 3 });
    const port = portOf(server);
    const kept = [await plain(port), await plain(port), await plain(port)];
    const extra = await plain(port);
    assert.equal(await extra.closed, true, "a fourth connection was kept");
    (kept[0] as Held).socket.destroy();
    await (kept[0] as Held).closed;
    const next = await plain(port);
    next.socket.write("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    await next.closed;
    assert.match(next.received(), /^HTTP\/1\.1 200/);
    for (const k of kept) k.socket.destroy();
  });

  it("answers a wrong path 404 and closes at once, reading none of the body", async () => {
    server = await listen(createApp(handle, quiet, { pathSecret: SECRET }), 0, "127.0.0.1");
    const held = await plain(portOf(server));
    held.socket.write(slowPost("/not-the-secret"));
    assert.equal(await held.closed, true, "the connection stayed open for the body after the 404");
    assert.match(held.received(), /^HTTP\/1\.1 404/);
    assert.match(held.received(), /connection: close/i);
  });

  it("answers a review without a verified client certificate 403 and closes at once", async () => {
    const material = readTlsMaterial({
      certFile: resolve(tlsDir, "server.crt"),
      keyFile: resolve(tlsDir, "server.key"),
      clientCaFile: resolve(tlsDir, "test-ca.crt"),
    });
    const app = createApp(handle, quiet, { requireClientCert: true });
    server = await listen(app, 0, "127.0.0.1", material);
    const held = await secure(portOf(server));
    held.socket.write(slowPost("/"));
    assert.equal(await held.closed, true, "the connection stayed open for the body after the 403");
    assert.match(held.received(), /^HTTP\/1\.1 403/);

    const trusted = await secure(portOf(server), "apiserver");
    trusted.socket.write(
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    await trusted.closed;
    assert.match(trusted.received(), /^HTTP\/1\.1 200/, "a verified caller's request is still read");
    assert.match(trusted.received(), /admission review has no request/);
  });
});
