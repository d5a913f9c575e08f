// The README's main job: `simkube-fn replay` of SimKube's bare-pods trace against the embedded API double.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { replayLocally } from "../../functions/cli/replay/replay.js";
import { createLogger } from "../../shared/log.js";
import { buildTraceBytes, findSharedTrace, finished } from "../support/trace-builder.js";

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bundle/simkube-fn.mjs");
const quiet = createLogger("silent", new Writable({ write: (_c, _e, done) => done() }));

describe("local replay", { timeout: 60_000 }, () => {
  it("replays SimKube's bare-pods trace: every pod pinned, finished lifecycles applied, one clone, none on teardown", async (t) => {
    const tracePath = findSharedTrace("bare-pods.sktrace");
    if (!tracePath) {
      t.skip("../shared/data/simkube-traces/bare-pods.sktrace is absent");
      return;
    }
    const lines: string[] = [];
    const result = await replayLocally({
      simName: "replay-test",
      traceBytes: await readFile(tracePath),
      traceLabel: tracePath,
      speed: 1,
      log: quiet,
      out: (line) => lines.push(line),
    });
    // bare-pods.sktrace: 4 bare pods, 3 of them Finished in production, 1 still Running.
    assert.deepEqual(result, {
      pods: 4,
      mutated: 4,
      completed: 3,
      clonesOnInterruption: 1,
      clonesOnTeardown: 0,
    });
    assert.ok(lines.some((l) => l.includes("-clone-1") && l.includes("type=virtual")));
  });

  it("replays a generated trace at speed 10", async () => {
    const pod = (name: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "ns1" },
      spec: { containers: [{ name: "c", image: "busybox", ports: [{ containerPort: 80 }] }] },
    });
    const bytes = buildTraceBytes({
      events: [{ ts: 100, applied: [pod("a"), pod("b")] }],
      index: { "v1.Pod": ["ns1/a", "ns1/b"] },
      podLifecycles: [{ gvk: "v1.Pod", nsName: "ns1/a", hash: 0, lifecycles: [finished(100, 200)] }],
    });
    const result = await replayLocally({
      simName: "gen",
      traceBytes: bytes,
      traceLabel: "generated",
      speed: 10,
      log: quiet,
      out: () => {},
    });
    assert.deepEqual(result, {
      pods: 2,
      mutated: 2,
      completed: 1,
      clonesOnInterruption: 1,
      clonesOnTeardown: 0,
    });
  });

  it("runs from the built CLI and exits 0", (t) => {
    const tracePath = findSharedTrace("bare-pods.sktrace");
    if (!tracePath) {
      t.skip("../shared/data/simkube-traces/bare-pods.sktrace is absent");
      return;
    }
    const run = spawnSync(process.execPath, [CLI, "replay", "--trace", tracePath], {
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /4 pod\(s\) replayed, 4 pinned to virtual nodes, 3 with a completion time, 1 clone\(s\) after the interruption, 0 during teardown: OK/,
    );
  });
});
