// The cluster sequence store against the real API server through a fault-injecting proxy
// (test/support/cluster/fault-proxy.ts): a write whose answer is lost after it landed, injected 409
// conflicts, an answer held past the caller's deadline, three replicas under all of them at once; and the
// real mutate-create answering one admission review sent twice. Every case reads the shard back: the
// numbers handed out are exactly 0..n-1 per hash, none skipped, none twice. Skipped like the other
// real-cluster files when Go is missing (fails under CI=true).

import assert from "node:assert/strict";
import { after } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import fastJsonPatch from "fast-json-patch";
import { FUNCTIONS_NAMESPACE } from "../../functions/local-cluster/cluster-types.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import { POD_SEQUENCE_NUMBER_KEY } from "../../shared/base/keys.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { sequenceConfigMapName, sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import { leaseOf } from "../../shared/sequence/lease.js";
import { FREE_ANNOTATION } from "../../shared/sequence/shard.js";
import type { SequenceScope } from "../../shared/sequence/store.js";
import { assertExactRange } from "../support/assertions.js";
import { buildCreateReview } from "../support/builders.js";
import { type FaultProxy, startFaultProxy } from "../support/cluster/fault-proxy.js";
import { barePod } from "../support/cluster/kube.js";
import { postReview } from "../support/cluster/post-review.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";

const suite = await openClusterSuite({});
let proxy: FaultProxy | undefined;
let kubeconfig = "";

/** The proxy in front of the API server, and a kubeconfig through it as mutate-create's own account. */
async function throughProxy(): Promise<{ proxy: FaultProxy; kubeconfig: string }> {
  if (!("cluster" in suite)) throw new Error("no cluster");
  if (proxy) return { proxy, kubeconfig };
  const kc = new KubeConfig();
  kc.loadFromFile(suite.cluster.functionKubeconfigs["mutate-create"]);
  const token = kc.getCurrentUser()?.token ?? "";
  proxy = await startFaultProxy(suite.cluster.server, suite.cluster.caCertPem);
  kubeconfig = await writeKubeconfig(proxy.url, undefined, { token, namespace: FUNCTIONS_NAMESPACE });
  return { proxy, kubeconfig };
}

let run = 0;
/** A fresh simulation run per case (its own shards), owned by the cluster's real SimulationRoot. */
function freshScope(): SequenceScope {
  if (!("cluster" in suite)) throw new Error("no cluster");
  const root = suite.cluster.root;
  const owner = {
    apiVersion: root.apiVersion ?? "",
    kind: root.kind ?? "",
    name: root.metadata?.name ?? "",
    uid: root.metadata?.uid ?? "",
  };
  return { simName: `faults-${++run}`, owner };
}

async function shard(
  scope: SequenceScope,
  hash: string,
): Promise<KubeObject & { data?: Record<string, string> }> {
  if (!("cluster" in suite)) throw new Error("no cluster");
  const name = sequenceConfigMapName(scope, sequenceShardOf(hash));
  return suite.cluster.admin.request("GET", `/api/v1/namespaces/${FUNCTIONS_NAMESPACE}/configmaps/${name}`);
}

/** A store through the proxy; without leases (the compare-and-swap path) unless `lease` is set. */
async function store(options: { deadlineMs?: number; writerId?: string; lease?: boolean } = {}) {
  const { kubeconfig: file } = await throughProxy();
  return createClusterSequenceStore(createKubeApi({ kubeconfigPath: file, timeoutMs: 2_000 }), {
    namespace: FUNCTIONS_NAMESPACE,
    lease: false,
    ...options,
  });
}

const HASH = "42";

const lostAnswer: ClusterCase = {
  name: "a PUT whose answer is lost after it reached etcd: read back, its number handed out, no gap",
  run: async () => {
    const scope = freshScope();
    const s = await store();
    assert.equal(await s.next(HASH, scope), 0);
    const { proxy: p } = await throughProxy();
    p.inject("PUT", "drop-answer", 2);
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await s.next(HASH, scope));
    assert.deepEqual(got, [1, 2, 3, 4]);
    assert.equal((await shard(scope, HASH)).data?.[HASH], "5");
    assert.ok((p.seen.get("PUT drop-answer") ?? 0) >= 2, "the proxy dropped two answers");
  },
};

