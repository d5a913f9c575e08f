// The review the build sends before writing a function's code cache (functions/cli/code-cache-warm-up.ts)
// must go as far down the review path as an unreachable API server lets it, and never wedge the build:
// mutate-create reaches its first API request and denies (fail closed), reschedule-delete skips it without one.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { postWarmUpReview, warmUpReview } from "../../functions/cli/code-cache-warm-up.js";
import { drainAndClose } from "../../functions/runtime/http-server.js";
import { startFunction } from "../../functions/runtime/registry.js";
import { parseReview } from "../../shared/admission.js";
import { loadConfig } from "../../shared/config.js";
import type { FunctionName } from "../../shared/function-names.js";
import { type KubeApi, KubeError } from "../../shared/kube-api.js";
import { createLogger } from "../../shared/log.js";

const log = createLogger("silent");

function unreachableApi(reads: string[]): KubeApi {
  return {
    read: async (ref) => {
      reads.push(`${ref.kind}/${ref.name}`);
      throw new KubeError(503, "ServiceUnavailable", "connect ECONNREFUSED 127.0.0.1:1");
    },
    create: async () => {
      throw new Error("the warm-up must not create anything");
    },
    replace: async () => {
      throw new Error("the warm-up must not replace anything");
    },
  };
}

async function warmUp(name: FunctionName, env: Record<string, string> = {}) {
  const reads: string[] = [];
  const config = loadConfig({ SIM_NAME: "code-cache", ...env }, { port: "0" });
  const running = await startFunction(name, config, unreachableApi(reads), log, "127.0.0.1");
  try {
    const status = await postWarmUpReview(name, running.port, config.pathSecret);
    const stats = (await (await fetch(`http://127.0.0.1:${running.port}/stats`)).json()) as {
      decisions: Record<string, number>;
    };
    return { status, reads, decisions: stats.decisions };
  } finally {
    await drainAndClose(running.server, 1_000);
  }
}

describe("code cache warm-up review", () => {
  it("is a well-formed review for each function", () => {
    for (const name of ["mutate-create", "reschedule-delete"] as const) {
      const parsed = parseReview(JSON.parse(warmUpReview(name)));
      assert.ok(parsed.ok, `${name}: ${JSON.stringify(parsed)}`);
    }
  });

  it("takes mutate-create to its first API request, then is denied", async () => {
    const { status, reads, decisions } = await warmUp("mutate-create");
    assert.equal(status, 200);
    assert.ok(reads.length > 0, "the Kubernetes client was called");
    assert.deepEqual(decisions, { error: 1 });
  });

  it("is skipped by reschedule-delete without an API request", async () => {
    const { status, reads, decisions } = await warmUp("reschedule-delete");
    assert.equal(status, 200);
    assert.deepEqual(reads, []);
    assert.equal(
      Object.values(decisions).reduce((a, b) => a + b, 0),
      1,
    );
    assert.equal(decisions.cloned, undefined);
  });

  it("goes to the secret path when the function has one", async () => {
    const { status, decisions } = await warmUp("mutate-create", {
      WEBHOOK_PATH_SECRET: "s3cret-path-0123456789abcdef",
    });
    assert.equal(status, 200);
    assert.deepEqual(decisions, { error: 1 });
  });
});
