// The CLI as a process (dist/functions/cli/main.js, the module the bundle is built from): what each command
// prints and the exit codes main.ts maps failures to. Argument parsing itself is unit-tested in cli-args.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { hashPodText } from "../../functions/cli/hash-pod.js";
import { buildPod } from "../support/builders.js";
import { buildTraceBytes, finished } from "../support/trace-builder.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(HERE, "../../functions/cli/main.js");
const PACKAGE_JSON = path.resolve(HERE, "../../../package.json");

/** Only PATH (and c8's coverage directory, when set): no SIM_NAME or KUBECONFIG from the caller. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  if (process.env.NODE_V8_COVERAGE) env.NODE_V8_COVERAGE = process.env.NODE_V8_COVERAGE;
  return env;
}

function cli(args: string[], input?: string, env: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...baseEnv(), ...env },
    ...(input !== undefined ? { input } : {}),
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

// Each case spawns Node (under c8 in the test command) several times: minutes on a loaded 2-core machine.
describe("simkube-fn as a process", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-cli-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  // A cluster no one serves: serve starts with it (and stays not ready), where without any kubeconfig it stops.
  const deadKubeconfig = path.join(dir, "dead-kubeconfig");
  writeFileSync(
    deadKubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "none", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "none", user: { token: "none" } }],
      contexts: [{ name: "none", context: { cluster: "none", user: "none" } }],
      "current-context": "none",
    }),
  );

  it("--version prints package.json's version", () => {
    const { version } = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version: string };
    assert.deepEqual(cli(["--version"]), { status: 0, stdout: `simkube-fn ${version}\n`, stderr: "" });
  });

  it("--help on every command prints its usage and exits 0", () => {
    for (const command of ["serve", "replay", "manifests", "hash-pod"]) {
      const run = cli([command, "--help"]);
      assert.equal(run.status, 0, `${command} --help: ${run.stderr}`);
      assert.ok(run.stdout.startsWith(`Usage:\n  simkube-fn ${command} `), run.stdout);
      assert.equal(run.stderr, "");
    }
    const loadtest = cli(["loadtest", "--help"]);
    assert.equal(loadtest.status, 0);
    assert.ok(loadtest.stdout.startsWith("Usage:\n  simkube-fn loadtest teardown"));
    const all = cli(["help"]);
    assert.equal(all.status, 0);
    assert.ok(all.stdout.includes("simkube-fn serve") && all.stdout.includes("simkube-fn loadtest"));
  });

  it("a usage error exits 2 with the message and where that command's usage is, on stderr", () => {
    const run = cli(["hash-pod"]);
    assert.equal(run.status, 2);
    assert.equal(run.stdout, "");
    assert.equal(
      run.stderr,
      "simkube-fn: hash-pod takes one argument: a file, or - for stdin\nrun 'simkube-fn help hash-pod' for its usage\n",
    );
    const unknown = cli(["deploy"]);
    assert.equal(unknown.status, 2);
    assert.equal(
      unknown.stderr,
      "simkube-fn: unknown command \"deploy\"\nrun 'simkube-fn help' for the commands\n",
    );
  });

  it("bad configuration exits 2 with one line and no usage", () => {
    const serve = cli(["serve", "mutate-create", "--check"], undefined, { LOG_LEVEL: "loud" });
    assert.equal(serve.status, 2);
    assert.match(serve.stderr, /^simkube-fn: LOG_LEVEL must be one of[^\n]*\n$/);
    const manifests = cli([
      "manifests",
      "--sim-name",
      "s",
      "--webhook-url-base",
      "http://fn.example",
      "--path-secret",
      "0123456789abcdef".repeat(4),
    ]);
    assert.equal(manifests.status, 2);
    assert.match(manifests.stderr, /^simkube-fn: webhook URL "[^"]+" for mutate-create must use https/);
  });

  it("serve stops with exit 2 and one line naming the setting when a secret, CA or TLS file is unusable", () => {
    const tls = path.resolve(HERE, "../../../test/support/tls");
    const empty = path.join(dir, "empty-file");
    writeFileSync(empty, " \n");
    const https = { TLS_CERT_FILE: path.join(tls, "server.crt"), TLS_KEY_FILE: path.join(tls, "server.key") };
    const cases: [Record<string, string>, RegExp][] = [
      [{ WEBHOOK_PATH_SECRET_FILE: empty }, /^simkube-fn: WEBHOOK_PATH_SECRET_FILE \S+ is empty\n$/],
      [{ WEBHOOK_PATH_SECRET_FILE: " " }, /^simkube-fn: WEBHOOK_PATH_SECRET_FILE is set but empty[^\n]*\n$/],
      [{ WEBHOOK_PATH_SECRET: "" }, /^simkube-fn: WEBHOOK_PATH_SECRET is set but empty[^\n]*\n$/],
      [{ ...https, CLIENT_CA_FILE: empty }, /^simkube-fn: CLIENT_CA_FILE \S+ is empty\n$/],
      [{ ...https, CLIENT_CA_FILE: "" }, /^simkube-fn: CLIENT_CA_FILE is set but empty[^\n]*\n$/],
      [{ ...https, TLS_KEY_FILE: empty }, /^simkube-fn: TLS_KEY_FILE \(--tls-key\) \S+ is empty\n$/],
    ];
    for (const [env, stderr] of cases) {
      const serve = cli(["serve", "mutate-create", "--check", "--port", "0"], undefined, {
        SIM_NAME: "s",
        SEQUENCE_STORE: "memory",
        KUBECONFIG: deadKubeconfig,
        ...env,
      });
      assert.equal(serve.status, 2, `${JSON.stringify(env)}: ${serve.stderr}`);
      assert.match(serve.stderr, stderr);
    }
  });

  it("hash-pod prints the stable hash of a file or of stdin; a missing file exits 1", () => {
    const text = JSON.stringify(buildPod());
    const file = path.join(dir, "pod.json");
    writeFileSync(file, text);
    const expected = `${hashPodText(text)}\n`;
    assert.deepEqual(cli(["hash-pod", file]), { status: 0, stdout: expected, stderr: "" });
    assert.deepEqual(cli(["hash-pod", "-"], text), { status: 0, stdout: expected, stderr: "" });
    const missing = cli(["hash-pod", path.join(dir, "absent.json")]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^simkube-fn: ENOENT/);
  });

  it("manifests prints the deployment for the flags given", () => {
    const run = cli([
      "manifests",
      "--sim-name",
      "sim-x",
      "--webhook-mode",
      "service",
      "--reschedule",
      "--path-secret",
      "0123456789abcdef".repeat(4),
    ]);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /kind: MutatingWebhookConfiguration/);
    assert.match(run.stdout, /reschedule-delete/);
    assert.match(run.stdout, /sim-x/);
  });

  it("replay --trace runs the trace through both functions; TRACE_PATH is the fallback", () => {
    const pod = (name: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "ns1" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    });
    const trace = path.join(dir, "two-pods.sktrace");
    writeFileSync(
      trace,
      buildTraceBytes({
        events: [{ ts: 100, applied: [pod("a"), pod("b")] }],
        index: { "v1.Pod": ["ns1/a", "ns1/b"] },
        podLifecycles: [{ gvk: "v1.Pod", nsName: "ns1/a", hash: 0, lifecycles: [finished(100, 200)] }],
      }),
    );
    const summary =
      /2 pod\(s\) replayed, 2 pinned to virtual nodes, 1 with a completion time, 1 clone\(s\) after the interruption, 0 during teardown: OK/;
    const byFlag = cli(["replay", "--trace", trace, "--speed", "10"]);
    assert.equal(byFlag.status, 0, byFlag.stderr);
    assert.match(byFlag.stdout, summary);
    const byEnv = cli(["replay", "--speed", "10"], undefined, { TRACE_PATH: `file://${trace}` });
    assert.equal(byEnv.status, 0, byEnv.stderr);
    assert.match(byEnv.stdout, summary);
  });

  it("serve starts, logs listening, and exits 0 on SIGTERM", async () => {
    const env = {
      ...baseEnv(),
      SIM_NAME: "sim-x",
      SEQUENCE_STORE: "memory",
      HOME: dir,
      KUBECONFIG: deadKubeconfig,
    };
    const child = spawn(process.execPath, [MAIN, "serve", "mutate-create", "--port", "0"], { env });
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening" in 20 s:\n${out}`)), 20_000);
      child.stdout.on("data", () => {
        if (!out.includes('"listening"')) return;
        clearTimeout(timer);
        resolve();
      });
    });
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
    assert.match(out, /"shutting down"/);
  });
});
