// A kubeconfig that cannot be used gives an error that says which and what to do, not client-node's
// "Cannot read properties of undefined (reading 'clusters')". (Reads temp files; no sockets.)

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { KubeConfigError, loadKubeConfig } from "../../shared/kube/client.js";

const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-kc-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe("loadKubeConfig", () => {
  it("an empty file: names it and says what to do", () => {
    const empty = file("empty", "");
    assert.throws(
      () => loadKubeConfig(empty),
      (err: unknown) =>
        err instanceof KubeConfigError &&
        err.message.includes(empty) &&
        /empty or not a kubeconfig/.test(err.message) &&
        /point KUBECONFIG at a kubeconfig with a current context/.test(err.message) &&
        !/reading 'clusters'/.test(err.message),
    );
  });

  it("a kubeconfig that selects no cluster", () => {
    const none = file("none", "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
    assert.throws(() => loadKubeConfig(none), /selects no cluster/);
  });

  it("a missing file names the file", () => {
    assert.throws(
      () => loadKubeConfig(path.join(dir, "absent")),
      (err: unknown) => err instanceof KubeConfigError && /absent/.test(err.message),
    );
  });

  it("a usable one loads", () => {
    const good = file(
      "good",
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
        users: [{ name: "u", user: { token: "t" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    assert.equal(loadKubeConfig(good).getCurrentCluster()?.server, "https://127.0.0.1:6443");
  });
});