const conflicts: ClusterCase = {
  name: "injected 409 conflicts: re-read and retried, numbers consecutive",
  run: async () => {
    const scope = freshScope();
    const s = await store();
    assert.equal(await s.next(HASH, scope), 0);
    const { proxy: p } = await throughProxy();
    p.inject("PUT", "conflict", 5);
    const got = await Promise.all(Array.from({ length: 10 }, () => s.next(HASH, scope)));
    assertExactRange(got, "after conflicts", 1);
    assert.equal((await shard(scope, HASH)).data?.[HASH], "11");
  },
};

const managedFieldsKept: ClusterCase = {
  name: "PUTs leave managedFields out: the API server keeps the stored entries and counts on",
  run: async () => {
    const scope = freshScope();
    const { kubeconfig: file } = await throughProxy();
    const kube = createKubeApi({ kubeconfigPath: file, timeoutMs: 2_000 });
    const sent: KubeObject[] = [];
    const recording = {
      ...kube,
      replace<T extends KubeObject>(object: T): Promise<T> {
        sent.push(object);
        return kube.replace(object);
      },
    };
    const s = createClusterSequenceStore(recording, { namespace: FUNCTIONS_NAMESPACE, lease: false });
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await s.next(HASH, scope));
    assert.deepEqual(got, [0, 1, 2, 3]);
    assert.equal(sent.length, 3, "one POST, then three PUTs");
    for (const object of sent) assert.equal(object.metadata?.managedFields, undefined);
    const stored = await shard(scope, HASH);
    assert.equal(stored.data?.[HASH], "4");
    const managers = (stored.metadata?.managedFields ?? []).map((m) => JSON.stringify(m.fieldsV1 ?? {}));
    assert.ok(
      managers.some((fields) => fields.includes(`"f:${HASH}"`)),
      `a managedFields entry still owns data.${HASH}: ${managers.join(" | ")}`,
    );
  },
};

const pastDeadline: ClusterCase = {
  name: "an answer held past the caller's deadline: the caller is denied, its landed number is freed and handed out next",
  run: async () => {
    const scope = freshScope();
    const s = await store({ deadlineMs: 1_500 });
    assert.equal(await s.next(HASH, scope), 0);
    const { proxy: p } = await throughProxy();
    p.inject("PUT", { delayMs: 2_500 });
    await assert.rejects(s.next(HASH, scope), /within 1500 ms/);
    // The held PUT (reserving 1) lands; the store frees 1 in the shard.
    const freed = async () => (await shard(scope, HASH)).metadata?.annotations?.[FREE_ANNOTATION];
    for (let i = 0; i < 50 && (await freed()) === undefined; i++)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal(await freed(), JSON.stringify({ [HASH]: [1] }));
    const other = await store({ writerId: "another-replica" });
    assert.equal(await other.next(HASH, scope), 1, "another replica hands out the freed number first");
    assert.equal(await s.next(HASH, scope), 2);
    const cm = await shard(scope, HASH);
    assert.equal(cm.data?.[HASH], "3");
    assert.equal(cm.metadata?.annotations?.[FREE_ANNOTATION], undefined);
  },
};

/** Three replicas, 90 calls over two hashes, under every fault at once; with or without leases. */
function replicasUnderFaults(lease: boolean): ClusterCase {
  return {
    name: `three replicas${lease ? " with leases" : ""}, 90 calls over two hashes, with lost answers, conflicts and slow answers: exactly 0..n-1 each`,
    timeoutMs: 180_000,
    run: async () => {
      const scope = freshScope();
      const replicas = await Promise.all(["r1", "r2", "r3"].map((writerId) => store({ writerId, lease })));
      const { proxy: p } = await throughProxy();
      p.inject("PUT", "drop-answer", 4);
      p.inject("PUT", "conflict", 4);
      p.inject("PUT", { delayMs: 300 }, 4);
      p.inject("POST", "drop-answer", 1);
      const hashes = ["42", "7"];
      const got = await Promise.all(
        Array.from({ length: 90 }, (_, i) =>
          (replicas[i % 3] as (typeof replicas)[number]).next(hashes[i % 2] as string, scope),
        ),
      );
      await Promise.all(replicas.map((r) => r.close?.()));
      for (const [h, hash] of hashes.entries()) {
        assertExactRange(
          got.filter((_, i) => i % 2 === h),
          `hash ${hash}`,
        );
        assert.equal((await shard(scope, hash)).data?.[hash], "45");
      }
    },
  };
}

