// The instruction counts (test/bench/instructions.ts) are only worth something if the loop they count runs
// each contender over every review, to the answer mutate-create or reschedule-delete would send. valgrind
// is not needed for that: the loop runs here as a plain program.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CONTENDERS } from "../bench/instruction-loop.js";
import { parseInstructionRefs } from "../bench/instructions.js";

const LOOP = join(dirname(fileURLToPath(import.meta.url)), "../bench/instruction-loop.js");

function runLoop(contender: string, passes: string): { status: number | null; out: string; err: string } {
  const { NODE_TEST_CONTEXT: _runner, ...env } = process.env;
  const run = spawnSync(process.execPath, [LOOP, contender, passes], { env, encoding: "utf8" });
  return { status: run.status, out: run.stdout, err: run.stderr };
}

describe("instruction counts", () => {
  it("reads the instruction total from cachegrind's summary", () => {
    assert.equal(parseInstructionRefs("==8773== \n==8773== I   refs:      5,261,587,027\n"), 5261587027);
    assert.equal(parseInstructionRefs("I refs: 12"), 12);
    assert.equal(parseInstructionRefs("==1== error: no such file"), undefined);
  });

  it("the counted loop answers every review, the function as the floor or the bare server does", () => {
    const lengths = new Map<string, number>();
    for (const contender of CONTENDERS) {
      const run = runLoop(contender, "1");
      assert.equal(run.status, 0, run.err);
      const report = JSON.parse(run.out) as { contender: string; answers: number; length: number };
      assert.equal(report.contender, contender);
      assert.equal(report.answers, 5000);
      lengths.set(contender, report.length);
    }
    // mutate-create's answers are the floor's text (test/unit/bench-floor.test.ts): patches, far longer
    // than the bare server's; on teardown reschedule-delete allows without a patch, as bare does.
    assert.equal(lengths.get("mutate-create"), lengths.get("create-floor"));
    assert.ok((lengths.get("mutate-create") ?? 0) > 5 * (lengths.get("create-bare") ?? 0));
    assert.equal(lengths.get("reschedule-delete"), lengths.get("teardown-bare"));
  });

  it("the loop refuses an unknown contender or pass count", () => {
    assert.equal(runLoop("nobody", "1").status, 2);
    assert.equal(runLoop("mutate-create", "0").status, 2);
  });
});
