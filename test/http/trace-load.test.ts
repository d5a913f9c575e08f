// loadTrace: reading a trace from a path, a file:// URL and http(s), against a real local HTTP server.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import {
  type AllowedLocation,
  deploymentTraceCheck,
  parseAllowedLocation,
} from "../../shared/trace/allowlist.js";
import { TraceError } from "../../shared/trace/error.js";
import { loadTrace } from "../../shared/trace/reader.js";
import { DEFAULT_MAX_TRACE_BYTES } from "../../shared/trace/source.js";
import { hasObject } from "../../shared/trace/tables.js";
import { buildTraceBytes } from "../support/trace-builder.js";
import { rejectsWithTraceError } from "../support/trace-errors.js";

describe("loadTrace", () => {
  let dir: string;
  let server: Server;
  let base: string;
  const bytes = buildTraceBytes({ index: { "apps/v1.Deployment": ["ns/web"] } });
  const garbage = Buffer.from("<html>not a trace</html>");
  const zeros = gzipSync(Buffer.alloc(8 * 1024 * 1024));
  /** Paths whose response was closed by the client (an endless body must be cut off, not drained). */
  const closedEarly = new Set<string>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "trace-test-"));
    await writeFile(join(dir, "t.sktrace"), bytes);
    await writeFile(join(dir, "bad.sktrace"), garbage);
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/t.sktrace") return void res.end(bytes);
      if (path === "/to" || path === "/loop") {
        // /to?target=URL: a redirect, as a server the allowlist trusts might answer; /loop: to itself
        const target = new URL(req.url ?? "/", "http://x").searchParams.get("target") ?? "/loop";
        res.writeHead(302, { location: target });
        return void res.end();
      }
      if (path === "/garbage") return void res.end(garbage);
      if (path === "/hang") return; // never answers: the client's timeout must end it
      if (path === "/endless") return void endless(res, () => closedEarly.add(path));
      if (path === "/drip") return void drip(res);
      if (path === "/announced") {
        res.setHeader("content-length", String(10 * 1024 ** 3));
        return void res.write(Buffer.alloc(1024));
      }
      if (path === "/gzip-bomb") {
        res.setHeader("content-encoding", "gzip");
        return void res.end(zeros);
      }
      res.statusCode = 404;
      res.end("not found");
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
    await rm(dir, { recursive: true, force: true });
  });

  it("loads a plain path and a file:// URL", async () => {
    const path = join(dir, "t.sktrace");
    for (const location of [path, pathToFileURL(path).href, `file:${path}`]) {
      const trace = await loadTrace(location);
      assert.ok(hasObject(trace, "apps/v1.Deployment", "ns/web"), location);
    }
  });

  it("names a missing file", async () => {
    const path = join(dir, "missing.sktrace");
    await rejectsWithTraceError(loadTrace(path), `could not read trace file ${path}: no such file`);
  });

  it("prefixes parse errors with the location", async () => {
    const path = join(dir, "bad.sktrace");
    await assert.rejects(loadTrace(path), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.ok(err.message.startsWith(`${path}: invalid trace`), err.message);
      return true;
    });
  });

  it("downloads over http", async () => {
    const trace = await loadTrace(`${base}/t.sktrace`, { timeoutMs: 10_000 });
    assert.ok(hasObject(trace, "apps/v1.Deployment", "ns/web"));
  });

  it("follows a redirect only inside the allowed locations, judging every hop", async () => {
    const check = deploymentTraceCheck(
      [parseAllowedLocation(`${base}/to`) as AllowedLocation],
      `${base}/t.sktrace`,
    );
    const to = (target: string) => `${base}/to?target=${encodeURIComponent(target)}`;
    const inside = await loadTrace(to(to("/t.sktrace")), { allowRedirect: check, timeoutMs: 10_000 });
    assert.ok(hasObject(inside, "apps/v1.Deployment", "ns/web"), "two hops, both allowed");
    for (const target of [
      "http://169.254.169.254/latest/meta-data/",
      "/garbage",
      to("http://127.0.0.1:1/x"),
    ]) {
      await rejectsWithTraceError(
        loadTrace(to(target), { allowRedirect: check, timeoutMs: 10_000 }),
        /outside the allowed trace locations/,
        target,
      );
    }
    await assert.rejects(
      loadTrace(`${base}/loop`, { allowRedirect: () => true, timeoutMs: 10_000 }),
      /more than 5 redirects/,
    );
  });

  it("reports a non-2xx status, without the query string", async () => {
    const message = await rejectsWithTraceError(
      loadTrace(`${base}/nope.sktrace?X-Amz-Signature=secret`),
      /could not download trace from http:\/\/127\.0\.0\.1:\d+\/nope\.sktrace: HTTP 404/,
    );
    assert.doesNotMatch(message, /secret/);
  });

  it("reports a download that is not a trace", async () => {
    await rejectsWithTraceError(loadTrace(`${base}/garbage`), /\/garbage: invalid trace/);
  });

  it("gives up on a server that never answers", async () => {
    await rejectsWithTraceError(
      loadTrace(`${base}/hang`, { timeoutMs: 100 }),
      /\/hang: timed out after 100 ms/,
    );
  });

  it("rejects URL schemes that are neither files, http(s) nor an object store", async () => {
    const message = await rejectsWithTraceError(
      loadTrace("ftp://host/trace.sktrace?token=secret"),
      /unsupported trace location "ftp:\/\/host\/trace\.sktrace"/,
    );
    assert.match(message, /s3:\/\/, gs:\/\/ or azure:\/\/ URL/);
  });

  it("cuts off an endless body at the cap, naming the URL without its query string", async () => {
    const message = await rejectsWithTraceError(
      loadTrace(`${base}/endless?X-Amz-Signature=secret`, { maxBytes: 1024 * 1024 }),
      /^could not download trace from http:\/\/127\.0\.0\.1:\d+\/endless: larger than the limit of 1048576 bytes \(stopped after \d+\)$/,
    );
    assert.doesNotMatch(message, /secret/);
    await waitFor(() => closedEarly.has("/endless"));
  });

  it("caps downloads by default", async () => {
    await rejectsWithTraceError(
      loadTrace(`${base}/endless`),
      new RegExp(`/endless: larger than the limit of ${DEFAULT_MAX_TRACE_BYTES} bytes`),
    );
  });

  it("refuses a body whose announced length is over the cap before reading it", async () => {
    await rejectsWithTraceError(
      loadTrace(`${base}/announced`, { maxBytes: 1024 * 1024 }),
      /\/announced: the server announced 10737418240 bytes, over the limit of 1048576 bytes/,
    );
  });

  it("counts bytes after decompression, so a gzip bomb stops at the cap", async () => {
    assert.ok(zeros.length < 64 * 1024, "the compressed body is small");
    await rejectsWithTraceError(
      loadTrace(`${base}/gzip-bomb`, { maxBytes: 1024 * 1024 }),
      /\/gzip-bomb: larger than the limit of 1048576 bytes/,
    );
  });

  it("gives up on a body that trickles in past the deadline", async () => {
    await rejectsWithTraceError(
      loadTrace(`${base}/drip`, { timeoutMs: 300 }),
      /\/drip: timed out after 300 ms/,
    );
  });

  it("caps files too", async () => {
    const path = join(dir, "big.sktrace");
    await writeFile(path, Buffer.alloc(5000));
    await rejectsWithTraceError(
      loadTrace(path, { maxBytes: 1000 }),
      new RegExp(`^could not read trace file ${path}: larger than the limit of 1000 bytes`),
    );
  });
});

/** Writes 64 KiB chunks for as long as the client reads them. */
function endless(res: ServerResponse, onClose: () => void): void {
  const chunk = Buffer.alloc(64 * 1024, 0x90);
  res.on("close", onClose);
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) {}
    if (!res.destroyed) res.once("drain", pump);
  };
  pump();
}

/** Headers at once, then a byte every 50 ms, forever. */
function drip(res: ServerResponse): void {
  res.writeHead(200);
  const timer = setInterval(() => res.write(Buffer.from([0x90])), 50);
  res.on("close", () => clearInterval(timer));
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((ok) => setTimeout(ok, 20));
  assert.ok(condition(), "condition not met within 2 s");
}
