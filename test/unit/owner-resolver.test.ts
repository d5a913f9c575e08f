// The owner resolver's lookups and caching: owners that exist are cached and shared; a "not found" is
// marked in the chain and never remembered past the admission that saw it (issue 13).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type KubeApi,
  KubeError,
  type KubeObject,
  type ObjectRef,
  type OwnerReference,
} from "../../shared/kube/api.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import {
  buildPod,
  buildReplicaSet,
  buildSimulation,
  buildSimulationRoot,
  deploymentOwnerRef,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_DEPLOYMENT,
  TEST_NAMESPACE,
} from "../support/builders.js";
import { capturingLog, silentLog } from "../support/logs.js";

const quiet = silentLog();

/** Objects by kind and name; every read logged; `hold` keeps reads pending until `release`. */
function fakeKube(objects: KubeObject[]) {
  const byKey = new Map(objects.map((o) => [`${o.kind}/${o.metadata?.name}`, o]));
  const reads: string[] = [];
  const failures = new Map<string, KubeError>();
  let held: Array<() => void> | undefined;
  const kube: KubeApi = {
    async read<T extends KubeObject>(ref: ObjectRef): Promise<T> {
      const key = `${ref.kind}/${ref.name}`;
      reads.push(key);
      if (held) await new Promise<void>((resolve) => held?.push(resolve));
      const failure = failures.get(key);
      if (failure) throw failure;
      const found = byKey.get(key);
      if (!found) throw new KubeError(404, "NotFound", `${ref.kind} "${ref.name}" not found`);
      return structuredClone(found) as T;
    },
    create: async (o) => o,
    replace: async (o) => o,
  };
  return {
    kube,
    reads,
    failures,
    put: (o: KubeObject) => byKey.set(`${o.kind}/${o.metadata?.name}`, o),
    hold: () => {
      held = [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const resolve of waiting) resolve();
    },
  };
}

function deployment(ownerReferences: OwnerReference[] = [rootOwnerRef()]): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: TEST_DEPLOYMENT, namespace: TEST_NAMESPACE, ownerReferences },
  };
}

const rsPod = () => buildPod({ ownerReferences: [replicaSetOwnerRef()] });
const count = (reads: string[], key: string) => reads.filter((r) => r === key).length;

