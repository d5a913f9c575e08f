// The path secret on OpenFaaS: the gateway forwards /function/<name>/<secret> to the function as
// /<secret>; the secret reaches the function as a mounted Secret file (WEBHOOK_PATH_SECRET_FILE).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  createOpenfaasHandler,
  type OpenfaasContext,
  openfaasPathSecret,
} from "../../functions/runtime/openfaas/adapter.js";
import { withPathSecretFile } from "../../functions/runtime/path-secret.js";
import { buildStack } from "../../knative/openfaas-stack.js";
import { allow, type ReviewHandler } from "../../shared/admission/review.js";
import { ConfigError } from "../../shared/config/config.js";
import { silentLog } from "../support/logs.js";

const SECRET = "openfaas-path-secret-0123456789";
const quiet = silentLog();

async function statusOf(pathSecret: string | Error | undefined, path: string): Promise<number> {
  const seen: string[] = [];
  const echo: ReviewHandler = async (body) => {
    const uid = (body as { request: { uid: string } }).request.uid;
    seen.push(uid);
    return allow({ uid });
  };
  const handler = createOpenfaasHandler(async () => echo, {
    log: quiet,
    ...(pathSecret ? { pathSecret } : {}),
  });
  let status = 200;
  const context: OpenfaasContext = {
    status(code) {
      status = code;
      return context;
    },
    headers() {
      return context;
    },
    succeed() {},
    fail() {
      status = 500;
    },
  };
  await handler({ method: "POST", path, body: { request: { uid: "u" } } }, context);
  assert.equal(seen.length, status === 200 ? 1 : 0, "only an accepted review reaches the handler");
  return status;
}

describe("OpenFaaS adapter: path secret", () => {
  it("takes reviews only at /<secret>; other paths get a 404 without reaching the handler", async () => {
    assert.equal(await statusOf(SECRET, `/${SECRET}`), 200);
    assert.equal(await statusOf(SECRET, `/${SECRET}?x=1`), 200);
    assert.equal(await statusOf(SECRET, "/"), 404);
    assert.equal(await statusOf(SECRET, `/${SECRET}x`), 404);
    assert.equal(await statusOf(undefined, "/"), 200, "no secret configured: / as before");
  });

  it("an unreadable secret file fails closed: every review is refused with the reason", async () => {
    const secret = openfaasPathSecret({ WEBHOOK_PATH_SECRET_FILE: "/nonexistent/simkube-fn/path-secret" });
    assert.ok(secret instanceof ConfigError);
    assert.match(secret.message, /WEBHOOK_PATH_SECRET_FILE .* cannot be read/);
    assert.equal(await statusOf(secret, "/"), 500);
  });

  it("a blank variable, an empty or whitespace-only file, or a malformed secret fails closed, naming WEBHOOK_PATH_SECRET_FILE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "simkube-fn-secret-"));
    try {
      const file = join(dir, "path-secret");
      const cases: [string | undefined, string, RegExp][] = [
        [undefined, "", /^WEBHOOK_PATH_SECRET_FILE is set but empty/],
        [undefined, "  \n", /^WEBHOOK_PATH_SECRET_FILE is set but empty/],
        ["", file, /^WEBHOOK_PATH_SECRET_FILE .* is empty$/],
        [" \n\t\n", file, /^WEBHOOK_PATH_SECRET_FILE .* is empty$/],
        ["short", file, /^WEBHOOK_PATH_SECRET_FILE .* must be 24 to 256 characters/],
      ];
      for (const [contents, variable, message] of cases) {
        if (contents !== undefined) writeFileSync(file, contents);
        const env = { WEBHOOK_PATH_SECRET_FILE: variable };
        assert.throws(
          () => withPathSecretFile(env),
          (err: Error) => err instanceof ConfigError && message.test(err.message),
        );
        const secret = openfaasPathSecret(env);
        assert.ok(secret instanceof ConfigError, JSON.stringify(contents));
        assert.equal(await statusOf(secret, "/"), 500, "every review is refused");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads the secret from the mounted file; the env variable wins when both are set", () => {
    const dir = mkdtempSync(join(tmpdir(), "simkube-fn-secret-"));
    try {
      const file = join(dir, "path-secret");
      writeFileSync(file, `${SECRET}\n`);
      assert.equal(withPathSecretFile({ WEBHOOK_PATH_SECRET_FILE: file }).WEBHOOK_PATH_SECRET, SECRET);
      assert.equal(openfaasPathSecret({ WEBHOOK_PATH_SECRET_FILE: file }), SECRET);
      const both = { WEBHOOK_PATH_SECRET: "from-env", WEBHOOK_PATH_SECRET_FILE: file };
      assert.equal(withPathSecretFile(both).WEBHOOK_PATH_SECRET, "from-env");
      assert.equal(openfaasPathSecret({}), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stack.yml mounts the Secret and points WEBHOOK_PATH_SECRET_FILE at it; the value never appears", () => {
    const stack = buildStack({ simName: "s", pathSecret: SECRET, rescheduleInterruptedBarePods: true });
    for (const fn of Object.values(stack.functions)) {
      assert.deepEqual(fn.secrets, ["simkube-fn-webhook-path"]);
      assert.equal(fn.environment.WEBHOOK_PATH_SECRET_FILE, "/var/openfaas/secrets/path-secret");
    }
    assert.ok(!JSON.stringify(stack).includes(SECRET));
    assert.equal(buildStack({ simName: "s" }).functions["simkube-fn-mutate-create"]?.secrets, undefined);
  });
});
