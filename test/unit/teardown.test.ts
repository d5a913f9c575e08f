import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createTeardownGuard,
  namespaceVerdict,
  rootVerdict,
  type TeardownTarget,
} from "../../functions/reschedule-delete/teardown.js";
import { KubeError } from "../../shared/kube/api.js";
import {
  buildNamespace,
  buildSimulation,
  buildSimulationRoot,
  rootOwnerRef,
  TEST_NAMESPACE,
  TEST_ROOT_UID,
} from "../support/builders.js";
import { createMemoryKube } from "../support/memory-kube.js";

const target: TeardownTarget = { namespace: TEST_NAMESPACE, root: rootOwnerRef() };
const NS_REF = { apiVersion: "v1", kind: "Namespace", name: TEST_NAMESPACE };

function fakeNow() {
  let t = 1000; // lru-cache reads a start time of 0 as "no TTL"
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function world(
  options: { root?: boolean; rootDeleting?: boolean; namespace?: "Active" | "Terminating" | "none" } = {},
) {
  const kube = createMemoryKube();
  if (options.root !== false) {
    kube.seed(buildSimulationRoot(options.rootDeleting ? { deletionTimestamp: "2024-01-01T00:10:00Z" } : {}));
  }
  if (options.namespace !== "none") kube.seed(buildNamespace({ phase: options.namespace ?? "Active" }));
  return kube;
}

describe("pure verdicts", () => {
  it("reads a root as alive, deleting, gone, or replaced by another run's root", () => {
    assert.deepEqual(rootVerdict(buildSimulationRoot(), TEST_ROOT_UID), { over: false });
    assert.deepEqual(
      rootVerdict(buildSimulationRoot({ deletionTimestamp: "2024-01-01T00:00:00Z" }), undefined),
      {
        over: true,
        reason: "root-deleting",
      },
    );
    assert.deepEqual(rootVerdict(undefined, TEST_ROOT_UID), { over: true, reason: "root-gone" });
    assert.deepEqual(rootVerdict(buildSimulationRoot({ uid: "another-run" }), TEST_ROOT_UID), {
      over: true,
      reason: "root-gone",
    });
  });

  it("reads a namespace as terminating from its phase or its deletionTimestamp", () => {
    assert.deepEqual(namespaceVerdict(buildNamespace()), { over: false });
    assert.equal(namespaceVerdict(buildNamespace({ phase: "Terminating" })).over, true);
    assert.equal(namespaceVerdict(buildNamespace({ deletionTimestamp: "2024-01-01T00:00:00Z" })).over, true);
    assert.deepEqual(namespaceVerdict(undefined), { over: true, reason: "namespace-gone" });
  });
});

describe("createTeardownGuard", () => {
  it("answers alive with one read of the root and one of the namespace, cached briefly", async () => {
    const kube = world();
    const clock = fakeNow();
    const guard = createTeardownGuard(kube, { aliveTtlMs: 2000, now: clock.now });
    assert.equal(await guard.check(target), undefined);
    assert.equal(await guard.check(target), undefined);
    assert.equal(kube.countCalls("read"), 2);
    clock.advance(2001);
    assert.equal(await guard.check(target), undefined);
    assert.equal(kube.countCalls("read"), 4, "alive answers expire");
  });

  it("sees a root being deleted, and keeps that answer for good", async () => {
    const kube = world({ rootDeleting: true });
    const clock = fakeNow();
    const guard = createTeardownGuard(kube, { now: clock.now });
    assert.equal(await guard.check(target), "root-deleting");
    clock.advance(10 * 60_000);
    assert.equal(guard.known(target), "root-deleting", "known without any API call");
    assert.equal(await guard.check(target), "root-deleting");
    assert.equal(kube.countCalls("read"), 2);
  });

  it("sees a terminating or missing namespace, and a missing root", async () => {
    assert.equal(
      await createTeardownGuard(world({ namespace: "Terminating" })).check(target),
      "namespace-terminating",
    );
    assert.equal(await createTeardownGuard(world({ namespace: "none" })).check(target), "namespace-gone");
    assert.equal(await createTeardownGuard(world({ root: false })).check(target), "root-gone");
  });

  it("merges a burst of concurrent checks into one read per object", async () => {
    const kube = world({ namespace: "Terminating" });
    const guard = createTeardownGuard(kube);
    const answers = await Promise.all(Array.from({ length: 500 }, () => guard.check(target)));
    assert.ok(answers.every((a) => a === "namespace-terminating"));
    assert.equal(kube.countCalls("read"), 2);
    assert.equal(guard.known(target), "namespace-terminating");
  });

  it("keys answers by the root's uid, so another run is not affected", async () => {
    const kube = world({ namespace: "Terminating" });
    const guard = createTeardownGuard(kube);
    assert.equal(await guard.check(target), "namespace-terminating");
    const nextRun: TeardownTarget = { namespace: TEST_NAMESPACE, root: rootOwnerRef(undefined, "next-run") };
    assert.equal(guard.known(nextRun), undefined);
  });

  it("remembers a Simulation that is over, and a namespace found terminating elsewhere", () => {
    const guard = createTeardownGuard(world());
    assert.equal(guard.observeSimulation(buildSimulation(), target), undefined);
    assert.equal(guard.known(target), undefined);
    assert.equal(guard.observeSimulation(buildSimulation({ state: "Finished" }), target), "simulation-over");
    assert.equal(guard.known(target), "simulation-over");

    const other = createTeardownGuard(world());
    other.markNamespaceTerminating(target);
    assert.equal(other.known(target), "namespace-terminating");
  });

  it("notices a teardown that starts once the alive answer expires", async () => {
    const kube = world();
    const clock = fakeNow();
    const guard = createTeardownGuard(kube, { aliveTtlMs: 1000, now: clock.now });
    assert.equal(await guard.check(target), undefined);
    const ns = kube.get(NS_REF);
    assert.ok(ns);
    // As the API server does on DELETE: the deletionTimestamp (all a metadata-only read sees), then the phase.
    const metadata = { ...ns.metadata, deletionTimestamp: "2024-01-01T00:10:00Z" };
    await kube.replace({ ...ns, metadata, status: { phase: "Terminating" } });
    clock.advance(1001);
    assert.equal(await guard.check(target), "namespace-terminating");
  });

  it("throws API failures (the caller decides) and does not cache them", async () => {
    const kube = world();
    kube.inject({
      verb: "read",
      kind: "SimulationRoot",
      error: new KubeError(503, "ServiceUnavailable", "busy"),
    });
    const guard = createTeardownGuard(kube);
    await assert.rejects(guard.check(target), (err) => err instanceof KubeError && err.status === 503);
    assert.equal(await guard.check(target), undefined, "the next check reads again");
  });
});
