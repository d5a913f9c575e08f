// Leases on sequence shards (shared/sequence/lease.ts): a replica alone on a hot shard reserves numbers ahead
// and hands them out without a write, gives back what it did not use, lets another replica in when asked,
// and never hands out a number once its lease may have been taken over.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type KubeApi, KubeError, type KubeObject, type ObjectRef } from "../../shared/kube/api.js";
import { sequenceConfigMapName, sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import {
  foreignLeaseBinds,
  HOLDER_VALID_MS,
  isLeaseWanted,
  LEASE_ANNOTATION,
  LEASE_IDLE_MS,
  LEASE_MS,
  LEASE_RENEW_MS,
  LEASE_WANTED_ANNOTATION,
  leaseMarker,
  leaseOf,
  nextReserve,
  observeForeignLease,
  type Pool,
  poolsStillHeld,
  RESERVE_FAST_MS,
  RESERVE_MAX,
  RESERVE_MIN,
  returnReserves,
  withLease,
  withLeaseWanted,
  withoutLease,
} from "../../shared/sequence/lease.js";
import { WRITES_ANNOTATION } from "../../shared/sequence/shard.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";
import { assertExactRange } from "../support/assertions.js";
import { createMemoryKube, type MemoryKube } from "../support/memory-kube.js";

const NAMESPACE = "simkube-fn";
const SCOPE: SequenceScope = {
  simName: "lease-sim",
  owner: { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "root", uid: "lease-root-uid" },
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

const shard = (kube: MemoryKube) => kube.get<ConfigMap>(shardRef());
const writes = (kube: MemoryKube) => kube.countCalls("replace") + kube.countCalls("create");

const pool = (next: number, limit: number): Pool => ({ next, limit, reserve: 8, refilledAt: 0 });

/** `n` calls in one tick. */
const burst = (s: SequenceStore, n: number, hash = A) =>
  Promise.all(Array.from({ length: n }, () => s.next(hash, SCOPE)));

/** Waits until `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

describe("sequence lease: pure steps", () => {
  test("the lease annotation is read back; unreadable or empty ones count as none", () => {
    const meta = (v: string) => ({ annotations: { [LEASE_ANNOTATION]: v } });
    assert.deepEqual(leaseOf(meta('{"holder":"a"}')), { holder: "a" });
    assert.equal(leaseOf(meta("{not json")), undefined);
    assert.equal(leaseOf(meta('{"holder":""}')), undefined);
    assert.equal(leaseOf(meta("null")), undefined);
    assert.equal(leaseOf(undefined), undefined);
  });

  test("the marker moves with every landed write of the holder, and only with its writes", () => {
    const meta = (records: object) => ({
      annotations: { [LEASE_ANNOTATION]: '{"holder":"a"}', [WRITES_ANNOTATION]: JSON.stringify(records) },
    });
    const first = leaseMarker(meta({ a: [3, 100], b: [1, 100] }));
    assert.equal(
      first,
      leaseMarker(meta({ a: [3, 100], b: [9, 200] })),
      "another writer's write: same marker",
    );
    assert.notEqual(first, leaseMarker(meta({ a: [4, 150], b: [1, 100] })));
    assert.equal(leaseMarker({ annotations: {} }), undefined);
  });

  test("taking or letting go clears a request; asking sets it", () => {
    const asked = withLeaseWanted({ x: "1" }, "b");
    assert.ok(isLeaseWanted({ annotations: asked }));
    const taken = withLease(asked, "a");
    assert.equal(taken[LEASE_WANTED_ANNOTATION], undefined);
    assert.deepEqual(leaseOf({ annotations: taken }), { holder: "a" });
    assert.deepEqual(withoutLease({ ...taken, ...withLeaseWanted({}, "b") }), { x: "1" });
  });

  test("a foreign lease binds until its marker has stood still for LEASE_MS of our clock", () => {
    let seen = observeForeignLease(undefined, "a#1", 1_000);
    assert.ok(foreignLeaseBinds(seen, 1_000));
    seen = observeForeignLease(seen, "a#1", 1_000 + LEASE_MS - 1);
    assert.ok(foreignLeaseBinds(seen, 1_000 + LEASE_MS - 1), "still within LEASE_MS");
    seen = observeForeignLease(seen, "a#2", 1_000 + LEASE_MS + 1);
    assert.ok(foreignLeaseBinds(seen, 1_000 + LEASE_MS + 1), "the holder wrote again: the wait starts over");
    assert.equal(seen.since, 1_000 + LEASE_MS + 1);
    seen = observeForeignLease(seen, "a#2", seen.since + LEASE_MS);
    assert.ok(!foreignLeaseBinds(seen, seen.since + LEASE_MS), "unchanged for LEASE_MS: over");
    assert.ok(!foreignLeaseBinds(undefined, 0), "no lease seen: nothing binds");
    assert.ok(HOLDER_VALID_MS < LEASE_MS, "the holder stops handing out before anyone may take over");
  });

  test("the reserve doubles when it ran out fast, halves when it lasted long, within its bounds", () => {
    assert.equal(nextReserve(8, RESERVE_FAST_MS - 1), 16);
    assert.equal(nextReserve(RESERVE_MAX, 0), RESERVE_MAX);
    assert.equal(nextReserve(64, RESERVE_FAST_MS * 2), 64);
    assert.equal(nextReserve(64, RESERVE_FAST_MS * 100), 32);
    assert.equal(nextReserve(RESERVE_MIN, RESERVE_FAST_MS * 100), RESERVE_MIN);
  });

  test("giving reserves back lowers a counter only from its pool's limit", () => {
    const pools = new Map([
      [A, pool(5, 13)],
      [B, pool(2, 10)],
    ]);
    assert.deepEqual(returnReserves({ [A]: "13", [B]: "11", other: "4" }, pools), {
      [A]: "5",
      [B]: "11",
      other: "4",
    });
  });

  test("the pools are still ours only with our lease and every counter at its pool's limit", () => {
    const meta = { annotations: withLease({}, "a") };
    const pools = new Map([[A, pool(5, 13)]]);
    assert.ok(poolsStillHeld(meta, { [A]: "13" }, "a", pools));
    assert.ok(!poolsStillHeld(meta, { [A]: "14" }, "a", pools), "someone moved the counter");
    assert.ok(!poolsStillHeld(meta, { [A]: "13" }, "b", pools), "someone else's lease");
    assert.ok(!poolsStillHeld({ annotations: {} }, { [A]: "13" }, "a", pools), "no lease any more");
  });
});

describe("sequence lease: one replica", () => {
  test("alone on a hot shard: 500 calls get exactly 0..499 from a handful of writes; close gives the rest back", async () => {
    const kube = createMemoryKube();
    const s = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "a" });
    const got: number[] = [];
    for (let round = 0; round < 10; round++) got.push(...(await burst(s, 50)));
    assertExactRange(got, "one replica");
    const held = shard(kube);
    assert.deepEqual(leaseOf(held?.metadata), { holder: "a" }, "the lease is on the shard");
    assert.ok(Number(held?.data?.[A]) > 500, "numbers are reserved ahead");
    assert.ok(writes(kube) <= 15, `${writes(kube)} writes for 500 numbers`);

    await s.close?.();
    const released = shard(kube);
    assert.equal(released?.data?.[A], "500", "the unused reserve was given back");
    assert.equal(leaseOf(released?.metadata), undefined);
    assert.equal(await s.next(A, SCOPE), 500, "after close, numbers still come, one write each");
  });

  test("one call at a time does not take a lease: one write per number, as without leases", async () => {
    const kube = createMemoryKube();
    const s = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "a" });
    for (let i = 0; i < 3; i++) {
      assert.equal(await s.next(A, SCOPE), i);
      await sleep(80); // longer than a hot shard's gap between writes
    }
    assert.equal(leaseOf(shard(kube)?.metadata), undefined);
    assert.equal(shard(kube)?.data?.[A], "3");
  });

  test("calls that each bring a new hash take no lease: one write per batch, counters exact", async () => {
    const kube = createMemoryKube();
    const s = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "a" });
    const all: string[] = [];
    for (let round = 0; round < 5; round++) {
      const hashes = Array.from({ length: 20 }, (_, i) => `${round * 100 + i}`);
      all.push(...hashes);
      assert.deepEqual(
        await Promise.all(hashes.map((h) => s.next(h, SCOPE))),
        hashes.map(() => 0),
      );
    }
    for (const hash of all) {
      const name = sequenceConfigMapName(SCOPE, sequenceShardOf(hash));
      const cm = kube.get<ConfigMap>({ ...shardRef(), name });
      assert.equal(leaseOf(cm?.metadata), undefined, `no lease on ${name}`);
      assert.equal(cm?.data?.[hash], "1", `hash ${hash}: nothing reserved ahead`);
    }
  });

  test("an idle holder lets go by itself within LEASE_IDLE_MS and a renewal, and the counter is exact", async () => {
    const kube = createMemoryKube();
    const s = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "a" });
    await burst(s, 20);
    await burst(s, 5, B);
    assert.ok(leaseOf(shard(kube)?.metadata));
    await until(
      () => leaseOf(shard(kube)?.metadata) === undefined,
      LEASE_IDLE_MS + 3 * LEASE_RENEW_MS,
      "the lease let go",
    );
    assert.deepEqual([shard(kube)?.data?.[A], shard(kube)?.data?.[B]], ["20", "5"]);
  });

  test("a holder that cannot renew stops handing out at HOLDER_VALID_MS: its callers are denied, not numbered", async () => {
    const kube = createMemoryKube();
    let clock = 0;
    const s = createClusterSequenceStore(kube, {
      namespace: NAMESPACE,
      writerId: "a",
      now: () => clock,
      deadlineMs: 100,
      maxAttempts: 3,
      sleep: () => new Promise<void>((resolve) => setImmediate(resolve)),
    });
    assertExactRange(await burst(s, 4), "before");
    assert.equal(await s.next(A, SCOPE), 4, "from the pool, no write");
    const before = writes(kube);
    const reserved = shard(kube)?.data?.[A];
    clock += HOLDER_VALID_MS;
    kube.inject({
      verb: "replace",
      times: Number.POSITIVE_INFINITY,
      error: new KubeError(503, "Unavailable", "down"),
    });
    await assert.rejects(s.next(A, SCOPE), /could not be updated/);
    assert.ok(kube.countCalls("replace") > before, "it tried to renew");
    assert.equal(shard(kube)?.data?.[A], reserved, "no write landed");
  });
});

describe("sequence lease: replicas", () => {
  test("a second replica asks; the holder gives its rest back and both go on from there, exact", async () => {
    const kube = createMemoryKube();
    const a = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "a" });
    const b = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "b" });
    const first = await burst(a, 30);
    assert.ok(leaseOf(shard(kube)?.metadata), "a holds the lease");
    const started = Date.now();
    // a keeps working while b waits: a sees b's request at its next write and lets go.
    const [fromB, moreA] = await Promise.all([
      burst(b, 10),
      (async () => {
        const out: number[] = [];
        for (let i = 0; i < 10; i++) {
          out.push(...(await burst(a, 5)));
          await sleep(30);
        }
        return out;
      })(),
    ]);
    assertExactRange([...first, ...fromB, ...moreA], "both replicas");
    assert.ok(Date.now() - started < LEASE_MS, "b did not wait for the lease to run out");
    await a.close?.();
    await b.close?.();
    assert.equal(shard(kube)?.data?.[A], "90");
    assert.equal(leaseOf(shard(kube)?.metadata), undefined);
  });

  test("four replicas sharing a hot shard: the holder lets go when asked, then they write number by number, exact", async () => {
    const kube = createMemoryKube();
    const writers = ["a", "b", "c", "d"];
    const replicas = writers.map((writerId) =>
      createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId }),
    );
    const got = [...(await burst(replicas[0] as SequenceStore, 16))];
    assert.deepEqual(leaseOf(shard(kube)?.metadata), { holder: "a" }, "a took the lease while alone");
    const end = Date.now() + 1_500;
    await Promise.all(
      replicas.map(async (r) => {
        while (Date.now() < end) got.push(...(await burst(r, 16)));
      }),
    );
    assertExactRange(got, "four replicas");
    assert.equal(leaseOf(shard(kube)?.metadata), undefined, "shared: nobody holds it");
    assert.equal(shard(kube)?.data?.[A], String(got.length));
    await Promise.all(replicas.map((r) => r.close?.()));
  });

  test("a holder that died: another replica takes over after LEASE_MS, after the dead one's reserve", async () => {
    const kube = createMemoryKube();
    // The dead replica: its clock stands still, so it never lets go on its own, and its calls fail.
    const dead = { now: false };
    const gone = () => Promise.reject(new KubeError(0, "ECONNRESET", "gone"));
    const aKube: KubeApi = {
      read: (ref, options) => (dead.now ? gone() : kube.read(ref, options)),
      create: (object) => (dead.now ? gone() : kube.create(object)),
      replace: (object) => (dead.now ? gone() : kube.replace(object)),
    };
    const a = createClusterSequenceStore(aKube, { namespace: NAMESPACE, writerId: "a", now: () => 0 });
    assertExactRange(await burst(a, 10), "before the crash");
    const reservedUpTo = Number(shard(kube)?.data?.[A]);
    assert.ok(reservedUpTo > 10);
    dead.now = true;
    const b = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "b" });
    const started = Date.now();
    const seq = await b.next(A, SCOPE);
    const waited = Date.now() - started;
    assert.equal(seq, reservedUpTo, "the dead holder's unused reserve is a gap, never a duplicate");
    assert.ok(waited >= LEASE_MS - 100, `waited ${waited} ms for the lease to run out`);
  });
});
