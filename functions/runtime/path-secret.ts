// The path secret: when set, a review is taken only at /<secret>. Shared by the Knative adapter
// (http-server.ts) and the OpenFaaS adapter, whose gateway forwards /function/<name>/<secret> as /<secret>.

import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError, type Env } from "../../shared/config.js";

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

/** Whether a request path (query ignored) is the review path: "/" without a secret, "/<secret>" with one. */
export function reviewPathCheck(pathSecret: string | undefined): (url: string) => boolean {
  const expected = sha256(pathSecret === undefined ? "/" : `/${pathSecret}`);
  return (url) => {
    const query = url.indexOf("?");
    // Equal-length digests: the comparison takes the same time whatever the path, so it leaks no prefix.
    return timingSafeEqual(sha256(query < 0 ? url : url.slice(0, query)), expected);
  };
}

/**
 * WEBHOOK_PATH_SECRET, or else the contents of the file WEBHOOK_PATH_SECRET_FILE names (an OpenFaaS secret
 * is mounted as a file under /var/openfaas/secrets/). Returns the environment with the secret filled in.
 */
export function withPathSecretFile(env: Env): Env {
  const file = env.WEBHOOK_PATH_SECRET_FILE?.trim();
  if (env.WEBHOOK_PATH_SECRET?.trim() || !file) return env;
  try {
    return { ...env, WEBHOOK_PATH_SECRET: readFileSync(file, "utf8").trim() };
  } catch (err) {
    throw new ConfigError(`WEBHOOK_PATH_SECRET_FILE ${file} cannot be read: ${(err as Error).message}`);
  }
}
