import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { SIMULATION_LABEL_KEY } from "../../shared/base/keys.js";
import { KubeError, type KubeObject, type ObjectRef } from "../../shared/kube/api.js";
import {
  SEQUENCE_CONFIGMAP_PREFIX,
  SEQUENCE_SHARD_COUNT,
  sequenceConfigMapName,
  sequenceShardOf,
} from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import { FREE_ANNOTATION, reserve } from "../../shared/sequence/shard.js";
import {
  buildSequenceConfigMap,
  CONFIGMAP_DATA_LIMIT_BYTES,
  configMapDataSize,
  metadataForWrite,
} from "../../shared/sequence/shard-configmap.js";
import {
  createMemorySequenceStore,
  type SequenceScope,
  type SequenceStore,
  SequenceStoreError,
} from "../../shared/sequence/store.js";
import { assertExactRange } from "../support/assertions.js";
import { createMemoryKube, type MemoryKube } from "../support/memory-kube.js";

const NAMESPACE = "simkube-fn";
const ROOT = {
  apiVersion: "simkube.io/v1",
  kind: "SimulationRoot",
  name: "sk-test-sim-root",
  uid: "6f9f4a52-1b1e-4c1a-9d3e-0c1d2e3f4a5b",
};
const SCOPE: SequenceScope = { simName: "test-sim", owner: ROOT };
const HASHES = ["1234567890123456789", "42", "18446744073709551615", "7"];
// "42" and "453" share a shard (0x83); "7" is in another (0xf6).
const SAME_SHARD = ["42", "453"] as const;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The ConfigMap (shard) that holds this hash's counter. */
function cmRef(scope: SequenceScope = SCOPE, hash = "42"): ObjectRef {
  const name = sequenceConfigMapName(scope, sequenceShardOf(hash));
  return { apiVersion: "v1", kind: "ConfigMap", namespace: NAMESPACE, name };
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A store whose backoff yields a macrotask instead of sleeping, on a clock that only the sleeps move. The
 * compare-and-swap path: without leases, unless `extra` turns them on (sequence-lease.test.ts covers them).
 */
function clusterStore(
  kube: MemoryKube,
  extra: Partial<Parameters<typeof createClusterSequenceStore>[1]> = {},
) {
  let clock = 0;
  const sleeps: number[] = [];
  const store = createClusterSequenceStore(kube, {
    namespace: NAMESPACE,
    lease: false,
    random: seededRandom(7),
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
      await macrotask();
    },
    ...extra,
  });
  return { store, sleeps, advance: (ms: number) => (clock += ms) };
}

describe("memory sequence store", () => {
  test("counts per spec hash from 0, like SimKube's driver", async () => {
    const store = createMemorySequenceStore();
    const got = [];
    for (const hash of ["1", "1", "2", "1", "2"]) got.push(await store.next(hash, SCOPE));
    assert.deepEqual(got, [0, 1, 0, 2, 1]);
  });

  test("simulations and runs of one simulation count separately", async () => {
    const store = createMemorySequenceStore();
    assert.equal(await store.next("1", SCOPE), 0);
    assert.equal(await store.next("1", SCOPE), 1);
    assert.equal(await store.next("1", { simName: "other-sim" }), 0);
    assert.equal(await store.next("1", { simName: "test-sim", owner: { ...ROOT, uid: "rerun" } }), 0);
    assert.equal(await store.next("1", SCOPE), 2);
  });

  test("a hash that cannot be a ConfigMap key is refused", async () => {
    const store = createMemorySequenceStore();
    await assert.rejects(store.next("not/a/hash", SCOPE), SequenceStoreError);
    await assert.rejects(store.next("", SCOPE), SequenceStoreError);
  });
});

