// Four function instances, each with its own client and connections, counting against ONE API server over
// real HTTP: every spec hash must get exactly 0..n-1, also across a restart of every instance.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { sequenceConfigMapName, sequenceShardOf } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import type { SequenceScope, SequenceStore } from "../../shared/sequence/store.js";
import { assertExactRange } from "../support/assertions.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";

const NAMESPACE = "simkube-fn";
const SCOPE: SequenceScope = {
  simName: "test-sim",
  owner: {
    apiVersion: "simkube.io/v1",
    kind: "SimulationRoot",
    name: "sk-test-sim-root",
    uid: "0b7c2a64-4f0e-4a8b-9d61-5e3c1f2a7b90",
  },
};
const HASHES = ["1234567890123456789", "42", "18446744073709551615"];
const INSTANCES = 4;

/** `total` next() calls over `stores`, `workers` of them in flight at any time, hashes picked at random. */
async function drive(stores: SequenceStore[], total: number, workers: number, seed: number) {
  const pick = seededRandom(seed);
  const plan = Array.from({ length: total }, (_, i) => ({
    store: stores[i % stores.length] as SequenceStore,
    hash: HASHES[Math.floor(pick() * HASHES.length)] as string,
  }));
  const got = new Map<string, number[]>();
  let nextIndex = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (nextIndex < plan.length) {
        const call = plan[nextIndex++];
        if (!call) break;
        const seq = await call.store.next(call.hash, SCOPE);
        got.set(call.hash, [...(got.get(call.hash) ?? []), seq]);
      }
    }),
  );
  return got;
}

describe("cluster sequence store over HTTP", () => {
  let server: FakeApiServer;
  let kubeconfig: string;

  before(async () => {
    server = await startFakeApiServer({ namespaces: ["default", NAMESPACE] });
    kubeconfig = await writeKubeconfig(server.url);
  });

  after(async () => {
    await server?.close();
    if (kubeconfig) await removeKubeconfig(kubeconfig);
  });

  const instances = (seed: number) =>
    Array.from({ length: INSTANCES }, (_, i) =>
      createClusterSequenceStore(createKubeApi({ kubeconfigPath: kubeconfig }), {
        namespace: NAMESPACE,
        random: seededRandom(seed + i),
      }),
    );

  test("four instances, 1,000 interleaved concurrent calls, then a restart of every instance", async (t) => {
    // A few transport failures on the way: they are retried, and cost neither a duplicate nor a failure.
    server.failNext({ method: "PUT", path: /\/configmaps\//, action: "reset", times: 2 });
    server.failNext({ method: "PUT", path: /\/configmaps\//, status: 503, times: 2 });

    const firstInstances = instances(1);
    const first = await drive(firstInstances, 1000, 32, 7);
    // Stopped as a rollout stops them (SIGTERM): what a lease reserved ahead is given back.
    await Promise.all(firstInstances.map((s) => s.close?.()));
    let total = 0;
    for (const [hash, numbers] of first) {
      assertExactRange(numbers, `hash ${hash}`);
      total += numbers.length;
    }
    assert.equal(total, 1000);

    const configMaps = /\/api\/v1\/namespaces\/simkube-fn\/configmaps/;
    const puts = server.requests.filter((r) => r.method === "PUT" && configMaps.test(r.path));
    const conflicts = puts.filter((r) => r.status === 409).length;
    const gets = server.requests.filter((r) => r.method === "GET" && configMaps.test(r.path)).length;
    const written = puts.filter((r) => r.status === 200).length;
    t.diagnostic(
      `1,000 calls: ${puts.length} PUT (${written} ok, ${conflicts} conflicts), ${gets} GET, ` +
        `${server.count("POST", configMaps)} POST; ${(puts.length + gets) / 1000} ConfigMap requests per call`,
    );
    assert.ok(conflicts > 0, "the instances really contended");
    assert.ok(written < 1000, "batching: fewer successful writes than numbers");

    for (const [hash, numbers] of first) {
      const name = sequenceConfigMapName(SCOPE, sequenceShardOf(hash));
      const stored = server.store.get<KubeObject & { data?: Record<string, string> }>({
        kind: "ConfigMap",
        namespace: NAMESPACE,
        name,
      });
      assert.ok(stored, `ConfigMap ${name} exists`);
      assert.deepEqual(stored.metadata?.ownerReferences, [SCOPE.owner]);
      assert.equal(stored.metadata?.labels?.["simkube.io/simulation"], "test-sim");
      assert.equal(stored.data?.[hash], String(numbers.length));
    }

    // Restart: new processes, new clients, nothing cached. Counting continues where it stopped.
    const secondInstances = instances(100);
    const second = await drive(secondInstances, 200, 16, 8);
    await Promise.all(secondInstances.map((s) => s.close?.()));
    for (const [hash, numbers] of second) {
      const before = first.get(hash)?.length ?? 0;
      assertExactRange(
        [...Array.from({ length: before }, (_, i) => i), ...numbers],
        `hash ${hash} after restart`,
      );
    }
  });
});