describe("owner resolver", () => {
  it("marks an owner that is not found as gone, and the chain stops there", async () => {
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [deploymentOwnerRef()] })]);
    const chain = await createOwnerResolver(fake.kube, quiet).ownerChain(rsPod());
    assert.deepEqual(chain, [
      { ref: replicaSetOwnerRef(), ownedBy: [deploymentOwnerRef()] },
      { ref: deploymentOwnerRef(), ownedBy: [], gone: true },
    ]);
  });

  it("never remembers a not-found: the next admission reads again and finds the owner back", async () => {
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [deploymentOwnerRef()] })]);
    const owners = createOwnerResolver(fake.kube, quiet);
    const first = await owners.ownerChain(rsPod());
    assert.deepEqual(
      first.map((link) => link.ref.kind),
      ["ReplicaSet", "Deployment"],
    );
    fake.put(deployment());
    const second = await owners.ownerChain(rsPod());
    // Through the Deployment, now found, to its SimulationRoot (which this fake does not hold).
    assert.deepEqual(
      second.map((link) => link.ref.kind),
      ["ReplicaSet", "Deployment", "SimulationRoot"],
    );
    assert.equal(count(fake.reads, `Deployment/${TEST_DEPLOYMENT}`), 2);
    // The ReplicaSet exists: it was read once and cached.
    assert.equal(count(fake.reads, "ReplicaSet/the-replicaset"), 1);
  });

  it("caches owners that exist until the TTL passes", async () => {
    let now = 10_000;
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [] })]);
    const owners = createOwnerResolver(fake.kube, quiet, { ttlMs: 1_000, now: () => now });
    await owners.ownerChain(rsPod());
    now = 10_999;
    await owners.ownerChain(rsPod());
    assert.equal(fake.reads.length, 1);
    now = 11_001;
    // lru-cache reuses one clock reading for 1 ms of real time (its ttlResolution): let that pass.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await owners.ownerChain(rsPod());
    assert.equal(fake.reads.length, 2);
  });

  it("keeps an owner it saw earlier in the run once it is deleted, as SimKube keeps chains (issue 36)", async () => {
    let now = 10_000;
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [deploymentOwnerRef()] }), deployment()]);
    const owners = createOwnerResolver(fake.kube, quiet, { ttlMs: 1_000, now: () => now });
    const before = await owners.ownerChain(rsPod());
    // The Deployment is deleted mid-run, and its cache entry has expired.
    fake.failures.set(
      `Deployment/${TEST_DEPLOYMENT}`,
      new KubeError(404, "NotFound", "deployment not found"),
    );
    now = 20_000;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const after = await owners.ownerChain(rsPod());
    assert.equal(count(fake.reads, `Deployment/${TEST_DEPLOYMENT}`), 2, "read again after the TTL");
    const link = after.find((l) => l.ref.kind === "Deployment");
    assert.ok(link && !link.gone, "not marked gone: this run saw it");
    assert.deepEqual(link.ownedBy, [rootOwnerRef()]);
    assert.deepEqual(
      after.map((l) => l.ref.kind),
      before.map((l) => l.ref.kind),
    );
    // An owner this process never saw is still not found, and that is not remembered.
    const other = createOwnerResolver(fake.kube, quiet, { ttlMs: 1_000, now: () => now });
    const fresh = await other.ownerChain(rsPod());
    assert.ok(fresh.find((l) => l.ref.kind === "Deployment")?.gone);
  });

  it("reads a missing owner once per admission, however many times the chain reaches it", async () => {
    const a = buildReplicaSet({ name: "rs-a", ownerReferences: [deploymentOwnerRef()] });
    const b = buildReplicaSet({ name: "rs-b", ownerReferences: [deploymentOwnerRef()] });
    const fake = fakeKube([a, b]);
    const pod = buildPod({ ownerReferences: [replicaSetOwnerRef("rs-a"), replicaSetOwnerRef("rs-b")] });
    const chain = await createOwnerResolver(fake.kube, quiet).ownerChain(pod);
    // Each owner is visited once per admission (issue 35): the Deployment both reach is one link.
    assert.equal(chain.filter((link) => link.gone).length, 1);
    assert.equal(count(fake.reads, `Deployment/${TEST_DEPLOYMENT}`), 1);
  });

  it("shares one read among lookups of the same owner that overlap", async () => {
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [] })]);
    const owners = createOwnerResolver(fake.kube, quiet);
    fake.hold();
    const chains = Promise.all(Array.from({ length: 10 }, () => owners.ownerChain(rsPod())));
    await new Promise((resolve) => setImmediate(resolve));
    fake.release();
    for (const chain of await chains) assert.deepEqual(chain, [{ ref: replicaSetOwnerRef(), ownedBy: [] }]);
    assert.equal(fake.reads.length, 1);
  });

  it("rejects on any other API failure, and does not remember it either", async () => {
    const fake = fakeKube([buildReplicaSet({ ownerReferences: [] })]);
    fake.failures.set("ReplicaSet/the-replicaset", new KubeError(503, "ServiceUnavailable", "etcd down"));
    const owners = createOwnerResolver(fake.kube, quiet);
    await assert.rejects(owners.ownerChain(rsPod()), /etcd down/);
    fake.failures.clear();
    assert.deepEqual(await owners.ownerChain(rsPod()), [{ ref: replicaSetOwnerRef(), ownedBy: [] }]);
  });

  it("walks a warm chain from the cache alone, to the same chain", async () => {
    const fake = fakeKube([
      buildReplicaSet({ ownerReferences: [deploymentOwnerRef()] }),
      deployment(),
      buildSimulationRoot(),
      buildSimulation(),
    ]);
    const owners = createOwnerResolver(fake.kube, quiet);
    assert.equal(owners.cachedOwnerChain(rsPod()), undefined, "nothing is cached before the first walk");
    const cold = await owners.ownerChain(rsPod());
    assert.deepEqual(
      cold.map((link) => link.ref.kind),
      ["ReplicaSet", "Deployment", "SimulationRoot", "Simulation"],
    );
    const readsCold = fake.reads.length;
    assert.deepEqual(await owners.ownerChain(rsPod()), cold);
    assert.deepEqual(owners.cachedOwnerChain(rsPod()), cold);
    assert.equal(fake.reads.length, readsCold, "a warm chain needs no read");
  });

  it("stops at an ownership cycle with a warning, cold or warm", async () => {
    const fake = fakeKube([
      buildReplicaSet({ ownerReferences: [deploymentOwnerRef()] }),
      deployment([replicaSetOwnerRef()]),
    ]);
    const { log, lines } = capturingLog("warn");
    const owners = createOwnerResolver(fake.kube, log);
    const expected = [
      { ref: replicaSetOwnerRef(), ownedBy: [deploymentOwnerRef()] },
      { ref: deploymentOwnerRef(), ownedBy: [replicaSetOwnerRef()] },
    ];
    for (const pass of ["cold", "warm"]) {
      lines.length = 0;
      assert.deepEqual(await owners.ownerChain(rsPod()), expected, pass);
      assert.deepEqual(
        lines.map((line) => line.msg),
        ["owner reference cycle or chain too deep; stopping"],
        pass,
      );
    }
    assert.equal(fake.reads.length, 2, "both owners read once, then cached");
    assert.equal(owners.cachedOwnerChain(rsPod()), undefined, "a cycle is left to the walk that warns");
  });

  it("stops a chain at 16 owners with a warning, cold or warm", async () => {
    // owner-0 is owned by owner-1, and so on up to owner-19: longer than any controller hierarchy.
    const ref = (i: number): OwnerReference => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: `owner-${i}`,
      uid: `u${i}`,
    });
    const objects = Array.from({ length: 20 }, (_, i) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: `owner-${i}`,
        namespace: TEST_NAMESPACE,
        ownerReferences: i < 19 ? [ref(i + 1)] : [],
      },
    }));
    const fake = fakeKube(objects);
    const { log, lines } = capturingLog("warn");
    const owners = createOwnerResolver(fake.kube, log);
    // A pod owned by owner-4 has a chain of exactly 16 and caches owners 4 to 19, beyond the limit below.
    const within = await owners.ownerChain(buildPod({ ownerReferences: [ref(4)] }));
    assert.equal(within.length, 16);
    assert.equal(lines.length, 0);
    const pod = buildPod({ ownerReferences: [ref(0)] });
    for (const pass of ["cold", "warm"]) {
      lines.length = 0;
      const chain = await owners.ownerChain(pod);
      assert.deepEqual(
        chain.map((link) => link.ref.name),
        Array.from({ length: 16 }, (_, i) => `owner-${i}`),
        pass,
      );
      assert.equal(lines.length, 1, pass);
    }
  });

  describe("a tenant's layered owner graph (issue 35)", () => {
    const layerRef = (layer: number, i: number): OwnerReference => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: `d-${layer}-${i}`,
      uid: `u-${layer}-${i}`,
    });
    /** `layers` layers of `width` Deployments, each owned by every Deployment of the layer above. */
    function layered(layers: number, width: number) {
      const objects: KubeObject[] = [];
      for (let layer = 0; layer < layers; layer++) {
        for (let i = 0; i < width; i++) {
          const above =
            layer + 1 < layers ? Array.from({ length: width }, (_, j) => layerRef(layer + 1, j)) : [];
          objects.push({
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: `d-${layer}-${i}`, namespace: TEST_NAMESPACE, ownerReferences: above },
          });
        }
      }
      const pod = buildPod({ ownerReferences: Array.from({ length: width }, (_, j) => layerRef(0, j)) });
      return { objects, pod };
    }

    it("visits each owner once, cold and warm, however many paths lead to it", async () => {
      // 3^10 paths through 30 Deployments: walked once per path, the chain had tens of thousands of links.
      const { objects, pod } = layered(10, 3);
      const fake = fakeKube(objects);
      const owners = createOwnerResolver(fake.kube, quiet);
      const cold = await owners.ownerChain(pod);
      assert.equal(cold.length, 30);
      assert.equal(new Set(cold.map((link) => link.ref.name)).size, 30);
      assert.equal(fake.reads.length, 30, "each owner read once");
      const warm = owners.cachedOwnerChain(pod);
      assert.deepEqual(warm, cold);
      assert.deepEqual(await owners.ownerChain(pod), cold);
    });

    it("refuses a graph over the object budget with a clear reason, having read no more than the budget", async () => {
      // 13 layers of 3, the shape that blocked the event loop for 5.2 s per pod: 39 owners, over a budget of 32.
      const { objects, pod } = layered(13, 3);
      const fake = fakeKube(objects);
      const owners = createOwnerResolver(fake.kube, quiet, { maxObjects: 32 });
      for (const pass of ["cold", "warm"]) {
        await assert.rejects(owners.ownerChain(pod), /owner graph has more than 32 owners/, pass);
        assert.ok(fake.reads.length <= 32, `${pass}: ${fake.reads.length} reads`);
      }
      assert.equal(owners.cachedOwnerChain(pod), undefined);
    });

    it("refuses an owner with more references than the budget, and keeps no more of them", async () => {
      const many = Array.from({ length: 5_000 }, (_, i) => layerRef(1, i));
      const fake = fakeKube([
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "d-0-0", namespace: TEST_NAMESPACE, ownerReferences: many },
        },
      ]);
      const owners = createOwnerResolver(fake.kube, quiet, { maxReferences: 100 });
      await assert.rejects(
        owners.ownerChain(buildPod({ ownerReferences: [layerRef(0, 0)] })),
        /more than 100 owner references/,
      );
      assert.ok(fake.reads.length <= 100, `${fake.reads.length} reads`);
    });

    it("gives up when the walk's time budget runs out, saying so", async () => {
      let now = 0;
      const { objects, pod } = layered(8, 2);
      const fake = fakeKube(objects);
      const slow: KubeApi = {
        ...fake.kube,
        read: async (ref, options) => {
          now += 1_000;
          return fake.kube.read(ref, options);
        },
      };
      const owners = createOwnerResolver(slow, quiet, { walkMs: 5_000, now: () => now });
      await assert.rejects(owners.ownerChain(pod), /owner graph took longer than 5000 ms/);
      assert.ok(fake.reads.length <= 6, `${fake.reads.length} reads`);
    });
  });
});
