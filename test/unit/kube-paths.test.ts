// knownResourcePath: the paths of the kinds the lean HTTP path serves, as client-node's specUriPath builds them.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { knownResourcePath } from "../../shared/kube/client.js";

describe("knownResourcePath", () => {
  test("a namespaced core kind, with and without its name", () => {
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: "sk-fn-seq-a-0f", namespace: "simkube" };
    assert.equal(
      knownResourcePath(ref, "default", true),
      "/api/v1/namespaces/simkube/configmaps/sk-fn-seq-a-0f",
    );
    assert.equal(knownResourcePath(ref, "default", false), "/api/v1/namespaces/simkube/configmaps");
  });

  test("a namespaced kind without a namespace takes the context's", () => {
    const ref = { apiVersion: "v1", kind: "Pod", name: "p" };
    assert.equal(knownResourcePath(ref, "from-context", true), "/api/v1/namespaces/from-context/pods/p");
  });

  test("SimKube's cluster-scoped kinds live under /apis", () => {
    const ref = { apiVersion: "simkube.io/v1", kind: "Simulation", name: "sim", namespace: "ignored" };
    assert.equal(knownResourcePath(ref, "default", true), "/apis/simkube.io/v1/simulations/sim");
  });

  test("any other kind, or a read without a name, is left to the library", () => {
    assert.equal(
      knownResourcePath({ apiVersion: "apps/v1", kind: "ReplicaSet", name: "r" }, "d", true),
      undefined,
    );
    assert.equal(knownResourcePath({ apiVersion: "v1", kind: "ConfigMap", name: "" }, "d", true), undefined);
  });
});