describe("sequenceConfigMapName", () => {
  const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

  test("the sim name, a short hash of the owner uid, then the shard in two hex digits", () => {
    const name = sequenceConfigMapName(SCOPE, 0);
    assert.match(name, /^sk-fn-seq-test-sim-[0-9a-f]{10}-00$/);
    assert.equal(sequenceConfigMapName({ simName: "test-sim" }, 0xff), "sk-fn-seq-test-sim-ff");
    assert.equal(sequenceConfigMapName({ ...SCOPE }, 0), name, "deterministic");
    assert.notEqual(sequenceConfigMapName({ simName: "test-sim", owner: { ...ROOT, uid: "x" } }, 0), name);
    assert.notEqual(sequenceConfigMapName(SCOPE, 1), name);
  });

  const cases: Array<[string, string]> = [
    ["upper case and underscores", "My_Sim"],
    ["leading and trailing junk", "--sim--"],
    ["nothing usable", "___"],
    ["too long", "s".repeat(300)],
    ["long with dots", `${"a.".repeat(130)}b`],
  ];
  for (const [label, simName] of cases) {
    test(`valid and distinct: ${label}`, () => {
      for (const scope of [{ simName }, { simName, owner: ROOT }]) {
        const name = sequenceConfigMapName(scope, SEQUENCE_SHARD_COUNT - 1);
        assert.ok(name.length <= 253, `${name.length} chars`);
        assert.match(name, DNS_SUBDOMAIN);
        assert.ok(name.startsWith(SEQUENCE_CONFIGMAP_PREFIX));
        assert.notEqual(name, sequenceConfigMapName({ simName: `${simName}x` }, SEQUENCE_SHARD_COUNT - 1));
      }
    });
  }

  test("names that clean up alike stay apart", () => {
    assert.notEqual(
      sequenceConfigMapName({ simName: "My_Sim" }, 0),
      sequenceConfigMapName({ simName: "my-sim" }, 0),
    );
  });
});

describe("reserve", () => {
  test("consecutive numbers per hash in queue order, continuing from the stored counters", () => {
    const { data, numbers } = reserve({ "1": "5", "9": "1" }, [
      { hash: "1" },
      { hash: "2" },
      { hash: "1" },
      { hash: "2" },
    ]);
    assert.deepEqual(numbers, [5, 0, 6, 1]);
    assert.deepEqual(data, { "1": "7", "2": "2", "9": "1" });
  });

  test("a stored value that is not a count is an error, not a reset", () => {
    for (const bad of ["-1", "1.5", "x", "", "99999999999999999999"]) {
      assert.throws(() => reserve({ "1": bad }, [{ hash: "1" }]), SequenceStoreError, bad);
    }
  });
});

