import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lazyChild, withBindings } from "../../shared/log.js";
import { capturingLog } from "../support/logs.js";

describe("lazyChild", () => {
  it("computes its bindings only when a line is written at an enabled level, and only once", () => {
    const { log, lines } = capturingLog("warn");
    let bound = 0;
    const child = lazyChild(log, () => {
      bound++;
      return { uid: "u1" };
    });
    child.info({ decision: "mutated" }, "review done");
    child.debug("nothing");
    assert.equal(bound, 0);
    assert.equal(lines.length, 0);
    child.warn({ ops: 3 }, "pinned");
    child.error("denied");
    assert.equal(bound, 1);
    assert.deepEqual(
      lines.map((l) => [l.uid, l.msg, l.ops]),
      [
        ["u1", "pinned", 3],
        ["u1", "denied", undefined],
      ],
    );
  });

  it("writes what log.child would: the parent's base fields, the bindings, the line's own fields", () => {
    const { log, lines } = capturingLog("info");
    lazyChild(log, () => ({ pod: "p" })).info({ hash: "1" }, "review done");
    assert.equal(lines[0]?.app, "simkube-fn");
    assert.equal(lines[0]?.pod, "p");
    assert.equal(lines[0]?.hash, "1");
    assert.equal(lines[0]?.level, 30);
  });
});

describe("withBindings", () => {
  it("adds its fields to every line, whether the line starts with an object, a message or an error", () => {
    const { log, lines } = capturingLog("info");
    const simLog = withBindings(log, { sim: "sim-two" });
    simLog.info({ decision: "mutated" }, "review done");
    simLog.warn("plain message");
    simLog.error(new Error("boom"), "failed");
    simLog.debug("below the level");
    assert.deepEqual(
      lines.map((l) => [l.sim, l.msg, l.decision, (l.err as { message?: string } | undefined)?.message]),
      [
        ["sim-two", "review done", "mutated", undefined],
        ["sim-two", "plain message", undefined, undefined],
        ["sim-two", "failed", undefined, "boom"],
      ],
    );
  });
});
