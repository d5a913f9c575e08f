// The sequence store does not trust what it reads from its shard ConfigMaps: whoever may update ConfigMaps
// in the functions' namespace can write anything there (docs/safety.md, "The sequence ConfigMaps"). A
// malformed shard is repaired without giving out a number twice and without refusing a hash for good, and a
// lease record that is rewritten but never let go is taken over within a bound.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeObject, ObjectRef } from "../../shared/kube/api.js";
import { sequenceConfigMapName, sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import { LEASE_ANNOTATION, LEASE_MS } from "../../shared/sequence/lease.js";
import { FREE_ANNOTATION, WRITES_ANNOTATION } from "../../shared/sequence/shard.js";
import { checkShard, TOTAL_ANNOTATION } from "../../shared/sequence/shard-check.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";
import { createMemoryKube, type MemoryKube } from "../support/memory-kube.js";

const NAMESPACE = "simkube-fn";
const SCOPE: SequenceScope = {
  simName: "checked-sim",
  owner: { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "root", uid: "checked-root-uid" },
};
// "42" and "453" share a shard.
const A = "42";
const B = "453";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const shardRef = (): ObjectRef & { namespace: string; name: string } => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: NAMESPACE,
  name: sequenceConfigMapName(SCOPE, sequenceShardOf(A)),
});

/** Overwrites the shard as someone with update rights on ConfigMaps in the namespace could. */
function tamper(kube: MemoryKube, change: (cm: ConfigMap) => ConfigMap): void {
  const cm = kube.get<ConfigMap>(shardRef()) ?? {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: shardRef().name, namespace: NAMESPACE },
    data: {},
  };
  kube.seed(change(structuredClone(cm)));
}

const withFree = (cm: ConfigMap, free: Record<string, unknown>): ConfigMap => ({
  ...cm,
  metadata: {
    ...cm.metadata,
    annotations: { ...cm.metadata?.annotations, [FREE_ANNOTATION]: JSON.stringify(free) },
  },
});

async function take(store: SequenceStore, n: number, hash = A): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await store.next(hash, SCOPE));
  return out;
}

const store = (kube: MemoryKube, writerId = "w") =>
  createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId, lease: false });

describe("sequence shards are checked when read", () => {
  test("duplicate free numbers are handed out once", async () => {
    const kube = createMemoryKube();
    tamper(kube, (cm) => withFree({ ...cm, data: { [A]: "5" } }, { [A]: [2, 2, 2] }));
    const got = await take(store(kube), 3);
    assert.deepEqual(got, [2, 5, 6]);
  });

  test("free numbers at or above the counter are dropped: the counter hands them out, once", async () => {
    const kube = createMemoryKube();
    tamper(kube, (cm) => withFree({ ...cm, data: { [A]: "3" } }, { [A]: [1, 3, 7, -1, 2.5, "x"], [B]: [0] }));
    const got = await take(store(kube), 4);
    assert.deepEqual(got, [1, 3, 4, 5]);
    assert.equal(await store(kube, "v").next(B, SCOPE), 0, "no counter: nothing is free below it");
  });

  test("a counter that is not a count is restored from the shard's total, never refused for good", async () => {
    const kube = createMemoryKube();
    const s = store(kube);
    await take(s, 5, A);
    await take(s, 3, B);
    let next = 5;
    for (const garbage of ["abc", "-4", "1e3", "", " 5", "9007199254740993"]) {
      tamper(kube, (cm) => ({ ...cm, data: { ...cm.data, [A]: garbage } }));
      const seq = await store(kube, `after-${garbage}`).next(A, SCOPE);
      assert.equal(seq, next, `after ${JSON.stringify(garbage)}: the next number, none twice`);
      next += 1;
    }
    assert.equal(await store(kube, "b").next(B, SCOPE), 3, "the other counter untouched");
  });

  test("without a readable total, a malformed counter restarts above its free numbers, and is not refused", async () => {
    const kube = createMemoryKube();
    tamper(kube, (cm) => withFree({ ...cm, data: { [A]: "lots" } }, { [A]: [4, 9] }));
    const got = await take(store(kube), 3);
    assert.deepEqual(got, [4, 9, 10]);
  });
});

describe("checkShard (pure)", () => {
  test("two malformed counters both restart at the bound the total leaves: gaps, never a repeat", () => {
    const checked = checkShard({
      metadata: { annotations: { [TOTAL_ANNOTATION]: "20" } },
      data: { a: "x", b: "y", c: "5" },
    });
    assert.deepEqual(checked.data, { a: "15", b: "15", c: "5" });
    assert.deepEqual(checked.repaired.sort(), ["a", "b"]);
  });
  test("a well-formed shard is left as it is", () => {
    const cm = { metadata: { annotations: { [TOTAL_ANNOTATION]: "7" } }, data: { a: "3", b: "4" } };
    assert.deepEqual(checkShard(cm), { data: { a: "3", b: "4" }, free: {}, repaired: [] });
  });
});

describe("a lease record rewritten but never let go", () => {
  test("is taken over within a bound: numbers flow again, none twice", async () => {
    const kube = createMemoryKube();
    await take(store(kube, "first"), 3);
    // Someone keeps rewriting a lease for a holder that never writes numbers and never lets go: every
    // 100 ms a new write record (so the lease looks alive), the lease put back if it was taken away.
    let n = 0;
    let running = true;
    const rewriter = (async () => {
      while (running) {
        tamper(kube, (cm) => ({
          ...cm,
          metadata: {
            ...cm.metadata,
            annotations: {
              ...cm.metadata?.annotations,
              [LEASE_ANNOTATION]: JSON.stringify({ holder: "mallory" }),
              [WRITES_ANNOTATION]: JSON.stringify({ mallory: [++n, Date.now()] }),
            },
          },
        }));
        await sleep(100);
      }
    })();
    try {
      const s = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "b", lease: false });
      const started = Date.now();
      const got = await take(s, 3);
      const waited = Date.now() - started;
      assert.deepEqual(got, [3, 4, 5]);
      assert.ok(waited < 2 * LEASE_MS, `waited ${waited} ms`);
      // The record put back after the takeover buys no new bound: five more would take 5 x LEASE_MS.
      const again = Date.now();
      assert.deepEqual(await take(s, 5), [6, 7, 8, 9, 10]);
      assert.ok(Date.now() - again < 2 * LEASE_MS, `then waited ${Date.now() - again} ms`);
    } finally {
      running = false;
      await rewriter;
    }
  });
});
