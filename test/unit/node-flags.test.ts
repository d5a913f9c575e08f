// The Node settings the functions serve with (knative/node-flags.ts) are the ones every deployment starts
// them with: the image's ENTRYPOINT, the image's code-cache run (a cache written with other V8 flags is
// rejected, and every cold start would compile the bundle), the image's environment, and the OpenFaaS stack.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { OPENFAAS_NODE_OPTIONS, SERVE_ENV, SERVE_NODE_FLAGS } from "../../knative/node-flags.js";
import { buildStack } from "../../knative/openfaas-stack.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const DOCKERFILE = readFileSync(path.join(REPO, "Dockerfile"), "utf8");

describe("the deployed Node settings", () => {
  it("the image's ENTRYPOINT runs the bundle with exactly SERVE_NODE_FLAGS", () => {
    const line = /^ENTRYPOINT (.+)$/m.exec(DOCKERFILE)?.[1];
    assert.ok(line, "the Dockerfile has an ENTRYPOINT");
    assert.deepEqual(JSON.parse(line), ["node", ...SERVE_NODE_FLAGS, "/app/simkube-fn.mjs"]);
  });

  it("the image writes its code cache with the same flags, for serve and for the rest of the CLI", () => {
    const runs = DOCKERFILE.match(/^\s+node .*\/app\/simkube-fn\.mjs.*$/gm) ?? [];
    assert.equal(runs.length, 1, runs.join("\n"));
    assert.match(
      runs[0] as string,
      new RegExp(`node ${SERVE_NODE_FLAGS.join(" ")} /app/simkube-fn\\.mjs \\$args`),
    );
    assert.match(DOCKERFILE, /SIMKUBE_FN_WRITE_CODE_CACHE=1/);
    for (const args of ["serve mutate-create --check", "serve reschedule-delete --check", "--version"]) {
      assert.ok(DOCKERFILE.includes(`"${args}`), args);
    }
  });

  it("the image's environment carries SERVE_ENV", () => {
    for (const [name, value] of Object.entries(SERVE_ENV)) {
      assert.match(DOCKERFILE, new RegExp(`^\\s+${name}=${value}$`, "m"), name);
    }
  });

  it("the OpenFaaS functions get the flags NODE_OPTIONS allows, and SERVE_ENV", () => {
    assert.equal(OPENFAAS_NODE_OPTIONS, "--max-semi-space-size=4");
    const stack = buildStack({ simName: "s", rescheduleInterruptedBarePods: true });
    const functions = Object.values(stack.functions);
    assert.equal(functions.length, 2);
    for (const fn of functions) {
      assert.equal(fn.environment.NODE_OPTIONS, OPENFAAS_NODE_OPTIONS);
      for (const [name, value] of Object.entries(SERVE_ENV)) assert.equal(fn.environment[name], value);
    }
  });
});
