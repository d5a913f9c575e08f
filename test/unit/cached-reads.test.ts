import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCachedReads } from "../../functions/reschedule-delete/cached-reads.js";
import { createTeardownGuard } from "../../functions/reschedule-delete/teardown.js";
import { KubeError } from "../../shared/kube/api.js";
import { buildNamespace, buildSimulationRoot, rootOwnerRef, TEST_NAMESPACE } from "../support/builders.js";
import { createMemoryKube } from "../support/memory-kube.js";

const NS_REF = { apiVersion: "v1", kind: "Namespace", name: TEST_NAMESPACE };

function fakeNow() {
  let t = 1000; // lru-cache reads a start time of 0 as "no TTL"
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("createCachedReads", () => {
  it("reads an object once per TTL, however many ask at once", async () => {
    const kube = createMemoryKube();
    kube.seed(buildNamespace());
    const clock = fakeNow();
    const reads = createCachedReads(kube, { ttlMs: 2000, now: clock.now });
    const answers = await Promise.all(Array.from({ length: 100 }, () => reads.read(NS_REF)));
    assert.ok(answers.every((ns) => ns?.metadata?.name === TEST_NAMESPACE));
    assert.equal(kube.countCalls("read"), 1);
    clock.advance(2001);
    await reads.read(NS_REF);
    assert.equal(kube.countCalls("read"), 2, "expired answers are read again");
  });

  it("answers undefined for an object that does not exist, and caches that too", async () => {
    const kube = createMemoryKube();
    const reads = createCachedReads(kube);
    assert.equal(await reads.read(NS_REF), undefined);
    assert.equal(await reads.read(NS_REF), undefined);
    assert.equal(kube.countCalls("read"), 1);
  });

  it("throws other failures and does not cache them", async () => {
    const kube = createMemoryKube();
    kube.seed(buildNamespace());
    kube.inject({ verb: "read", error: new KubeError(503, "ServiceUnavailable", "busy") });
    const reads = createCachedReads(kube);
    await assert.rejects(reads.read(NS_REF), (err) => err instanceof KubeError && err.status === 503);
    assert.equal((await reads.read(NS_REF))?.metadata?.name, TEST_NAMESPACE);
  });

  it("shared with the teardown guard: the guard's check and the caller's look at the namespace cost one read", async () => {
    const kube = createMemoryKube();
    kube.seed(buildNamespace());
    kube.seed(buildSimulationRoot());
    const reads = createCachedReads(kube);
    const guard = createTeardownGuard(kube, { reads });
    assert.equal(await guard.check({ namespace: TEST_NAMESPACE, root: rootOwnerRef() }), undefined);
    assert.equal((await reads.read(NS_REF))?.metadata?.name, TEST_NAMESPACE);
    assert.equal(kube.countCalls("read"), 2, "one read of the root, one of the namespace");
  });
});
