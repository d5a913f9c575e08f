// The control-plane build run by `cluster up` and `replay --cluster local`: while the script runs (building
// for minutes, or waiting silently on another process's build lock), a line says it is still running.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { runBuild } from "../../functions/local-cluster/binaries.js";

describe("runBuild", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-build-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const script = (name: string, body: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, body);
    return file;
  };

  it("says every interval that a slow build is still running, and stops saying it when it ends", async () => {
    const lines: string[] = [];
    const slow = script("slow.sh", "sleep 0.5\necho /the/bin/dir\n");
    const bin = await runBuild(slow, "inherit", { everyMs: 100, write: (l) => lines.push(l) });
    assert.equal(bin, "/the/bin/dir");
    assert.ok(lines.length >= 2, `at least two progress lines in 0.5 s at 0.1 s (got ${lines.length})`);
    assert.match(
      lines[0] ?? "",
      /slow\.sh still running after \d+ s \(building, or waiting for another process's build/,
    );
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(lines.length, count, "no line after the build ended");
  });

  it("a failing build is an error naming the script", async () => {
    const failing = script("fail.sh", "exit 3\n");
    await assert.rejects(
      runBuild(failing, "ignore", { everyMs: 50, write: () => {} }),
      /fail\.sh failed \(exit 3\)/,
    );
  });
});
