// A stack the bundles log names the TypeScript file and line it came from (functions/runtime/bundle-stacks.ts),
// not a column of a bundle: `serve mutate-create` from the built CLI (dist/bundle/, what the image runs), and
// OpenFaaS's dist/openfaas/mutate-create/handler.js as the template require()s it. With an API server that
// refuses connections, the error is made in shared/kube/http.ts, denies the pod, and is logged with its stack;
// the frame's file and line must be the very line that makes it.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { buildCreateReview, buildDriverBarePod, TEST_SIM_NAME } from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import { type Served, serveFunction } from "../support/serve-cli.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const OPENFAAS_HANDLER = path.join(ROOT, "dist/openfaas/mutate-create/handler.js");

/** The first logged error's stack in `output`'s JSON lines, if any. */
function stackIn(output: string): string | undefined {
  return output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => (JSON.parse(l) as { err?: { stack?: string } }).err?.stack)
    .find((s) => s !== undefined);
}

/** The log line may come after the answer: wait for it (bounded). */
async function loggedStack(output: () => string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const stack = stackIn(output());
    if (stack !== undefined) return stack;
    await setTimeout(100);
  }
  return "";
}

/** The stack's top frame is shared/kube/http.ts's connectionError, at the line that makes the KubeError. */
function assertNamesTheSharedSource(stack: string, bundle: RegExp): void {
  const top = /\n\s+at connectionError \(((?:\/[^()]*)?\/shared\/kube\/http\.ts):(\d+):(\d+)\)/.exec(stack);
  assert.ok(top, `the top frame names shared/kube/http.ts:\n${stack}`);
  const line = Number(top[2]);
  const source = readFileSync(path.join(ROOT, "shared/kube/http.ts"), "utf8").split("\n");
  assert.match(source[line - 1] ?? "", /new KubeError\(/, `shared/kube/http.ts:${line} makes the error`);
  assert.doesNotMatch(stack, bundle, "no frame left as a bundle position");
}

const review = () => buildCreateReview({ pod: buildDriverBarePod("stack-1", "virtual-testing") });

/** Nothing listens on port 1: the Simulation's read fails, which denies the pod and logs why. */
async function refusingEnv(): Promise<Record<string, string>> {
  return {
    SIM_NAME: TEST_SIM_NAME,
    KUBECONFIG: await writeKubeconfig("https://127.0.0.1:1"),
    SEQUENCE_STORE: "memory",
    LOG_LEVEL: "info",
  };
}

// The template's side: require handler.js, call it with one event, print the answer last.
const TEMPLATE = `
const handler = require(process.argv[1]);
let status = 200;
const context = {
  status(code) { status = code; return context; },
  headers() { return context; },
  succeed(value) { console.log(JSON.stringify({ answer: status, value })); },
  fail(err) { console.log(JSON.stringify({ answer: 500, failed: String(err) })); },
};
handler({ method: "POST", body: process.env.REVIEW, headers: {} }, context);
`;

describe("stacks logged by the bundles", { timeout: 120_000 }, () => {
  let served: Served | undefined;
  after(async () => {
    if (served) await stopChild(served.child);
    await removeAllKubeconfigs();
  });

  it("the CLI's (serve): name the shared/ TypeScript file and line, not the bundle", async () => {
    served = await serveFunction("mutate-create", await refusingEnv());
    const answer = await fetch(served.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review()),
    });
    const body = (await answer.json()) as { response: { allowed: boolean } };
    assert.equal(body.response.allowed, false, "fails closed");
    assertNamesTheSharedSource(await loggedStack(served.output), /simkube-fn(-serve)?\.cjs:/);
  });

  it("OpenFaaS's handler.js: the same, through handler.js.map", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: tmpdir(), ...(await refusingEnv()) };
    const child = spawn(process.execPath, ["-e", TEMPLATE, OPENFAAS_HANDLER], {
      env: { ...env, REVIEW: JSON.stringify(review()) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
    });
    child.stderr.on("data", (d) => {
      out += String(d);
    });
    try {
      const stack = await loggedStack(() => out);
      assertNamesTheSharedSource(stack, /handler\.js:/);
    } finally {
      await stopChild(child);
    }
  });
});
