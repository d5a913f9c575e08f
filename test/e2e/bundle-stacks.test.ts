// A stack the bundle logs names the TypeScript file and line it came from (functions/cli/bundle-stacks.ts),
// not a column of the one-line bundle: `serve mutate-create` from the built CLI, with an API server that
// refuses connections, logs the error that denies the pod, stack included.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { setTimeout } from "node:timers/promises";
import { buildCreateReview, buildDriverBarePod, TEST_SIM_NAME } from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import { type Served, serveFunction } from "../support/serve-cli.js";

/** The first logged error's stack; the log line may reach stdout after the answer (bounded wait). */
async function loggedStack(served: Served): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const stack = served
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => (JSON.parse(l) as { err?: { stack?: string } }).err?.stack)
      .find((s) => s !== undefined);
    if (stack !== undefined) return stack;
    await setTimeout(100);
  }
  return "";
}

describe("stacks logged by the bundle", { timeout: 60_000 }, () => {
  let served: Served | undefined;
  after(async () => {
    if (served) await stopChild(served.child);
    await removeAllKubeconfigs();
  });

  it("name shared/ and functions/ TypeScript files, not the bundle", async () => {
    served = await serveFunction("mutate-create", {
      SIM_NAME: TEST_SIM_NAME,
      // Nothing listens on port 1: the Simulation's read fails, which denies the pod and logs why.
      KUBECONFIG: await writeKubeconfig("https://127.0.0.1:1"),
      SEQUENCE_STORE: "memory",
      LOG_LEVEL: "info",
    });
    const review = buildCreateReview({ pod: buildDriverBarePod("stack-1", "virtual-testing") });
    const answer = await fetch(served.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review),
    });
    const body = (await answer.json()) as { response: { allowed: boolean } };
    assert.equal(body.response.allowed, false, "fails closed");
    const stack = await loggedStack(served);
    assert.match(stack, /\((?:\/[^()]*)?\/(?:shared|functions)\/[a-z/-]+\.ts:\d+:\d+\)/, stack);
    assert.doesNotMatch(stack, /simkube-fn-serve\.cjs:/, "no frame left as a bundle position");
  });
});
