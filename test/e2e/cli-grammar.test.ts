// One grammar for every command, from the built CLI (dist/bundle/simkube-fn.mjs, what users and the image run):
// `X --help`, `X -h`, `X SUBCOMMAND --help` and `help X` print the same bytes; a usage error exits 2 with two
// short lines on stderr (the message, then where the usage is) under the one prefix; the old `--sim` still
// works, with a one-line warning. A file of its own: it spawns Node about 40 times.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { COMMANDS } from "../../functions/cli/args.js";
import { CLI } from "../support/serve-cli.js";

function cli(args: string[]) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  if (process.env.NODE_V8_COVERAGE) env.NODE_V8_COVERAGE = process.env.NODE_V8_COVERAGE;
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 30_000, env });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Per command, the other ways of asking for its help: after a subcommand or an argument too. */
const MORE_HELP: Readonly<Record<string, string[][]>> = {
  serve: [["mutate-create", "--help"]],
  manifests: [["webhook", "--help"]],
  trace: [
    ["build", "--help"],
    ["inspect", "-h"],
    ["lookup", "x", "--help"],
  ],
  cluster: [["up", "--help"]],
  loadtest: [["teardown", "--target", "http://127.0.0.1:1/", "--help"]],
};

describe("one CLI grammar", { timeout: 600_000 }, () => {
  it("every command's help is the same bytes however it is asked for", () => {
    for (const command of COMMANDS) {
      const help = cli(["help", command]);
      assert.equal(help.status, 0, `help ${command}: ${help.stderr}`);
      assert.match(help.stdout, new RegExp(`^Usage:\\n  simkube-fn ${command} `));
      for (const args of [["--help"], ["-h"], ...(MORE_HELP[command] ?? [])]) {
        const run = cli([command, ...args]);
        const what = `${command} ${args.join(" ")}`;
        assert.deepEqual(run, { status: 0, stdout: help.stdout, stderr: "" }, what);
      }
    }
  });

  it("usage errors exit 2 with the message and a hint, one prefix, no usage dump", () => {
    const cases: [string[], string, string][] = [
      [["trace"], 'trace needs a subcommand: "build", "inspect", "lookup"', "trace"],
      [["cluster"], 'cluster needs a subcommand: "up"', "cluster"],
      [["loadtest"], 'loadtest needs a subcommand: "teardown"', "loadtest"],
      [
        ["trace", "frobnicate"],
        'trace has no subcommand "frobnicate": "build", "inspect", "lookup"',
        "trace",
      ],
      [["serve", "mutate-create", "--bogus"], "Unknown option '--bogus'", "serve"],
      [["replay", "--speed", "0"], "--speed must be a positive number, got 0", "replay"],
      [["manifests", "--min-scale", "x"], '--min-scale must be a whole number, got "x"', "manifests"],
      [["hash-pod"], "hash-pod takes one argument: a file, or - for stdin", "hash-pod"],
      [["loadtest", "teardown"], "--target URL is required", "loadtest"],
      [["cluster", "up", "--real-nodes"], "Unknown option '--real-nodes'", "cluster"],
      [["trace", "inspect"], "expected one trace file", "trace"],
    ];
    for (const [argv, message, command] of cases) {
      const run = cli(argv);
      assert.deepEqual(
        run,
        {
          status: 2,
          stdout: "",
          stderr: `simkube-fn: ${message}\nrun 'simkube-fn help ${command}' for its usage\n`,
        },
        argv.join(" "),
      );
    }
    const unknown = cli(["deploy"]);
    assert.equal(unknown.status, 2);
    assert.equal(
      unknown.stderr,
      "simkube-fn: unknown command \"deploy\"\nrun 'simkube-fn help' for the commands\n",
    );
  });

  it("--sim still names the Simulation for loadtest, with a one-line warning", () => {
    // No --target: the run stops at the usage error, after the warning, without sending anything.
    const run = cli(["loadtest", "teardown", "--sim", "old-spelling"]);
    assert.equal(run.status, 2);
    const lines = run.stderr.split("\n");
    assert.equal(lines[0], "simkube-fn: --sim is deprecated: use --sim-name");
    assert.equal(lines[1], "simkube-fn: --target URL is required");
    const renamed = cli(["loadtest", "teardown", "--sim-name", "new-spelling"]);
    assert.doesNotMatch(renamed.stderr, /deprecated/);
  });
});
