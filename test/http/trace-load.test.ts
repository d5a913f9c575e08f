// loadTrace: reading a trace from a path, a file:// URL and http(s), against a real local HTTP server.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { hasObject, loadTrace, TraceError } from "../../shared/trace.js";
import { buildTraceBytes } from "../support/trace-builder.js";

describe("loadTrace", () => {
  let dir: string;
  let server: Server;
  let base: string;
  const bytes = buildTraceBytes({ index: { "apps/v1.Deployment": ["ns/web"] } });
  const garbage = Buffer.from("<html>not a trace</html>");

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "trace-test-"));
    await writeFile(join(dir, "t.sktrace"), bytes);
    await writeFile(join(dir, "bad.sktrace"), garbage);
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/t.sktrace") return void res.end(bytes);
      if (path === "/garbage") return void res.end(garbage);
      if (path === "/hang") return; // never answers: the client's timeout must end it
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
    await assert.rejects(loadTrace(path), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.equal(err.message, `could not read trace file ${path}: no such file`);
      return true;
    });
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

  it("reports a non-2xx status, without the query string", async () => {
    await assert.rejects(loadTrace(`${base}/nope.sktrace?X-Amz-Signature=secret`), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.match(
        err.message,
        /could not download trace from http:\/\/127\.0\.0\.1:\d+\/nope\.sktrace: HTTP 404/,
      );
      assert.doesNotMatch(err.message, /secret/);
      return true;
    });
  });

  it("reports a download that is not a trace", async () => {
    await assert.rejects(loadTrace(`${base}/garbage`), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.match(err.message, /\/garbage: invalid trace/);
      return true;
    });
  });

  it("gives up on a server that never answers", async () => {
    await assert.rejects(loadTrace(`${base}/hang`, { timeoutMs: 100 }), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.match(err.message, /\/hang: timed out after 100 ms/);
      return true;
    });
  });

  it("rejects other URL schemes", async () => {
    await assert.rejects(loadTrace("s3://bucket/trace.sktrace"), (err: unknown) => {
      assert.ok(err instanceof TraceError);
      assert.match(err.message, /unsupported trace location "s3:\/\/bucket\/trace\.sktrace"/);
      return true;
    });
  });
});
