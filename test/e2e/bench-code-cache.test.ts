// The benches copy the bundle and write its code cache with the Node and flags they start the functions with
// (node-children.ts, bundleFor). That write starts each function once, and a function refuses to start without
// a kubeconfig: on a machine with none, `npm run bench` stopped before its first round.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { bundleBuildId } from "../../functions/runtime/bundle-build-id.js";
import { bundleFor } from "../bench/node-children.js";

test("the benches write the bundle's code cache on a machine with no kubeconfig", () => {
  const home = mkdtempSync(join(os.tmpdir(), "simkube-fn-no-kubeconfig-"));
  const saved = { HOME: process.env.HOME, KUBECONFIG: process.env.KUBECONFIG };
  process.env.HOME = home;
  delete process.env.KUBECONFIG;
  const started = Date.now();
  try {
    const bundle = bundleFor(process.execPath, ["--max-semi-space-size=4"]);
    try {
      const dir = join(bundle.entry, "..");
      const cache = join(dir, "simkube-fn-serve.cjs.cache");
      const buildId = bundleBuildId(readFileSync(join(dir, "simkube-fn-serve.cjs"), "latin1"));
      assert.ok(buildId, "the serve bundle names its build");
      assert.equal(readFileSync(cache, "latin1").split("\n", 1)[0], buildId);
      assert.ok(statSync(cache).mtimeMs >= started - 1_000, "the cache was written by this call");
    } finally {
      bundle.remove();
    }
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(home, { recursive: true, force: true });
  }
});
