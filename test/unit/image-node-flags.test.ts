// The benches start the functions with the Node flags the image starts them with, read from the Dockerfile.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { imageNodeFlags, REPO } from "../bench/node-children.js";

test("the image's Node flags are those between node and the bundle in the Dockerfile's ENTRYPOINT", () => {
  assert.deepEqual(imageNodeFlags(readFileSync(join(REPO, "Dockerfile"), "utf8")), [
    "--max-semi-space-size=4",
  ]);
  assert.deepEqual(imageNodeFlags('FROM x\nENTRYPOINT ["node", "/app/simkube-fn.mjs"]\n'), []);
  assert.throws(() => imageNodeFlags('ENTRYPOINT ["/bin/sh", "-c", "x"]'), /not a node ENTRYPOINT/);
  assert.throws(() => imageNodeFlags("FROM x\n"), /no ENTRYPOINT/);
});
