// Group commit in the cluster sequence store: concurrent next() calls for one shard share one compare-and-swap
// write, each caller gets its own number from the batch, and a batch whose write conflicts or whose answer
// is lost is resolved as a whole (retried, or read back) without a gap or a duplicate.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { KubeError, type KubeObject, type ObjectRef } from "../../shared/kube/api.js";
import { sequenceConfigMapName, sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";
import { createMemoryKube, type MemoryKube } from "../support/memory-kube.js";

const NAMESPACE = "simkube-fn";
const SCOPE: SequenceScope = {
  simName: "batch-sim",
  owner: { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "root", uid: "root-uid" },
};
// "42" and "453" share a shard (0x83).
const A = "42";
const B = "453";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const shardRef = (): ObjectRef => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: NAMESPACE,
  name: sequenceConfigMapName(SCOPE, sequenceShardOf(A)),
});

// The compare-and-swap path, without leases (sequence-lease.test.ts covers those).
function store(kube: MemoryKube, writerId: string): SequenceStore {
  return createClusterSequenceStore(kube, {
    namespace: NAMESPACE,
    writerId,
    lease: false,
    random: () => 0,
    sleep: () => new Promise<void>((resolve) => setImmediate(resolve)),
  });
}

/** A store that has written the shard once (A is at 1), so its copy is cached; the calls made so far. */
async function warmed(kube: MemoryKube, writerId = "a"): Promise<{ s: SequenceStore; before: number }> {
  const s = store(kube, writerId);
  assert.equal(await s.next(A, SCOPE), 0);
  return { s, before: kube.calls.length };
}

/** Six calls in one tick, alternating A and B. */
const sixCalls = (s: SequenceStore) =>
  Promise.all(Array.from({ length: 6 }, (_, i) => s.next(i % 2 === 0 ? A : B, SCOPE)));

const writesSince = (kube: MemoryKube, before: number) =>
  kube.calls.slice(before).map((c) => [c.verb, c.status]);

describe("cluster sequence store: group commit", () => {
  test("six waiters on one shard: one write, each its own number, consecutive per hash", async () => {
    const kube = createMemoryKube();
    const { s, before } = await warmed(kube);
    assert.deepEqual(await sixCalls(s), [1, 0, 2, 1, 3, 2]);
    assert.deepEqual(writesSince(kube, before), [["replace", 200]]);
    assert.deepEqual(kube.get<ConfigMap>(shardRef())?.data, { [A]: "4", [B]: "3" });
  });

  test("a conflict mid-batch: the whole batch is re-based on the other writer's numbers, no gap, no duplicate", async () => {
    const kube = createMemoryKube();
    const { s } = await warmed(kube);
    const other = store(kube, "b");
    assert.deepEqual([await other.next(A, SCOPE), await other.next(B, SCOPE)], [1, 0]);
    const before = kube.calls.length;
    assert.deepEqual(await sixCalls(s), [2, 1, 3, 2, 4, 3]);
    assert.deepEqual(writesSince(kube, before), [
      ["replace", 409],
      ["read", 200],
      ["replace", 200],
    ]);
    assert.deepEqual(kube.get<ConfigMap>(shardRef())?.data, { [A]: "5", [B]: "4" });
  });

  test("a lost answer mid-batch, the write landed: read back, every waiter gets the landed number", async () => {
    const kube = createMemoryKube();
    const { s, before } = await warmed(kube);
    kube.inject({
      verb: "replace",
      afterApply: true,
      error: new KubeError(0, "ECONNRESET", "socket hang up"),
    });
    assert.deepEqual(await sixCalls(s), [1, 0, 2, 1, 3, 2]);
    assert.deepEqual(writesSince(kube, before), [
      ["replace", 0],
      ["read", 200],
    ]);
    assert.equal(await s.next(A, SCOPE), 4, "the next call continues after the landed batch");
    assert.deepEqual(kube.get<ConfigMap>(shardRef())?.data, { [A]: "5", [B]: "3" });
  });

  test("a lost answer mid-batch, the write did not land: the same batch is written again, same numbers", async () => {
    const kube = createMemoryKube();
    const { s, before } = await warmed(kube);
    kube.inject({ verb: "replace", error: new KubeError(503, "ServiceUnavailable", "etcd leader changed") });
    assert.deepEqual(await sixCalls(s), [1, 0, 2, 1, 3, 2]);
    assert.deepEqual(writesSince(kube, before), [
      ["replace", 503],
      ["read", 200],
      ["replace", 200],
    ]);
    assert.deepEqual(kube.get<ConfigMap>(shardRef())?.data, { [A]: "4", [B]: "3" });
  });

  test("a lost answer that landed while another replica wrote: both batches keep their numbers", async () => {
    const kube = createMemoryKube();
    const { s } = await warmed(kube);
    const other = store(kube, "b");
    kube.inject({ verb: "replace", afterApply: true, error: new KubeError(504, "Timeout", "etcd slow") });
    const mine = sixCalls(s);
    const theirs = Promise.all([other.next(A, SCOPE), other.next(B, SCOPE), other.next(A, SCOPE)]);
    const numbers = [...(await mine), ...(await theirs)];
    const ofHash = (h: string) =>
      numbers
        .filter((_, i) => (i < 6 ? (i % 2 === 0 ? A : B) : [A, B, A][i - 6]) === h)
        .sort((x, y) => x - y);
    assert.deepEqual(ofHash(A), [1, 2, 3, 4, 5]);
    assert.deepEqual(ofHash(B), [0, 1, 2, 3]);
    assert.deepEqual(kube.get<ConfigMap>(shardRef())?.data, { [A]: "6", [B]: "4" });
  });
});

