// Metadata-only reads against the API double over real HTTP: the double answers the PartialObjectMetadata
// transform as kube-apiserver does (test/cluster/production-security.test.ts compares the two case by case), and
// the one real adapter (shared/kube/client.ts) asks for it and hands back metadata only.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { KubeApi } from "../../shared/kube/api.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { asPartialObjectMetadata } from "../../shared/kube/partial-metadata.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import {
  type MetadataWorld,
  metadataCases,
  type Outcome,
  outcomesOf,
  podWithSecret,
} from "../support/metadata-reads.js";

const WORLD: MetadataWorld = { namespace: "virtual-meta", pod: "secret-env", root: "sk-meta-root" };

describe("metadata-only reads against the API double", () => {
  let server: FakeApiServer;
  let kubeconfig: string;
  let kube: KubeApi;
  let outcomes: Record<string, Outcome>;

  before(async () => {
    server = await startFakeApiServer({ namespaces: ["default", WORLD.namespace] });
    server.store.put(podWithSecret(WORLD));
    server.store.put({ apiVersion: "simkube.io/v1", kind: "SimulationRoot", metadata: { name: WORLD.root } });
    kubeconfig = await writeKubeconfig(server.url);
    kube = createKubeApi({ kubeconfigPath: kubeconfig, timeoutMs: 5000 });
    const get = async (path: string, accept: string) => server.request("GET", path, undefined, { accept });
    outcomes = await outcomesOf(get, metadataCases(WORLD));
  });

  after(async () => {
    await server.close();
    await removeKubeconfig(kubeconfig);
  });

  test("the transform gives meta.k8s.io's PartialObjectMetadata: metadata, no spec", () => {
    for (const [name, version] of [
      ["a pod, metadata only (what the functions send)", "v1"],
      ["a pod, metadata only, v1beta1", "v1beta1"],
      ["a namespace, metadata only", "v1"],
      ["a SimulationRoot, metadata only", "v1"],
      ["a pod, JSON at q=0.5 before the transform (q orders the clauses)", "v1"],
    ] as const) {
      const o = outcomes[name];
      assert.equal(o?.status, 200, name);
      assert.equal(o?.kind, "PartialObjectMetadata", name);
      assert.equal(o?.apiVersion, `meta.k8s.io/${version}`, name);
      assert.deepEqual(o?.fields, ["apiVersion", "kind", "metadata"], name);
    }
  });

  test("a list asks for PartialObjectMetadataList, whose items are PartialObjectMetadata", () => {
    const o = outcomes["pods, the list transform"];
    assert.equal(o?.kind, "PartialObjectMetadataList");
    assert.deepEqual(o?.itemTypes, ["meta.k8s.io/v1/PartialObjectMetadata"]);
  });

  test("a clause it cannot answer is skipped; none left is 406 NotAcceptable", () => {
    assert.equal(outcomes["a pod, whole"]?.kind, "Pod");
    assert.equal(outcomes["a pod, an unknown transform then JSON"]?.kind, "Pod");
    for (const name of [
      "a pod, an unknown transform",
      "a pod, an unknown meta version",
      "a pod, the list transform",
      "a pod, text/plain",
      "pods, the object transform",
      "a SimulationRoot, an unknown transform",
    ]) {
      assert.equal(outcomes[name]?.status, 406, name);
      assert.equal(outcomes[name]?.reason, "NotAcceptable", name);
    }
    assert.equal(outcomes["a missing pod, metadata only"]?.status, 404);
  });

  test("the adapter asks for metadata only and returns no spec", async () => {
    server.resetLog();
    const ref = { apiVersion: "v1", kind: "Pod", name: WORLD.pod, namespace: WORLD.namespace };
    const partial = await kube.read(ref, { metadataOnly: true });
    assert.equal(partial.kind, "PartialObjectMetadata");
    assert.equal(partial.metadata?.labels?.app, "meta");
    assert.equal(JSON.stringify(partial).includes("hunter2"), false);
    const whole = await kube.read(ref);
    assert.equal(JSON.stringify(whole).includes("hunter2"), true, "a whole read still has the spec");
  });

  test("a server without the transform answers the fallback clause whole; the adapter reduces it", () => {
    const whole = podWithSecret(WORLD);
    const reduced = asPartialObjectMetadata(whole);
    assert.deepEqual(reduced, {
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: whole.metadata,
    });
  });
});
