// The benches start the functions with the Node flags and environment the image starts them with, read from
// the Dockerfile, and say when their Node is not the image's (scripts/build-image.sh).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  envText,
  imageNodeFlags,
  imageNodeVersion,
  imageProcessEnv,
  REPO,
  serveNodeEnv,
  serverNodeLine,
} from "../bench/node-children.js";

test("the image's Node flags are those between node and the bundle in the Dockerfile's ENTRYPOINT", () => {
  assert.deepEqual(imageNodeFlags(readFileSync(join(REPO, "Dockerfile"), "utf8")), [
    "--max-semi-space-size=4",
  ]);
  assert.deepEqual(imageNodeFlags('FROM x\nENTRYPOINT ["node", "/app/simkube-fn.mjs"]\n'), []);
  assert.throws(() => imageNodeFlags('ENTRYPOINT ["/bin/sh", "-c", "x"]'), /not a node ENTRYPOINT/);
  assert.throws(() => imageNodeFlags("FROM x\n"), /no ENTRYPOINT/);
});

test("the image's Node release is build-image.sh's NODE_VERSION, and a bench on another major says so", () => {
  const pinned = imageNodeVersion(readFileSync(join(REPO, "scripts/build-image.sh"), "utf8"));
  assert.match(pinned, /^\d+\.\d+\.\d+$/);
  assert.equal(imageNodeVersion("set -e\nNODE_VERSION=26.12.1\nNPM_VERSION=11.19.1\n"), "26.12.1");
  assert.throws(() => imageNodeVersion("NODE22_VERSION=22.23.5\n"), /no NODE_VERSION/);
  assert.equal(
    serverNodeLine("v26.10.0", "26.12.1"),
    "servers on Node v26.10.0; the image runs Node 26.12.1",
  );
  assert.match(serverNodeLine("v22.23.3", "26.12.1"), /another major: BENCH_NODE=<a node 26 binary>/);
});

test("the image's environment is the Dockerfile's ENV pairs, without PORT and build arguments", () => {
  assert.deepEqual(imageProcessEnv(readFileSync(join(REPO, "Dockerfile"), "utf8")), {
    NODE_ENV: "production",
    MALLOC_ARENA_MAX: "2",
  });
  const dockerfile = "FROM x\nENV A=1 \\\n    PORT=8080 \\\n    REV=$REVISION\nRUN echo A=2\nENV B=two\n";
  assert.deepEqual(imageProcessEnv(dockerfile), { A: "1", B: "two" });
  assert.deepEqual(imageProcessEnv("FROM x\n"), {});
  assert.equal(envText({ A: "1", B: "two" }), "A=1 B=two");
});

test("the caller's environment wins over the image's", () => {
  assert.deepEqual(serveNodeEnv({}), { NODE_ENV: "production", MALLOC_ARENA_MAX: "2" });
  assert.deepEqual(serveNodeEnv({ MALLOC_ARENA_MAX: "8" }), { NODE_ENV: "production" });
});
