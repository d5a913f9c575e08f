// The OpenFaaS entry's SIGTERM: the template's process has no shutdown of its own, so closeOnSigterm lets go
// of the sequence store's leases first and then ends the process as Node's default would have, within
// LET_GO_MS even when letting go hangs. Run in a child process: the signal is real.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LET_GO_MS } from "../../functions/runtime/openfaas/adapter.js";

const ADAPTER = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../functions/runtime/openfaas/adapter.js"),
).href;

/** A child that registers two closers (`closeMs` each, -1: never done), says "ready", and then idles. */
async function stopChild(closeMs: number): Promise<{ code: number | null; out: string; ms: number }> {
  const script = `
    const { closeOnSigterm } = await import(${JSON.stringify(ADAPTER)});
    const log = { info: (msg) => process.stdout.write(msg + "\\n") };
    const closer = (name) => () => new Promise((resolve) => {
      if (${closeMs} < 0) return;
      setTimeout(() => { process.stdout.write("closed " + name + "\\n"); resolve(); }, ${closeMs});
    });
    closeOnSigterm(closer("a"), log);
    closeOnSigterm(closer("b"), log);
    process.stdout.write("listeners " + process.listenerCount("SIGTERM") + "\\n");
    process.stdout.write("ready\\n");
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
  let out = "";
  child.stdout.on("data", (d) => {
    out += String(d);
  });
  child.stderr.on("data", (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  for (let i = 0; i < 200 && !out.includes("ready"); i++) await new Promise((r) => setTimeout(r, 25));
  assert.match(out, /ready/, out);
  const started = Date.now();
  child.kill("SIGTERM");
  const code = await exited;
  return { code, out, ms: Date.now() - started };
}

describe("OpenFaaS entry: SIGTERM", () => {
  it("lets go of every store (one listener however many), then exits 0", async () => {
    const { code, out } = await stopChild(50);
    assert.equal(code, 0, out);
    assert.match(out, /listeners 1\n/);
    assert.match(out, /closed a\n/);
    assert.match(out, /closed b\n/);
    assert.match(out, /leases let go; exiting/);
  });

  it("exits 0 within LET_GO_MS when letting go hangs", async () => {
    const { code, out, ms } = await stopChild(-1);
    assert.equal(code, 0, out);
    assert.doesNotMatch(out, /closed/);
    assert.ok(ms >= LET_GO_MS - 100 && ms < LET_GO_MS + 3_000, `exited after ${ms} ms`);
  });
});