describe("cluster sequence store", () => {
  test("first use creates the shard's ConfigMap, owned by the SimulationRoot and labelled; later uses are one PUT", async () => {
    const [a, b] = SAME_SHARD;
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    assert.equal(await store.next(a, SCOPE), 0);
    assert.deepEqual(
      kube.calls.map((c) => [c.verb, c.status]),
      [
        ["read", 404],
        ["create", 201],
      ],
    );
    const cm = kube.get<ConfigMap>(cmRef());
    assert.ok(cm);
    assert.deepEqual(cm.metadata?.ownerReferences, [ROOT]);
    assert.equal(cm.metadata?.labels?.[SIMULATION_LABEL_KEY], "test-sim");
    assert.deepEqual(cm.data, { [a]: "1" });

    assert.equal(await store.next(a, SCOPE), 1);
    assert.equal(await store.next(b, SCOPE), 0);
    assert.deepEqual(
      kube.calls.slice(2).map((c) => [c.verb, c.status]),
      [
        ["replace", 200],
        ["replace", 200],
      ],
    );
    assert.deepEqual(kube.get<ConfigMap>(cmRef())?.data, { [a]: "2", [b]: "1" });
  });

  test("without an owner the object has no ownerReferences; a long sim name gets no label", () => {
    const longName = "s".repeat(80);
    const cm = buildSequenceConfigMap({ namespace: NAMESPACE, name: "n" }, { simName: longName }, {});
    assert.equal(cm.metadata?.ownerReferences, undefined);
    assert.equal(cm.metadata?.labels?.[SIMULATION_LABEL_KEY], undefined);
  });

  test("an existing ConfigMap (another replica, a previous process) is read and continued", async () => {
    const kube = createMemoryKube();
    kube.seed(buildSequenceConfigMap(cmRef() as { namespace: string; name: string }, SCOPE, { "42": "17" }));
    const { store } = clusterStore(kube);
    assert.equal(await store.next("42", SCOPE), 17);
    assert.deepEqual(
      kube.calls.map((c) => c.verb),
      ["read", "replace"],
    );
  });

  test("create racing another replica's create: AlreadyExists, then read and PUT", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    // The other replica creates the object between our 404 and our POST.
    kube.inject({ verb: "read", error: new KubeError(404, "NotFound", "not found") });
    kube.seed(buildSequenceConfigMap(cmRef() as { namespace: string; name: string }, SCOPE, { "42": "3" }));
    assert.equal(await store.next("42", SCOPE), 3);
    assert.deepEqual(
      kube.calls.map((c) => [c.verb, c.status]),
      [
        ["read", 404],
        ["create", 409],
        ["read", 200],
        ["replace", 200],
      ],
    );
  });

  test("a stale cached copy gets 409: re-read, back off with jitter, and continue from the other writer", async () => {
    const kube = createMemoryKube();
    const { store, sleeps } = clusterStore(kube, { random: () => 0.5 });
    const other = clusterStore(kube).store;
    assert.equal(await store.next("42", SCOPE), 0);
    assert.equal(await other.next("42", SCOPE), 1);
    assert.equal(await other.next("42", SCOPE), 2);
    const before = kube.calls.length;
    assert.equal(await store.next("42", SCOPE), 3);
    assert.deepEqual(
      kube.calls.slice(before).map((c) => [c.verb, c.status]),
      [
        ["replace", 409],
        ["read", 200],
        ["replace", 200],
      ],
    );
    assert.deepEqual(sleeps, [2], "half of the first 5 ms step");
  });

  test("concurrent calls for one shard in one instance share one write and get consecutive numbers", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    const first = await Promise.all(Array.from({ length: 10 }, () => store.next("42", SCOPE)));
    assert.deepEqual(first, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(
      kube.calls.map((c) => c.verb),
      ["read", "create"],
    );

    const mixed = await Promise.all([
      store.next("42", SCOPE),
      store.next("453", SCOPE),
      store.next("42", SCOPE),
      store.next("453", SCOPE),
    ]);
    assert.deepEqual(mixed, [10, 0, 11, 1]);
    assert.equal(kube.countCalls("replace"), 1);

    // Another shard is another object: its own read and create, in parallel with this shard's write.
    const before = kube.calls.length;
    assert.deepEqual(await Promise.all([store.next("42", SCOPE), store.next("7", SCOPE)]), [12, 0]);
    assert.deepEqual(
      kube.calls
        .slice(before)
        .map((c) => [c.verb, c.ref.name.slice(-2)])
        .sort(),
      [
        ["create", "f6"],
        ["read", "f6"],
        ["replace", "83"],
      ],
    );
  });

  test("calls arriving while a write is in flight join the next write", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    await store.next("42", SCOPE);
    const writesBefore = kube.countCalls("replace");
    const calls: Array<Promise<number>> = [];
    for (let i = 0; i < 20; i++) {
      calls.push(store.next("42", SCOPE));
      await macrotask();
    }
    assertExactRange([0, ...(await Promise.all(calls))], "hash 42");
    const writes = kube.countCalls("replace") - writesBefore;
    assert.ok(writes < 20, `20 calls took ${writes} writes`);
  });

  test("four instances on one API, 1,000 calls over four hashes interleaved: exactly 0..n-1 per hash; restarted instances continue", async () => {
    const jitter = seededRandom(2024);
    // 0-3 macrotasks per pause, so reads and writes of different instances overlap in varying orders.
    const kube = createMemoryKube({
      pause: async () => {
        for (let n = Math.floor(jitter() * 4); n > 0; n--) await macrotask();
      },
    });
    const runRound = async (total: number, seed: number) => {
      const stores: SequenceStore[] = [1, 2, 3, 4].map(
        (i) => clusterStore(kube, { random: seededRandom(seed + i) }).store,
      );
      const pick = seededRandom(seed);
      const byHash = new Map<string, Array<Promise<number>>>();
      for (let i = 0; i < total; i++) {
        const hash = HASHES[Math.floor(pick() * HASHES.length)] as string;
        const store = stores[i % stores.length] as SequenceStore;
        const list = byHash.get(hash) ?? [];
        list.push(store.next(hash, SCOPE));
        byHash.set(hash, list);
        if (pick() < 0.3) await macrotask();
      }
      const out = new Map<string, number[]>();
      for (const [hash, list] of byHash) out.set(hash, await Promise.all(list));
      return out;
    };

    const first = await runRound(1000, 1);
    for (const [hash, numbers] of first) assertExactRange(numbers, `hash ${hash}`);
    assert.equal(
      [...first.values()].reduce((n, l) => n + l.length, 0),
      1000,
    );
    const conflicts = kube.calls.filter((c) => c.verb === "replace" && c.status === 409).length;
    assert.ok(conflicts > 0, "the instances really contended");

    // Restart: brand-new instances (empty caches) continue where counting stopped.
    const second = await runRound(200, 99);
    for (const [hash, numbers] of second) {
      const before = first.get(hash)?.length ?? 0;
      assertExactRange(
        [...Array.from({ length: before }, (_, i) => i), ...numbers],
        `hash ${hash} after restart`,
      );
    }
    for (const hash of HASHES) {
      const data = kube.get<ConfigMap>(cmRef(SCOPE, hash))?.data ?? {};
      const total = (first.get(hash)?.length ?? 0) + (second.get(hash)?.length ?? 0);
      assert.equal(data[hash], total === 0 ? undefined : String(total), `stored counter of ${hash}`);
    }
  });

  test("transient errors are retried after a re-read", async () => {
    const kube = createMemoryKube();
    const { store, sleeps } = clusterStore(kube, { random: () => 0.5 });
    await store.next("42", SCOPE);
    kube.inject({
      verb: "replace",
      times: 2,
      error: new KubeError(503, "ServiceUnavailable", "etcd leader changed"),
    });
    kube.inject({ verb: "read", error: new KubeError(429, "TooManyRequests", "slow down") });
    assert.equal(await store.next("42", SCOPE), 1);
    assert.deepEqual(
      kube.calls.slice(2).map((c) => [c.verb, c.status]),
      [
        ["replace", 503],
        ["read", 429],
        ["read", 200],
        ["replace", 503],
        ["read", 200],
        ["replace", 200],
      ],
    );
    assert.deepEqual(sleeps, [2, 5, 10], "exponential steps, jittered (here by 0.5)");
  });

  test("backoff grows per failure in a row, capped lower for conflicts than for transient errors", async () => {
    const steps = async (error: KubeError) => {
      const kube = createMemoryKube();
      const { store, sleeps } = clusterStore(kube, { random: () => 0.99, maxAttempts: 9 });
      await store.next("42", SCOPE);
      kube.inject({ verb: "replace", times: Number.POSITIVE_INFINITY, error });
      await assert.rejects(store.next("42", SCOPE), /in 9 attempts/);
      return sleeps;
    };
    assert.deepEqual(await steps(new KubeError(409, "Conflict", "modified")), [4, 9, 19, 19, 19, 19, 19, 19]);
    assert.deepEqual(
      await steps(new KubeError(503, "ServiceUnavailable", "etcd")),
      // The ninth 503 leaves a write of unknown outcome: one more step to read it back after the caller gave up.
      [4, 9, 19, 39, 79, 158, 198, 198, 198],
    );
  });

  test("a write whose answer is lost but which landed is read back and its number handed out: no gap", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    assert.equal(await store.next("42", SCOPE), 0);
    // The PUT reserving 1 lands, but the connection drops before the answer.
    kube.inject({
      verb: "replace",
      afterApply: true,
      error: new KubeError(0, "ECONNRESET", "socket hang up"),
    });
    assert.equal(await store.next("42", SCOPE), 1);
    assert.equal(await store.next("42", SCOPE), 2);
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["42"], "3");
    assert.deepEqual(
      kube.calls.slice(2).map((c) => [c.verb, c.status]),
      [
        ["replace", 0],
        ["read", 200],
        ["replace", 200],
      ],
      "one read back decides it; no second write for 1",
    );
  });

  test("a lost write that did not land is written again with the same numbers", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    assert.equal(await store.next("42", SCOPE), 0);
    kube.inject({ verb: "replace", error: new KubeError(0, "ECONNRESET", "socket hang up") });
    assert.equal(await store.next("42", SCOPE), 1);
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["42"], "2");
  });

  test("a landed write is recognised even after another replica wrote the shard since", async () => {
    const kube = createMemoryKube();
    const a = clusterStore(kube, { writerId: "a" }).store;
    const b = clusterStore(kube, { writerId: "b" }).store;
    assert.equal(await a.next("42", SCOPE), 0);
    kube.inject({ verb: "replace", afterApply: true, error: new KubeError(504, "Timeout", "etcd slow") });
    const fromA = a.next("42", SCOPE);
    // b writes before a reads back: the object has moved on twice, a's record still names its write.
    const fromB = b.next("42", SCOPE);
    assert.deepEqual((await Promise.all([fromA, fromB])).sort(), [1, 2]);
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["42"], "3");
  });

  test("a caller whose deadline passes while its write is in flight: the number is freed and handed out next", async () => {
    let release: (() => void) | undefined;
    const kube = createMemoryKube({
      pause: (verb) =>
        verb === "replace" && release === undefined
          ? new Promise<void>((resolve) => {
              release = resolve;
            })
          : new Promise<void>((resolve) => setImmediate(resolve)),
    });
    const store = createClusterSequenceStore(kube, { namespace: NAMESPACE, deadlineMs: 100, writerId: "a" });
    const other = createClusterSequenceStore(kube, { namespace: NAMESPACE, writerId: "b" });
    await kube.create(
      buildSequenceConfigMap({ namespace: NAMESPACE, name: cmRef().name }, SCOPE, { "42": "5" }),
    );
    await assert.rejects(store.next("42", SCOPE), /within 100 ms/);
    release?.(); // the PUT reserving 5 lands after its caller was denied
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cm = kube.get<ConfigMap>(cmRef());
    assert.equal(cm?.data?.["42"], "6");
    assert.equal(cm?.metadata?.annotations?.[FREE_ANNOTATION], JSON.stringify({ "42": [5] }), "5 is free");
    assert.equal(await other.next("42", SCOPE), 5, "any replica hands out the freed number first");
    assert.equal(await store.next("42", SCOPE), 6);
    assert.equal(kube.get<ConfigMap>(cmRef())?.metadata?.annotations?.[FREE_ANNOTATION], undefined);
  });

  test("four replicas under lost answers, conflicts and resets: every number handed out once, none skipped", async () => {
    const kube = createMemoryKube();
    const random = seededRandom(11);
    const stores = ["a", "b", "c", "d"].map(
      (w) => clusterStore(kube, { writerId: w, maxAttempts: 1000 }).store,
    );
    const faults: KubeError[] = [
      new KubeError(0, "ECONNRESET", "socket hang up"),
      new KubeError(504, "Timeout", "etcd slow"),
      new KubeError(409, "Conflict", "modified"),
    ];
    for (let i = 0; i < 150; i++) {
      const error = faults[i % faults.length] as KubeError;
      kube.inject({ verb: "replace", error, afterApply: error.status !== 409 && random() < 0.6 });
    }
    const got = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        (stores[i % 4] as SequenceStore).next(SAME_SHARD[i % 2] as string, SCOPE),
      ),
    );
    for (const hash of SAME_SHARD) {
      const mine = got.filter((_, i) => SAME_SHARD[i % 2] === hash);
      assert.equal(mine.length, 200);
      assertExactRange(mine, `hash ${hash}`);
    }
    const cm = kube.get<ConfigMap>(cmRef());
    assert.deepEqual([cm?.data?.["42"], cm?.data?.["453"]], ["200", "200"]);
  });

  test("a create whose outcome is unknown: the object is read back, not created twice", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    kube.inject({
      verb: "create",
      afterApply: true,
      error: new KubeError(504, "Timeout", "request timed out"),
    });
    assert.equal(await store.next("42", SCOPE), 0, "the create landed: its number is handed out");
    assert.equal(await store.next("42", SCOPE), 1);
    assert.deepEqual(
      kube.calls.map((c) => [c.verb, c.status]),
      [
        ["read", 404],
        ["create", 504],
        ["read", 200],
        ["replace", 200],
      ],
    );
  });

  test("the deadline bounds the retries: a clear SequenceStoreError, no number handed out", async () => {
    const kube = createMemoryKube();
    const { store, sleeps } = clusterStore(kube, { deadlineMs: 1000, maxAttempts: 1000, backoffMaxMs: 200 });
    await store.next("42", SCOPE);
    kube.inject({
      verb: "replace",
      times: Number.POSITIVE_INFINITY,
      error: new KubeError(409, "Conflict", "modified"),
    });
    const err = await store.next("42", SCOPE).then(
      () => assert.fail("expected a SequenceStoreError"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SequenceStoreError);
    assert.match(err.message, /spec hash 42 of simulation test-sim/);
    assert.match(
      err.message,
      /ConfigMap simkube-fn\/sk-fn-seq-test-sim-[0-9a-f]{10}-83 could not be updated within 1000 ms/,
    );
    assert.match(err.message, /last error: 409 Conflict/);
    assert.ok(
      sleeps.every((ms) => ms < 20),
      "conflict backoff is capped at 20 ms",
    );
    assert.ok(sleeps.reduce((a, b) => a + b, 0) <= 1000, "the backoff never sleeps past the deadline");
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["42"], "1", "nothing was reserved");
  });

  test("the attempt bound gives up with the same kind of error", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube, { maxAttempts: 3 });
    await store.next("42", SCOPE);
    kube.inject({
      verb: "replace",
      times: Number.POSITIVE_INFINITY,
      error: new KubeError(409, "Conflict", "modified"),
    });
    await assert.rejects(store.next("42", SCOPE), (err: unknown) => {
      assert.ok(err instanceof SequenceStoreError);
      assert.match(err.message, /could not be updated in 3 attempts; last error: 409 Conflict/);
      return true;
    });
    assert.equal(kube.countCalls("replace"), 3, "three PUTs after the create");
  });

  test("403 is not retried and says which permission is missing", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    kube.inject({
      verb: "read",
      error: new KubeError(
        403,
        "Forbidden",
        'configmaps "x" is forbidden: User "system:serviceaccount:simkube-fn:default" cannot get resource "configmaps"',
      ),
    });
    await assert.rejects(store.next("42", SCOPE), (err: unknown) => {
      assert.ok(err instanceof SequenceStoreError);
      assert.match(
        err.message,
        /could not read ConfigMap simkube-fn\/sk-fn-seq-test-sim-[0-9a-f]{10}-83: 403 Forbidden/,
      );
      assert.match(err.message, /needs get, create and update on configmaps in namespace simkube-fn/);
      return true;
    });
    assert.equal(kube.calls.length, 1);
    // The store is not stuck: the next call works once the permission is there.
    assert.equal(await store.next("42", SCOPE), 0);
  });

  test("a 403 from OwnerReferencesPermissionEnforcement asks for delete too", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    kube.inject({
      verb: "create",
      error: new KubeError(403, "Forbidden", "cannot set an ownerRef on a resource you can't delete"),
    });
    await assert.rejects(
      store.next("42", SCOPE),
      /could not create .*needs get, create, update and delete on configmaps/,
    );
  });

  test("other refusals (422) fail the batch with the API server's words", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    await store.next("42", SCOPE);
    kube.inject({ verb: "replace", error: new KubeError(422, "Invalid", "ConfigMap is invalid: Too long") });
    await assert.rejects(
      store.next("42", SCOPE),
      /could not update ConfigMap .*: 422 Invalid: ConfigMap is invalid: Too long/,
    );
    assert.equal(await store.next("42", SCOPE), 1, "the failed write handed out nothing");
  });

  test("a corrupt stored counter is repaired, not refused for good (more: sequence-validation.test.ts)", async () => {
    const kube = createMemoryKube();
    kube.seed(
      buildSequenceConfigMap(cmRef() as { namespace: string; name: string }, SCOPE, { "42": "lots" }),
    );
    const { store } = clusterStore(kube);
    // Nothing to restore it from (no total, no free numbers): it restarts at 0.
    assert.equal(await store.next("42", SCOPE), 0);
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["42"], "1");
  });

  test("the object deleted under a running store is created again", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    assert.equal(await store.next("42", SCOPE), 0);
    kube.remove(cmRef());
    assert.equal(await store.next("42", SCOPE), 0);
    assert.deepEqual(
      kube.calls.slice(2).map((c) => [c.verb, c.status]),
      [
        ["replace", 404],
        ["read", 404],
        ["create", 201],
      ],
    );
  });

  test("each run of a simulation has its own object", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    const rerun: SequenceScope = { simName: "test-sim", owner: { ...ROOT, uid: "a-new-run" } };
    assert.equal(await store.next("42", SCOPE), 0);
    assert.equal(await store.next("42", SCOPE), 1);
    assert.equal(await store.next("42", rerun), 0);
    assert.equal(await store.next("42", { simName: "other" }), 0);
    assert.equal(await store.next("42", { simName: "another" }), 0);
    assert.equal(await store.next("42", SCOPE), 2, "the first run's count goes on where it was");
    assert.equal(await store.next("42", rerun), 1);
    assert.notEqual(sequenceConfigMapName(rerun, 0x83), sequenceConfigMapName(SCOPE, 0x83));
    assert.deepEqual(kube.get<ConfigMap>(cmRef(rerun))?.metadata?.ownerReferences, [rerun.owner]);
  });

  test("an API call that never answers fails its callers at the deadline and does not stall later ones", async () => {
    const kube = createMemoryKube();
    // Real timers here: the deadline is what is under test. Only outcomes are asserted.
    const store = createClusterSequenceStore(kube, { namespace: NAMESPACE, deadlineMs: 50 });
    assert.equal(await store.next("42", SCOPE), 0);
    kube.inject({ verb: "replace", hang: true, error: new KubeError(0, "Hang", "never") });
    await assert.rejects(store.next("42", SCOPE), /could not be updated within 50 ms/);
    const after = await store.next("42", SCOPE);
    assert.equal(after, 1, "the abandoned PUT never landed, so 1 is still free");
  });

  test("an invalid hash is refused before any API call", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    await assert.rejects(store.next("a b", SCOPE), SequenceStoreError);
    assert.equal(kube.calls.length, 0);
  });
});

