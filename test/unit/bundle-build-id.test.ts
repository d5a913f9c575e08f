// The launcher trusts a code cache only when its first line is the bundle's build id (functions/cli/launcher.ts).

import assert from "node:assert/strict";
import { test } from "node:test";
import { bundleBuildId } from "../../functions/runtime/bundle-build-id.js";

test("the build id is read from the line scripts/bundle.mjs appends, and only from there", () => {
  assert.equal(bundleBuildId('"use strict";\nmodule.exports = 1;\n//# simkube-fn-build 3fa9c0\n'), "3fa9c0");
  assert.equal(bundleBuildId("//# simkube-fn-build 3fa9c0\nmodule.exports = 1;\n"), undefined);
  assert.equal(bundleBuildId("module.exports = 1;\n//# simkube-fn-build XYZ\n"), undefined);
  assert.equal(bundleBuildId("module.exports = 1;\n"), undefined);
});
