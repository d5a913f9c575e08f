// Reading a trace from a file or a URL, as the trace cache does: only regular files, within a deadline that a
// stuck file system cannot defeat, and a version by which a change is told (stat for files; ETag or
// Last-Modified for downloads).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { closeSync, open as openCallback } from "node:fs";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadTrace, loadTraceForLookupsIfChanged } from "../../shared/trace/reader.js";
import { buildTraceBytes } from "../support/trace-builder.js";
import { rejectsWithTraceError } from "../support/trace-errors.js";

const traceA = buildTraceBytes({ index: { "apps/v1.Deployment": ["ns/a"] } });
const traceB = buildTraceBytes({ index: { "apps/v1.Deployment": ["ns/b", "ns/bb"] } });

function deployments(loaded: { trace: { index: Map<string, Map<string, string>> } } | undefined) {
  return [...(loaded?.trace.index.get("apps/v1.Deployment")?.keys() ?? [])];
}

describe("trace files: only regular files, within a deadline", () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "trace-file-test-"));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a FIFO at once instead of hanging on its open", { timeout: 10_000 }, async () => {
    const fifo = join(dir, "fifo.sktrace");
    execFileSync("mkfifo", [fifo]);
    await rejectsWithTraceError(
      loadTrace(fifo, { timeoutMs: 60_000 }),
      `could not read trace file ${fifo}: not a regular file (a FIFO)`,
    );
    await assert.rejects(loadTrace(`file://${fifo}`, { timeoutMs: 60_000 }), /not a regular file \(a FIFO\)/);
  });

  it("refuses a device that never ends, before reading from it", async () => {
    await rejectsWithTraceError(
      loadTrace("/dev/zero"),
      "could not read trace file /dev/zero: not a regular file (a character device)",
    );
  });

  it("gives up on a regular file the file system does not deliver within the deadline", {
    timeout: 10_000,
  }, async () => {
    const path = join(dir, "slow.sktrace");
    await writeFile(path, traceA);
    // A stuck file system, made real: every libuv thread-pool thread blocks in the open of a FIFO (as a hung
    // NFS server would hold them), so the file's stat and open wait in the queue.
    const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    const blockers = Array.from({ length: threads }, (_, i) => join(dir, `blocker-${i}`));
    for (const blocker of blockers) execFileSync("mkfifo", [blocker]);
    const opened = blockers.map(
      (blocker) => new Promise<number>((resolve) => openCallback(blocker, "r", (_err, fd) => resolve(fd))),
    );
    try {
      await rejectsWithTraceError(
        loadTrace(path, { timeoutMs: 300 }),
        `could not read trace file ${path}: timed out after 300 ms`,
      );
    } finally {
      // A writer for each FIFO (a child process: its own threads) lets the blocked opens return.
      const writer = spawn("sh", ["-c", 'for f in "$@"; do : > "$f"; done', "sh", ...blockers]);
      await new Promise((resolve) => writer.on("exit", resolve));
      for (const fd of await Promise.all(opened)) closeSync(fd);
    }
  });

  it("tells a file changed in place or replaced by its version, without reading an unchanged one", async () => {
    const path = join(dir, "changing.sktrace");
    await writeFile(path, traceA);
    const first = await loadTraceForLookupsIfChanged(path);
    assert.deepEqual(deployments(first), ["ns/a"]);
    assert.match(first?.version ?? "", /^file:/);
    assert.equal(first?.bytes, traceA.byteLength);
    assert.equal(await loadTraceForLookupsIfChanged(path, {}, first?.version), undefined);
    await writeFile(path, traceB);
    const second = await loadTraceForLookupsIfChanged(path, {}, first?.version);
    assert.deepEqual(deployments(second), ["ns/b", "ns/bb"]);
    // Replaced by rename, as a ConfigMap volume swaps its files: a new inode, so a new version.
    const next = join(dir, "next.sktrace");
    await writeFile(next, traceA);
    await rename(next, path);
    const third = await loadTraceForLookupsIfChanged(path, {}, second?.version);
    assert.deepEqual(deployments(third), ["ns/a"]);
  });

  it("checks the kind of file on every recheck too", async () => {
    const path = join(dir, "becomes-fifo.sktrace");
    await writeFile(path, traceA);
    const first = await loadTraceForLookupsIfChanged(path);
    await rm(path);
    execFileSync("mkfifo", [path]);
    await assert.rejects(
      loadTraceForLookupsIfChanged(path, {}, first?.version),
      /not a regular file \(a FIFO\)/,
    );
  });
});

describe("trace downloads: a version from ETag or Last-Modified, asked with a conditional GET", () => {
  let server: Server;
  let base: string;
  let body = traceA;
  let etag = '"a"';
  const modified = "Wed, 21 Oct 2026 07:28:00 GMT";
  const requests: Array<{ path: string; ifNoneMatch?: string; ifModifiedSince?: string }> = [];

  before(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const ifNoneMatch = req.headers["if-none-match"];
      const ifModifiedSince = req.headers["if-modified-since"];
      requests.push({ path, ifNoneMatch, ifModifiedSince });
      if (path === "/etag") {
        res.setHeader("etag", etag);
        if (ifNoneMatch === etag) return void res.writeHead(304).end();
      } else if (path === "/modified") {
        res.setHeader("last-modified", modified);
        if (ifModifiedSince === modified) return void res.writeHead(304).end();
      }
      res.end(body);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  it("sends If-None-Match with the ETag, and reloads only when the server says it changed", async () => {
    body = traceA;
    etag = '"a"';
    const first = await loadTraceForLookupsIfChanged(`${base}/etag`);
    assert.equal(first?.version, 'etag:"a"');
    assert.equal(await loadTraceForLookupsIfChanged(`${base}/etag`, {}, first?.version), undefined);
    assert.equal(requests.at(-1)?.ifNoneMatch, '"a"');
    body = traceB;
    etag = '"b"';
    const second = await loadTraceForLookupsIfChanged(`${base}/etag`, {}, first?.version);
    assert.deepEqual(deployments(second), ["ns/b", "ns/bb"]);
    assert.equal(second?.version, 'etag:"b"');
  });

  it("sends If-Modified-Since when the server gives only Last-Modified", async () => {
    body = traceA;
    const first = await loadTraceForLookupsIfChanged(`${base}/modified`);
    assert.equal(first?.version, `modified:${modified}`);
    assert.equal(await loadTraceForLookupsIfChanged(`${base}/modified`, {}, first?.version), undefined);
    assert.equal(requests.at(-1)?.ifModifiedSince, modified);
  });

  it("reads again every time from a server that gives no version", async () => {
    body = traceA;
    const first = await loadTraceForLookupsIfChanged(`${base}/plain`);
    assert.equal(first?.version, undefined);
    body = traceB;
    const second = await loadTraceForLookupsIfChanged(`${base}/plain`, {}, first?.version);
    assert.deepEqual(deployments(second), ["ns/b", "ns/bb"]);
  });
});