/**
 * Two replicas on one fake clock, where every API call takes 10 ms and sleeps move the clock; both record
 * writes at the same wall-clock time, so each sees the other as active on the shard.
 */
function contendingPair() {
  let clock = 0;
  const kube = createMemoryKube({
    pause: async () => {
      clock += 5; // twice per call: 10 ms a round trip
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  });
  const sleeps: Record<string, number[]> = { a: [], b: [] };
  const make = (writerId: "a" | "b") =>
    createClusterSequenceStore(kube, {
      namespace: NAMESPACE,
      writerId,
      lease: false,
      random: () => 0.5,
      now: () => clock,
      wallClock: () => 1_000_000,
      sleep: async (ms) => {
        sleeps[writerId]?.push(ms);
        clock += ms;
        await new Promise<void>((resolve) => setImmediate(resolve));
      },
    });
  return { kube, sleeps, a: make("a"), b: make("b") };
}

describe("cluster sequence store: replicas on one shard take turns", () => {
  test("alone on a shard, calls that queued during a write are written next without a wait", async () => {
    const { a, sleeps } = contendingPair();
    await a.next(A, SCOPE);
    const first = a.next(A, SCOPE);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const queued = [a.next(B, SCOPE), a.next(A, SCOPE)];
    assert.deepEqual(await Promise.all([first, ...queued]), [1, 0, 2]);
    assert.deepEqual(sleeps.a, []);
  });

  test("with another replica writing the shard, the winner waits a share of (replicas x round trip) before its next write", async () => {
    const { a, b, sleeps } = contendingPair();
    assert.equal(await b.next(A, SCOPE), 0);
    assert.equal(await a.next(A, SCOPE), 1, "a reads the shard and sees b's write record");
    const first = a.next(A, SCOPE);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const queued = a.next(A, SCOPE);
    assert.deepEqual(await Promise.all([first, queued]), [2, 3]);
    assert.deepEqual(sleeps.a, [10], "half of 2 replicas x 10 ms");
  });

  test("a conflict with a replica known to write the shard backs off over the same window, not the 20 ms cap", async () => {
    const { a, b, sleeps } = contendingPair();
    assert.equal(await b.next(A, SCOPE), 0);
    assert.equal(await a.next(A, SCOPE), 1);
    assert.equal(await b.next(A, SCOPE), 2, "a's copy is stale now");
    assert.equal(await a.next(A, SCOPE), 3);
    // The fake answers a 409 after one pause (5 ms), so the round trip's moving average is 0.8 x 10 + 0.2 x 5.
    assert.deepEqual(
      sleeps.a,
      [9],
      "after the 409: half of 2 replicas x 9 ms, not the 2 ms of the plain backoff",
    );
  });
});
