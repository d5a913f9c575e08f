// The README's main job: `simkube-fn replay` against the embedded API double, of SimKube's bare-pods trace and
// of the project's own example scenario (the default, which must work on any clone).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { replayLocally } from "../../functions/cli/replay/replay.js";
import { silentLog } from "../support/logs.js";
import { buildTraceBytes, findSharedTrace, finished } from "../support/trace-builder.js";

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bundle/simkube-fn.mjs");
const quiet = silentLog();

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
      interruptions: 1,
      clonesOnInterruption: 1,
      // Four pods left (three and the clone), each deleted in two phases.
      teardownReviews: 8,
      clonesOnTeardown: 0,
      errors: 0,
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
      interruptions: 1,
      clonesOnInterruption: 1,
      teardownReviews: 4,
      clonesOnTeardown: 0,
      errors: 0,
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

describe("local replay of the project's own example", { timeout: 60_000 }, () => {
  /** The bundle folder alone in a fresh directory: no checkout around it, no ../shared beside it. */
  function loneBundle(): string {
    const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-lone-"));
    cpSync(path.dirname(CLI), dir, { recursive: true });
    return dir;
  }

  function run(args: string[], cwd: string, env: Record<string, string> = {}) {
    return spawnSync(process.execPath, [path.join(cwd, "simkube-fn.mjs"), ...args], {
      cwd,
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
  }

  it("replays examples/scenario.yaml with no trace given, from a bundle with nothing around it; --json ends the output", (t) => {
    const dir = loneBundle();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.ok(!existsSync(path.join(dir, "../shared")), "no ../shared beside the bundle");
    const replay = run(["replay", "--json"], dir);
    assert.equal(replay.status, 0, replay.stderr);
    assert.match(
      replay.stdout,
      /Replaying 4 bare pod\(s\) from the example scenario examples\/scenario\.yaml/,
    );
    assert.match(
      replay.stdout,
      /Not replayed here \(no controllers in the API double\): 1 Deployment\(s\)\./,
    );
    // The scenario's interrupted pod is the one the node failure hits, and it is cloned.
    assert.match(replay.stdout, /Interrupted virtual-batch\/cache-warmer \(taint manager\): 1 clone\(s\)/);
    const last = replay.stdout.trimEnd().split("\n").at(-1) ?? "";
    assert.deepEqual(JSON.parse(last), {
      podsCreated: 4,
      podsMutated: 4,
      podsCompleted: 3,
      interruptions: 1,
      clones: 1,
      teardownReviews: 8,
      teardownClones: 0,
      errors: 0,
      ok: true,
    });
  });

  it("says what is missing when the bundle has no example and no trace is given", (t) => {
    const dir = loneBundle();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    rmSync(path.join(dir, "examples"), { recursive: true });
    const replay = run(["replay"], dir);
    assert.equal(replay.status, 1);
    assert.equal(
      replay.stderr,
      "simkube-fn: the example scenario examples/scenario.yaml is missing: pass --trace FILE\n",
    );
  });

  it("still takes TRACE_PATH (a file:// URL) and --trace, --trace first", (t) => {
    const dir = loneBundle();
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const pod = (name: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "ns1" },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    });
    const one = path.join(dir, "one.sktrace");
    const two = path.join(dir, "two.sktrace");
    writeFileSync(
      one,
      buildTraceBytes({ events: [{ ts: 1, applied: [pod("a")] }], index: { "v1.Pod": ["ns1/a"] } }),
    );
    writeFileSync(
      two,
      buildTraceBytes({
        events: [{ ts: 1, applied: [pod("a"), pod("b")] }],
        index: { "v1.Pod": ["ns1/a", "ns1/b"] },
      }),
    );
    const fromEnv = run(["replay"], dir, { TRACE_PATH: pathToFileURL(one).href });
    assert.equal(fromEnv.status, 0, fromEnv.stderr);
    assert.match(
      fromEnv.stdout,
      new RegExp(`Replaying 1 bare pod\\(s\\) from ${one.replaceAll(".", "\\.")}`),
    );
    const fromFlag = run(["replay", "--trace", two], dir, { TRACE_PATH: one });
    assert.equal(fromFlag.status, 0, fromFlag.stderr);
    assert.match(fromFlag.stdout, /Replaying 2 bare pod\(s\)/);
    const missing = run(["replay", "--trace", path.join(dir, "nope.sktrace")], dir);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /could not read trace .*nope\.sktrace: ENOENT/);
  });
});
