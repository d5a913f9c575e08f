// The help texts are true to the parsers: every --flag a command's usage names is one its parser accepts (and
// for cluster up, whose flags are few, the usage names every one). A flag renamed in the parser and not in the
// help fails here.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CommandName, parseCommandLine, UsageError, usage } from "../../functions/cli/args.js";
import { parseClusterArgs } from "../../functions/cli/cluster/command.js";
import { LOADTEST_USAGE, parseTeardownArgs } from "../../functions/cli/loadtest/command.js";

/**
 * The long flags a usage text names, without the ones every command has. A FUNCTION placeholder stands for
 * each function's name.
 */
function flagsNamed(text: string): Set<string> {
  const expanded = text.replace(/(--[a-z-]+-)FUNCTION\b/g, "$1mutate-create $1reschedule-delete");
  const flags = new Set(expanded.match(/--[a-z][a-z0-9-]*/g) ?? []);
  flags.delete("--help");
  flags.delete("--version");
  return flags;
}

/** Whether `parse` refuses the flag as unknown (any other complaint, such as a missing value, is fine). */
function refusedAsUnknown(parse: (args: string[]) => unknown, args: string[]): boolean {
  try {
    parse(args);
    return false;
  } catch (err) {
    return /unknown option/i.test((err as Error).message);
  }
}

// The first arguments each command needs before its flags.
const PREFIX: Partial<Record<CommandName, string[]>> = { serve: ["serve", "mutate-create"] };

describe("help texts name exactly the flags the parsers take", () => {
  for (const command of ["serve", "replay", "manifests"] as const) {
    it(command, () => {
      const named = flagsNamed(usage(command));
      // replay's text says the running cluster must have been started with `cluster up --reschedule`.
      if (command === "replay") named.delete("--reschedule");
      assert.ok(named.size > 0, `${command}'s usage names flags`);
      for (const flag of named) {
        const argv = [...(PREFIX[command] ?? [command]), flag, "x"];
        assert.equal(refusedAsUnknown(parseCommandLine, argv), false, `${command} ${flag}`);
      }
      assert.equal(refusedAsUnknown(parseCommandLine, [command, "--no-such-flag"]), true);
    });
  }

  it("cluster", () => {
    const named = flagsNamed(usage("cluster"));
    for (const flag of named) {
      const takesValue = ["--trace", "--sim-name", "--pod-reads"].includes(flag);
      const args = takesValue ? ["up", flag, flag === "--pod-reads" ? "cluster" : "x"] : ["up", flag];
      assert.equal(refusedAsUnknown(parseClusterArgs, args), false, `cluster ${flag}`);
    }
    assert.deepEqual([...named].sort(), [
      "--cert-manager",
      "--insecure-dev",
      "--json",
      "--knative",
      "--no-cert-manager",
      "--openfaas",
      "--pod-reads",
      "--real-node",
      "--reschedule",
      "--sim-name",
      "--trace",
    ]);
    assert.equal(refusedAsUnknown(parseClusterArgs, ["up", "--no-such-flag"]), true);
  });

  it("loadtest", () => {
    for (const flag of flagsNamed(LOADTEST_USAGE)) {
      const args = ["teardown", "--target", "http://127.0.0.1:1/", flag, "1"];
      assert.equal(refusedAsUnknown(parseTeardownArgs, args), false, `loadtest ${flag}`);
    }
  });

  it("a usage error from node:util names the flag, without its advice about '--'", () => {
    const err = (() => {
      try {
        parseCommandLine(["replay", "--bogus"]);
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof UsageError);
    assert.match(err.message, /'--bogus'/);
    assert.doesNotMatch(err.message, /positional/);
  });
});
