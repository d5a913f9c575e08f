// Temporary kubeconfig files pointing at a test API server (plain http, a bearer token user).

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export interface KubeconfigOptions {
  /** Bearer token sent on every request. Default "fake-token". */
  token?: string;
  /** The context's default namespace. Default "default". */
  namespace?: string;
  /** The cluster's `proxy-url` (http://, https:// or socks5://). */
  proxyUrl?: string;
}

/** Directories made here, removed by removeKubeconfig / removeAllKubeconfigs. */
const madeDirs = new Set<string>();

/**
 * Writes a kubeconfig for `serverUrl` and returns its path. Without `dir` a fresh temp directory is made.
 * `insecure-skip-tls-verify` is required: client-node refuses an http:// server without it.
 */
export async function writeKubeconfig(
  serverUrl: string,
  dir?: string,
  options: KubeconfigOptions = {},
): Promise<string> {
  const target = dir ?? (await mkdtemp(path.join(tmpdir(), "simkube-fn-kubeconfig-")));
  if (!dir) madeDirs.add(target);
  const file = path.join(target, "kubeconfig");
  // JSON is YAML: no YAML writer needed.
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "fake",
        cluster: {
          server: serverUrl,
          "insecure-skip-tls-verify": true,
          ...(options.proxyUrl ? { "proxy-url": options.proxyUrl } : {}),
        },
      },
    ],
    users: [{ name: "fake-user", user: { token: options.token ?? "fake-token" } }],
    contexts: [
      {
        name: "fake",
        context: { cluster: "fake", user: "fake-user", namespace: options.namespace ?? "default" },
      },
    ],
    "current-context": "fake",
  };
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/** Deletes a kubeconfig written by writeKubeconfig (and its temp directory when it made one). */
export async function removeKubeconfig(file: string): Promise<void> {
  const dir = path.dirname(file);
  if (madeDirs.has(dir)) {
    madeDirs.delete(dir);
    await rm(dir, { recursive: true, force: true });
  } else {
    await rm(file, { force: true });
  }
}

export async function removeAllKubeconfigs(): Promise<void> {
  await Promise.all([...madeDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  madeDirs.clear();
}
