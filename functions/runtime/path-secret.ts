// The path secret: when set, a review is taken only at /<secret>. Shared by the Knative adapter
// (http-server.ts) and the OpenFaaS adapter, whose gateway forwards /function/<name>/<secret> as /<secret>.

import { timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError, checkPathSecret, type Env, guardSetting } from "../../shared/config/index.js";

/** Whether a request path (query ignored) is the review path: "/" without a secret, "/<secret>" with one. */
export function reviewPathCheck(pathSecret: string | undefined): (url: string) => boolean {
  // The expected path is ASCII (a secret is A-Za-z0-9_-). Every call compares exactly expected.length bytes
  // in constant time, so the time says nothing about how much of a guess was right; only the length check
  // is separate. Was a sha256 of both sides per review: the same guarantee at ~3 µs of every review's ~60.
  const expected = Buffer.from(pathSecret === undefined ? "/" : `/${pathSecret}`, "latin1");
  const scratch = Buffer.alloc(expected.length);
  return (url) => {
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    scratch.fill(0);
    // utf8: a non-ASCII character writes bytes >= 0x80 (or nothing), never the ASCII byte expected there.
    scratch.write(path, "utf8");
    const same = timingSafeEqual(scratch, expected);
    return same && path.length === expected.length;
  };
}

/**
 * WEBHOOK_PATH_SECRET, or else the contents of the file WEBHOOK_PATH_SECRET_FILE names (an OpenFaaS secret
 * is mounted as a file under /var/openfaas/secrets/). Returns the environment with the secret filled in.
 * Fails closed: a file variable set but blank, a file that cannot be read, is empty or holds no valid secret
 * is a ConfigError naming WEBHOOK_PATH_SECRET_FILE; it never means "no secret".
 */
export function withPathSecretFile(env: Env): Env {
  const file = guardSetting(env.WEBHOOK_PATH_SECRET_FILE, "WEBHOOK_PATH_SECRET_FILE");
  if (env.WEBHOOK_PATH_SECRET !== undefined || file === undefined) return env;
  let secret: string;
  try {
    secret = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new ConfigError(`WEBHOOK_PATH_SECRET_FILE ${file} cannot be read: ${(err as Error).message}`);
  }
  if (secret === "") throw new ConfigError(`WEBHOOK_PATH_SECRET_FILE ${file} is empty`);
  checkPathSecret(secret, `WEBHOOK_PATH_SECRET_FILE ${file}`);
  return { ...env, WEBHOOK_PATH_SECRET: secret };
}