describe("cluster sequence store: sharding", () => {
  /** `n` distinct decimal u64 strings, like stable spec hashes. */
  function specHashes(n: number, seed: number): string[] {
    const random = seededRandom(seed);
    const word = () => BigInt(Math.floor(random() * 2 ** 32));
    const out = new Set<string>();
    while (out.size < n) out.add(((word() << 32n) | word()).toString());
    return [...out];
  }

  test("a hash always lands in the same shard: the mapping is part of the storage format", () => {
    assert.deepEqual(
      ["42", "453", "7", "1234567890123456789", "18446744073709551615"].map(sequenceShardOf),
      [0x83, 0x83, 0xf6, 0xff, 0xf4],
    );
    for (const hash of specHashes(1000, 1)) {
      const shard = sequenceShardOf(hash);
      assert.ok(Number.isInteger(shard) && shard >= 0 && shard < SEQUENCE_SHARD_COUNT, hash);
    }
  });

  test("20,000 distinct hashes: every one gets 0, and no object holds more than 4 KiB of counters", async () => {
    const kube = createMemoryKube();
    const { store } = clusterStore(kube);
    const hashes = specHashes(20_000, 2);
    const numbers = await Promise.all(hashes.map((hash) => store.next(hash, SCOPE)));
    assert.ok(numbers.every((n) => n === 0));

    const sizes: number[] = [];
    let entries = 0;
    for (let shard = 0; shard < SEQUENCE_SHARD_COUNT; shard++) {
      const ref = { ...cmRef(), name: sequenceConfigMapName(SCOPE, shard) };
      const data = kube.get<ConfigMap>(ref)?.data ?? {};
      sizes.push(configMapDataSize(data));
      entries += Object.keys(data).length;
      for (const hash of Object.keys(data)) assert.equal(sequenceShardOf(hash), shard, hash);
    }
    assert.equal(entries, 20_000);
    // ~20,000 x 21 bytes over 256 shards is ~1.6 KB each; 4 KiB leaves room for an unlucky shard.
    assert.ok(Math.max(...sizes) < 4 * 1024, `largest shard ${Math.max(...sizes)} bytes`);
    assert.ok(Math.min(...sizes) > 0, "every shard is used");
  });

  test("a full shard denies its hashes with a SequenceStoreError and hands out nothing; other shards go on", async () => {
    const kube = createMemoryKube();
    // Shard 0x83 is exactly at the API server's limit; counting "453" from 9 to 10 takes one more byte.
    // The rest is filled with well-formed counters (keys of 250 characters and "0"), one shorter to fit.
    const data: Record<string, string> = { "453": "9" };
    let room = CONFIGMAP_DATA_LIMIT_BYTES - "453".length - 1;
    for (let i = 0; room > 0; i++) {
      const keyLength = room >= 251 + 2 ? 250 : room - 1;
      data[`k${i}-`.padEnd(keyLength, "x")] = "0";
      room -= keyLength + 1;
    }
    kube.seed(buildSequenceConfigMap(cmRef() as { namespace: string; name: string }, SCOPE, data));
    const counters = Object.keys(data).length;
    const { store } = clusterStore(kube);
    await assert.rejects(store.next("453", SCOPE), (err: unknown) => {
      assert.ok(err instanceof SequenceStoreError);
      assert.match(
        err.message,
        new RegExp(
          `ConfigMap simkube-fn/sk-fn-seq-test-sim-[0-9a-f]{10}-83 is full: its ${counters} counters would take 1048577 bytes, over the 1048576 bytes a ConfigMap may hold`,
        ),
      );
      return true;
    });
    assert.equal(kube.countCalls("replace"), 0, "no write was attempted");
    assert.equal(kube.get<ConfigMap>(cmRef())?.data?.["453"], "9");
    assert.equal(await store.next("7", SCOPE), 0);
  });
});

describe("metadataForWrite", () => {
  test("drops managedFields and keeps everything else, including the resourceVersion precondition", () => {
    const meta = {
      name: "sk-fn-seq-x-00",
      resourceVersion: "17",
      annotations: { a: "1" },
      managedFields: [{ manager: "simkube-fn", operation: "Update" }],
    };
    assert.deepEqual(metadataForWrite(meta), {
      name: "sk-fn-seq-x-00",
      resourceVersion: "17",
      annotations: { a: "1" },
    });
    assert.equal(meta.managedFields.length, 1, "the cached copy is left as it was");
  });

  test("metadata without managedFields is passed through as it is", () => {
    const meta = { name: "n", resourceVersion: "3" };
    assert.equal(metadataForWrite(meta), meta);
    assert.equal(metadataForWrite(undefined), undefined);
  });
});