const leaseUnderFaults: ClusterCase = {
  name: "a leased shard under lost answers and conflicts on its lease writes: exactly 0..n-1, and close gives the reserve back",
  run: async () => {
    const scope = freshScope();
    const s = await store({ lease: true, writerId: "holder" });
    assert.equal(await s.next(HASH, scope), 0);
    const { proxy: p } = await throughProxy();
    p.inject("PUT", "drop-answer", 3);
    p.inject("PUT", "conflict", 3);
    const got = [0];
    for (let round = 0; round < 10; round++)
      got.push(...(await Promise.all(Array.from({ length: 30 }, () => s.next(HASH, scope)))));
    assertExactRange(got, "leased");
    const held = await shard(scope, HASH);
    assert.deepEqual(leaseOf(held.metadata), { holder: "holder" }, "the shard is leased");
    assert.ok(Number(held.data?.[HASH]) > 301, `reserved ahead: ${held.data?.[HASH]}`);
    assert.ok((p.seen.get("PUT drop-answer") ?? 0) >= 3 && (p.seen.get("PUT conflict") ?? 0) >= 3);
    await s.close?.();
    const released = await shard(scope, HASH);
    assert.equal(released.data?.[HASH], "301", "the unused reserve was given back");
    assert.equal(leaseOf(released.metadata), undefined);
  },
};

const leaseHandover: ClusterCase = {
  name: "two replicas with leases on one shard: the holder lets go when asked, numbers exactly 0..n-1",
  timeoutMs: 120_000,
  run: async () => {
    const scope = freshScope();
    const replicas = await Promise.all(["a", "b"].map((writerId) => store({ lease: true, writerId })));
    const got: number[] = [];
    // a warms up alone and takes the lease; then both call in bursts for a while.
    got.push(...(await Promise.all(Array.from({ length: 20 }, () => replicas[0]?.next(HASH, scope) ?? -1))));
    assert.ok(leaseOf((await shard(scope, HASH)).metadata), "a took the lease");
    const end = Date.now() + 1_500;
    await Promise.all(
      replicas.map(async (r) => {
        while (Date.now() < end) {
          got.push(...(await Promise.all(Array.from({ length: 8 }, () => r.next(HASH, scope)))));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }),
    );
    await Promise.all(replicas.map((r) => r.close?.()));
    assertExactRange(got, "two replicas");
    const cm = await shard(scope, HASH);
    assert.equal(cm.data?.[HASH], String(got.length));
    assert.equal(leaseOf(cm.metadata), undefined);
  },
};

const repeatedReview: ClusterCase = {
  name: "mutate-create sent one admission review twice (same request uid): the same sequence number both times",
  run: async () => {
    if (!("cluster" in suite)) throw new Error("no cluster");
    const c = suite.cluster;
    const pod = { ...barePod(c, "repeated-review") } as KubeObject;
    pod.metadata = { ...pod.metadata, namespace: `${c.virtualNamespacePrefix}-repeat` };
    const sequenceOf = (review: AdmissionReview): number => {
      assert.equal(review.response?.allowed, true, review.response?.status?.message);
      const ops = JSON.parse(Buffer.from(review.response?.patch ?? "", "base64").toString());
      const mutated = fastJsonPatch.applyPatch(structuredClone(pod), ops).newDocument;
      const value = mutated.metadata?.annotations?.[POD_SEQUENCE_NUMBER_KEY];
      assert.match(String(value), /^\d+$/, "the patch carries a sequence number");
      return Number(value);
    };
    const review = buildCreateReview({ pod: pod as never, uid: "repeated-uid-1" });
    const first = await postReview(c, "mutate-create", review);
    const again = await postReview(c, "mutate-create", review);
    const other = await postReview(
      c,
      "mutate-create",
      buildCreateReview({ pod: pod as never, uid: "repeated-uid-2" }),
    );
    assert.equal(sequenceOf(again), sequenceOf(first));
    assert.equal(sequenceOf(other), sequenceOf(first) + 1);
  },
};

registerClusterCases("test/cluster/sequence-faults.test.ts", suite, [
  lostAnswer,
  conflicts,
  managedFieldsKept,
  pastDeadline,
  replicasUnderFaults(false),
  replicasUnderFaults(true),
  leaseUnderFaults,
  leaseHandover,
  repeatedReview,
]);

after(async () => {
  await proxy?.close();
  await removeAllKubeconfigs();
  if ("cluster" in suite) await suite.cluster.stop();
});
