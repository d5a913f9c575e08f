import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { createLogger, type LogFormat, lazyChild, withBindings } from "../../shared/base/log.js";
import { capturingLog } from "../support/logs.js";

/** The JSON lines a logger of `format` writes for one info and one warn line. */
function linesIn(format: LogFormat): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger("info", sink, format).child({ function: "mutate-create" });
  log.info({ pod: "p" }, "review done");
  log.warn("pinned");
  return lines;
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("log shape", () => {
  it("json (the default): string levels and ISO 8601 times, the message in msg", () => {
    const [info, warn] = linesIn("json");
    assert.equal(info?.level, "info");
    assert.equal(warn?.level, "warn");
    assert.match(String(info?.time), ISO_TIME);
    assert.equal(info?.msg, "review done");
    assert.deepEqual([info?.app, info?.function, info?.pod], ["simkube-fn", "mutate-create", "p"]);
  });

  it("gcp: Cloud Logging's severity and message, ISO times, no numeric level", () => {
    const [info, warn] = linesIn("gcp");
    assert.deepEqual([info?.severity, warn?.severity], ["INFO", "WARNING"]);
    assert.equal(info?.message, "review done");
    assert.equal(info?.level, undefined);
    assert.match(String(info?.time), ISO_TIME);
  });

  it("pino: pino's own numbers, for its tooling", () => {
    const [info] = linesIn("pino");
    assert.equal(info?.level, 30);
    assert.equal(typeof info?.time, "number");
  });
});

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
    assert.equal(lines[0]?.level, "info");
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
