import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { COMMANDS, type Command, parseCommandLine, UsageError, usage } from "../../functions/cli/args.js";

function usageError(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (err) {
    assert.ok(err instanceof UsageError, `expected a UsageError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected a UsageError for ${argv.join(" ")}`);
}

describe("parseCommandLine (functions/cli/args.ts)", () => {
  it("serve: one function name, --port and --check", () => {
    assert.deepEqual(parseCommandLine(["serve", "mutate-create"]), {
      command: "serve",
      name: "mutate-create",
      flags: {},
      check: false,
    } satisfies Command);
    assert.deepEqual(parseCommandLine(["serve", "reschedule-delete", "--port", "9000", "--check"]), {
      command: "serve",
      name: "reschedule-delete",
      flags: { port: "9000" },
      check: true,
    } satisfies Command);
    // The port is checked with the environment's PORT by loadConfig, not here.
    assert.deepEqual(parseCommandLine(["serve", "--port=abc", "mutate-create"]), {
      command: "serve",
      name: "mutate-create",
      flags: { port: "abc" },
      check: false,
    } satisfies Command);
  });

  it("serve: a missing, unknown or second function name is a usage error of serve", () => {
    for (const argv of [["serve"], ["serve", "hash-pod"], ["serve", "mutate-create", "reschedule-delete"]]) {
      const err = usageError(argv);
      assert.equal(err.message, "serve takes one function name: mutate-create or reschedule-delete");
      assert.equal(err.command, "serve");
    }
  });

  it("an unknown flag or a flag without its value is a usage error of that command", () => {
    for (const [argv, command] of [
      [["serve", "mutate-create", "--bogus"], "serve"],
      [["serve", "mutate-create", "--port"], "serve"],
      [["replay", "--trace"], "replay"],
      [["manifests", "--sim-name", "s", "--verbose"], "manifests"],
    ] as const) {
      const err = usageError([...argv]);
      assert.equal(err.command, command);
      assert.match(err.message, /--bogus|--port|--trace|--verbose/);
    }
  });

  it("replay: defaults, flags and --speed checks", () => {
    assert.deepEqual(parseCommandLine(["replay"]), {
      command: "replay",
      simName: "local-sim",
      speed: 1,
      json: false,
    });
    assert.deepEqual(
      parseCommandLine(["replay", "--trace", "t.sktrace", "--sim-name", "s1", "--speed", "2.5", "--json"]),
      {
        command: "replay",
        trace: "t.sktrace",
        simName: "s1",
        speed: 2.5,
        json: true,
      },
    );
    for (const speed of ["0", "-1", "fast", "Infinity"]) {
      const err = usageError(["replay", `--speed=${speed}`]);
      assert.equal(err.message, `--speed must be a positive number, got ${speed}`);
      assert.equal(err.command, "replay");
    }
    assert.equal(usageError(["replay", "extra"]).message, 'unexpected argument "extra"');
    // parseArgs will not take "-1" as a value after a space: a usage error too, just not ours.
    assert.equal(usageError(["replay", "--speed", "-1"]).command, "replay");
  });

  it("manifests: every flag reaches the deployment options", () => {
    const parsed = parseCommandLine([
      "manifests",
      "--sim-name",
      "sim-1",
      "--target",
      "openfaas-stack",
      "--namespace",
      "fns",
      "--image",
      "registry.example/simkube-fn:1",
      "--webhook-url-base",
      "https://fn.example",
      "--webhook-mode",
      "service",
      "--trace-path",
      "https://traces.example/t.sktrace",
      "--min-scale",
      "1",
      "--virtual-ns-prefix",
      "sim",
      "--path-secret",
      "s3cret-segment-of-enough-length",
      "--reschedule",
    ]);
    assert.deepEqual(parsed, {
      command: "manifests",
      request: {
        kind: "deployment",
        options: {
          target: "openfaas-stack",
          simName: "sim-1",
          rescheduleInterruptedBarePods: true,
          namespace: "fns",
          image: "registry.example/simkube-fn:1",
          webhookUrlBase: "https://fn.example",
          webhookMode: "service",
          tracePath: "https://traces.example/t.sktrace",
          minScale: 1,
          virtualNsPrefix: "sim",
          pathSecret: "s3cret-segment-of-enough-length",
        },
      },
    } satisfies Command);
  });

  it("manifests: no optional fields set by default; webhook is its one subcommand", () => {
    assert.deepEqual(parseCommandLine(["manifests", "--sim-name", "s"]), {
      command: "manifests",
      request: { kind: "deployment", options: { simName: "s" } },
    } satisfies Command);
    // Without --sim-name the deployment serves every Simulation.
    assert.deepEqual(parseCommandLine(["manifests"]), {
      command: "manifests",
      request: { kind: "deployment", options: {} },
    } satisfies Command);
    const webhook = parseCommandLine(["manifests", "webhook", "--sim-name", "s", "--ca-bundle", "ca.pem"]);
    assert.deepEqual(webhook, {
      command: "manifests",
      request: { kind: "webhook", options: { simName: "s" }, caBundleFile: "ca.pem" },
    } satisfies Command);
  });

  it("manifests: --reschedule and --no-reschedule set rescheduling on and off; both together is a usage error", () => {
    const options = (flags: string[]) => {
      const parsed = parseCommandLine(["manifests", ...flags]);
      return parsed.command === "manifests" ? parsed.request.options : {};
    };
    assert.equal(options(["--reschedule"]).rescheduleInterruptedBarePods, true);
    assert.equal(options(["--no-reschedule"]).rescheduleInterruptedBarePods, false);
    assert.equal(options([]).rescheduleInterruptedBarePods, undefined);
    assert.throws(
      () => parseCommandLine(["manifests", "--reschedule", "--no-reschedule"]),
      /--reschedule and --no-reschedule contradict each other/,
    );
  });

  it("manifests: a malformed number, an unknown flag or a stray argument is a usage error of manifests", () => {
    const cases: [string[], RegExp][] = [
      [["--min-scale", "1.5"], /--min-scale must be a whole number/],
      [["--min-scale", "one"], /--min-scale must be a whole number/],
      [["--helm"], /Unknown option '--helm'/],
      [["extra"], /unexpected argument "extra"/],
    ];
    for (const [flags, message] of cases) {
      const err = usageError(["manifests", "--sim-name", "s", ...flags]);
      assert.match(err.message, message);
      assert.equal(err.command, "manifests");
    }
  });

  it("hash-pod: exactly one file or -, taken as it is", () => {
    assert.deepEqual(parseCommandLine(["hash-pod", "-"]), { command: "hash-pod", file: "-" });
    assert.deepEqual(parseCommandLine(["hash-pod", "pod.yaml"]), { command: "hash-pod", file: "pod.yaml" });
    for (const argv of [["hash-pod"], ["hash-pod", "a.yaml", "b.yaml"]]) {
      const err = usageError(argv);
      assert.equal(err.message, "hash-pod takes one argument: a file, or - for stdin");
      assert.equal(err.command, "hash-pod");
    }
  });

  it("loadtest: the arguments go to the load tester untouched", () => {
    assert.deepEqual(parseCommandLine(["loadtest", "teardown", "--target", "http://x", "--json"]), {
      command: "loadtest",
      args: ["teardown", "--target", "http://x", "--json"],
    });
  });

  it("--help and -h work on every command, before or after other arguments", () => {
    for (const command of ["serve", "replay", "manifests", "hash-pod"] as const) {
      for (const flag of ["--help", "-h"]) {
        assert.deepEqual(parseCommandLine([command, flag]), { command: "help", topic: command });
      }
    }
    // Help wins over what would otherwise be an error.
    assert.deepEqual(parseCommandLine(["serve", "not-a-function", "--help"]), {
      command: "help",
      topic: "serve",
    });
    assert.deepEqual(parseCommandLine(["manifests", "--target", "helm", "-h"]), {
      command: "help",
      topic: "manifests",
    });
    assert.deepEqual(parseCommandLine(["replay", "--speed", "0", "--help"]), {
      command: "help",
      topic: "replay",
    });
    // One help per command: loadtest's is `help loadtest` too.
    assert.deepEqual(parseCommandLine(["loadtest", "--help"]), { command: "help", topic: "loadtest" });
    // Commands that hand their arguments on: help anywhere before a "--", subcommand or not.
    for (const argv of [
      ["cluster", "up", "--help"],
      ["cluster", "up", "--sim-name", "x", "-h"],
    ])
      assert.deepEqual(parseCommandLine(argv), { command: "help", topic: "cluster" });
    for (const sub of ["build", "inspect", "lookup"]) {
      for (const flag of ["--help", "-h"])
        assert.deepEqual(parseCommandLine(["trace", sub, flag]), { command: "help", topic: "trace" });
    }
    assert.deepEqual(parseCommandLine(["trace", "inspect", "--", "-h"]), {
      command: "trace",
      args: ["inspect", "--", "-h"],
    });
  });

  it("help, --help, -h, help COMMAND and --version", () => {
    for (const argv of [["help"], ["--help"], ["-h"]])
      assert.deepEqual(parseCommandLine(argv), { command: "help" });
    for (const command of COMMANDS) {
      assert.deepEqual(parseCommandLine(["help", command]), { command: "help", topic: command });
    }
    assert.equal(usageError(["help", "deploy"]).message, 'no help for "deploy"');
    assert.deepEqual(parseCommandLine(["--version"]), { command: "version" });
    assert.deepEqual(parseCommandLine(["version"]), { command: "version" });
  });

  it("no command or an unknown one is a usage error with the whole usage", () => {
    assert.equal(usageError([]).message, "no command given");
    const err = usageError(["deploy"]);
    assert.equal(err.message, 'unknown command "deploy"');
    assert.equal(err.command, undefined);
  });
});

describe("usage (functions/cli/args.ts)", () => {
  it("names every command and flag once in the whole usage", () => {
    const text = usage();
    for (const command of COMMANDS) assert.ok(text.includes(`simkube-fn ${command} `), command);
    for (const flag of [
      "--port",
      "--check",
      "--trace",
      "--speed",
      "--target",
      "--min-scale",
      "--webhook-mode",
    ]) {
      assert.ok(text.includes(flag), flag);
    }
    assert.ok(text.includes("simkube-fn --version"));
  });

  it("a command's usage is only its own section", () => {
    const serve = usage("serve");
    assert.ok(serve.startsWith("Usage:\n  simkube-fn serve <mutate-create|reschedule-delete>"));
    assert.ok(!serve.includes("simkube-fn replay"));
    assert.ok(usage().includes(serve.slice("Usage:\n".length)));
  });
});

describe("parseCommandLine: serve TLS flags and the trace command", () => {
  it("serve passes --tls-cert and --tls-key to the configuration as flags", () => {
    assert.deepEqual(
      parseCommandLine([
        "serve",
        "reschedule-delete",
        "--tls-cert",
        "c.pem",
        "--tls-key",
        "k.pem",
        "--port",
        "0",
      ]),
      {
        command: "serve",
        name: "reschedule-delete",
        flags: { port: "0", tlsCert: "c.pem", tlsKey: "k.pem" },
        check: false,
      },
    );
  });

  it("trace hands its arguments to the trace command, shows help on -h, and needs a subcommand", () => {
    assert.deepEqual(parseCommandLine(["trace", "inspect", "t.sktrace", "--json"]), {
      command: "trace",
      args: ["inspect", "t.sktrace", "--json"],
    });
    assert.deepEqual(parseCommandLine(["trace", "-h"]), { command: "help", topic: "trace" });
    for (const command of ["trace", "cluster", "loadtest"]) {
      const missing = usageError([command]);
      assert.equal(missing.command, command);
      assert.match(missing.message, new RegExp(`^${command} needs a subcommand: "`));
      assert.match(usageError([command, "frobnicate"]).message, /has no subcommand "frobnicate"/);
    }
    assert.match(usage("trace"), /trace lookup FILE --owner KIND\/NS\/NAME/);
  });
});

describe("parseCommandLine: deprecated spellings", () => {
  it("loadtest's --sim is read as --sim-name, with one warning, and never after --", () => {
    const warning = "simkube-fn: --sim is deprecated: use --sim-name\n";
    assert.deepEqual(parseCommandLine(["loadtest", "teardown", "--sim", "a", "--sim=b"]), {
      command: "loadtest",
      args: ["teardown", "--sim-name", "a", "--sim-name=b"],
      warnings: [warning],
    });
    assert.deepEqual(parseCommandLine(["loadtest", "teardown", "--", "--sim"]), {
      command: "loadtest",
      args: ["teardown", "--", "--sim"],
    });
    // Other commands have no --sim: it stays an unknown option there.
    assert.match(usageError(["replay", "--sim", "x"]).message, /Unknown option '--sim'/);
  });
});
