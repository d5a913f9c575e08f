// The CLI's help and argument errors as a process (dist/functions/cli/main.js): every command's help exits 0,
// and cluster up and manifests refuse bad input at once with the flag named. A file of its own: each case
// spawns Node many times, which on a loaded machine takes minutes.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../functions/cli/main.js");

/** Only PATH (and c8's coverage directory, when set): no SIM_NAME or KUBECONFIG from the caller. */
function cli(args: string[], env: Record<string, string> = {}) {
  const base: Record<string, string> = { PATH: process.env.PATH ?? "" };
  if (process.env.NODE_V8_COVERAGE) base.NODE_V8_COVERAGE = process.env.NODE_V8_COVERAGE;
  const run = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...base, ...env },
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("simkube-fn help and argument errors", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-cli-help-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("--help on every command and subcommand, and -h where it used to fail, exit 0 with a usage", () => {
    // The parser's side of every command with both flags is in test/unit/cli-args; here, main.ts's.
    const runs = [
      ...[
        ["serve", "mutate-create"],
        ["manifests", "webhook"],
        ["loadtest", "teardown"],
        ["cluster"],
        ["trace"],
        ["help"],
      ].map((c) => [...c, "--help"]),
      ...[
        ["cluster", "up"],
        ["trace", "build"],
        ["trace", "inspect"],
        ["trace", "lookup"],
      ].flatMap((c) => [
        [...c, "--help"],
        [...c, "-h"],
      ]),
    ];
    for (const argv of runs) {
      const run = cli(argv);
      const what = argv.join(" ");
      assert.equal(run.status, 0, `${what}: ${run.stderr}`);
      assert.match(run.stdout, /^Usage:/, what);
      assert.equal(run.stderr, "", what);
    }
  });

  it("cluster up refuses a bad flag or Simulation name at once, exit 2, before looking for a control plane", () => {
    // A control-plane directory that does not exist: reaching the build would fail differently.
    const env = { SIMKUBE_FN_CONTROLPLANE_BIN: path.join(dir, "no-such-dir") };
    const badName = cli(["cluster", "up", "--sim-name", "Bad_Name"], env);
    assert.equal(badName.status, 2);
    assert.match(badName.stderr, /^simkube-fn: --sim-name "Bad_Name" is not a valid Simulation name: /);
    const badFlag = cli(["cluster", "up", "--real-nodes"], env);
    assert.equal(badFlag.status, 2);
    assert.match(badFlag.stderr, /^simkube-fn: Unknown option '--real-nodes'\n/);
    assert.doesNotMatch(badFlag.stderr, /positional/);
  });

  it("manifests without --platform or a webhook address says to add --platform", () => {
    for (const args of [
      ["manifests"],
      ["manifests", "webhook", "--sim-name", "s", "--path-secret", "a".repeat(32)],
    ]) {
      const run = cli(args);
      assert.equal(run.status, 2, args.join(" "));
      assert.match(run.stderr, /add --platform kind\|k3s\|managed\|openfaas\|kubernetes /);
      assert.doesNotMatch(run.stderr, /webhookUrlBase|webhookMode|pathSecret/);
    }
  });
});
