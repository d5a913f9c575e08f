// next() throughput and latency: the in-process store against the cluster store, with the cluster store
// talking real HTTP to the fake API server. Without added latency this measures our own and the client's
// overhead per call; the "+5ms API" variants add a real API server's order of write latency. All variants
// run in the same process (client and server share the CPU), one after the other, a fixed number of calls each.
// The "distinct hashes" rows give every call a new spec hash, the case where the stored counters grow: they
// report throughput and the largest shard (ConfigMap) at 1,000, 10,000 and 100,000 hashes (measureGrowth).

import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { sequenceConfigMapName } from "../../shared/sequence/cluster-naming.js";
import { createClusterSequenceStore } from "../../shared/sequence/cluster-store.js";
import { configMapDataSize } from "../../shared/sequence/shard-configmap.js";
import {
  createMemorySequenceStore,
  type SequenceScope,
  type SequenceStore,
} from "../../shared/sequence/store.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { percentile } from "./sequence-replica.js";

const NAMESPACE = "simkube-fn";
const HASHES = ["1234567890123456789", "42", "18446744073709551615", "7"];
const DISTINCT_HASH_COUNTS = [1_000, 10_000, 100_000];

const cycleHashes = (i: number) => HASHES[i % HASHES.length] as string;
/** The i-th of many distinct u64 decimal strings, spread like stable spec hashes. */
export const distinctHash = (i: number) => ((BigInt(i + 1) * 0x9e3779b97f4a7c15n) % 2n ** 64n).toString();

interface Run {
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** ConfigMap requests the API server saw per next() call; 0 for the memory store. */
  requestsPerCall: number;
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** `total` calls over `stores`, `concurrency` in flight; each simulated review is its own sim run. */
async function measure(
  stores: SequenceStore[],
  total: number,
  concurrency: number,
  scope: SequenceScope,
  server?: FakeApiServer,
  hashOf: (i: number) => string = cycleHashes,
): Promise<Run> {
  server?.resetLog();
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        await (stores[i % stores.length] as SequenceStore).next(hashOf(i), scope);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const requests = server ? server.count("*", /\/configmaps/) : 0;
  return {
    callsPerSec: round((total / elapsed) * 1000, 0),
    p50Ms: round(percentile(latencies, 0.5), 3),
    p99Ms: round(percentile(latencies, 0.99), 3),
    requestsPerCall: round(requests / total, 3),
  };
}

interface Shards {
  objects: number;
  largestDataBytes: number;
  /** The whole object as JSON: what one PUT of the largest shard sends. */
  largestObjectBytes: number;
}

/** The ConfigMaps of one simulation run on the server, and the largest of them. */
function shardsOf(server: FakeApiServer, scope: SequenceScope): Shards {
  const prefix = sequenceConfigMapName(scope, 0).slice(0, -2);
  const shards = server.store
    .list<{ metadata?: { name?: string }; data?: Record<string, string> }>("ConfigMap", NAMESPACE)
    .filter((cm) => cm.metadata?.name?.startsWith(prefix));
  return {
    objects: shards.length,
    largestDataBytes: Math.max(...shards.map((cm) => configMapDataSize(cm.data ?? {}))),
    largestObjectBytes: Math.max(...shards.map((cm) => Buffer.byteLength(JSON.stringify(cm)))),
  };
}

const MEASURED_NEW_HASHES = 1_000;

/**
 * One simulation run growing to 1,000, 10,000 and 100,000 distinct hashes. At each size: the throughput of
 * the last MEASURED_NEW_HASHES calls (every one a new hash, so every write grows a shard), and the shards
 * then. Most hashes are loaded with 512 calls in flight (batched writes) to keep the run short; one store
 * instance throughout, with a long deadline so that a busy machine slows the figures instead of failing them.
 */
async function measureGrowth(
  server: FakeApiServer,
  kube: ReturnType<typeof createKubeApi>,
  scope: SequenceScope,
): Promise<Array<[number, Run, Shards]>> {
  const store = createClusterSequenceStore(kube, { namespace: NAMESPACE, deadlineMs: 60_000 });
  const rows: Array<[number, Run, Shards]> = [];
  let loaded = 0;
  for (const count of DISTINCT_HASH_COUNTS) {
    const fill = count - MEASURED_NEW_HASHES - loaded;
    const from = loaded;
    await measure([store], fill, 512, scope, undefined, (i) => distinctHash(from + i));
    const base = count - MEASURED_NEW_HASHES;
    const run = await measure([store], MEASURED_NEW_HASHES, 32, scope, server, (i) => distinctHash(base + i));
    loaded = count;
    rows.push([count, run, shardsOf(server, scope)]);
  }
  return rows;
}

export async function benchSequence(): Promise<{ name: string; details: Record<string, number | string> }> {
  const server = await startFakeApiServer({ namespaces: ["default", NAMESPACE] });
  const kubeconfig = await writeKubeconfig(server.url);
  try {
    let runId = 0;
    // A fresh simulation run per variant, so each starts from an empty ConfigMap that does not exist yet.
    const scope = (): SequenceScope => ({
      simName: "bench-sim",
      owner: {
        apiVersion: "simkube.io/v1",
        kind: "SimulationRoot",
        name: "sk-bench-sim-root",
        uid: `run-${++runId}`,
      },
    });
    const cluster = (n: number) =>
      Array.from({ length: n }, () =>
        createClusterSequenceStore(createKubeApi({ kubeconfigPath: kubeconfig }), { namespace: NAMESPACE }),
      );

    // Warm up both paths (JIT, discovery, keep-alive connections) outside the measurements.
    await measure([createMemorySequenceStore()], 2_000, 8, scope());
    await measure(cluster(1), 200, 8, scope(), server);

    const memory = await measure([createMemorySequenceStore()], 50_000, 32, scope());
    const sequential = await measure(cluster(1), 300, 1, scope(), server);
    const oneInstance = await measure(cluster(1), 2_000, 32, scope(), server);
    const fourInstances = await measure(cluster(4), 2_000, 32, scope(), server);
    // A real API server answers a ConfigMap PUT in a few ms (etcd write); 5 ms per request shows the shape.
    server.setLatency(5);
    const oneSlow = await measure(cluster(1), 1_000, 32, scope(), server);
    const fourSlow = await measure(cluster(4), 1_000, 32, scope(), server);
    server.setLatency(0);

    const distinct = await measureGrowth(server, createKubeApi({ kubeconfigPath: kubeconfig }), scope());

    const details: Record<string, number | string> = {};
    const put = (prefix: string, run: Run) => {
      details[`${prefix} calls/s`] = run.callsPerSec;
      details[`${prefix} p50 ms`] = run.p50Ms;
      details[`${prefix} p99 ms`] = run.p99Ms;
      if (prefix !== "memory") details[`${prefix} API requests/call`] = run.requestsPerCall;
    };
    put("memory", memory);
    put("cluster sequential", sequential);
    put("cluster 1 instance c32", oneInstance);
    put("cluster 4 instances c32", fourInstances);
    put("cluster 1 instance c32 +5ms API", oneSlow);
    put("cluster 4 instances c32 +5ms API", fourSlow);
    for (const [count, run, shards] of distinct) {
      const prefix = `cluster 1 instance c32, new hashes at ${count} distinct hashes`;
      put(prefix, run);
      details[`${prefix}: ConfigMaps`] = shards.objects;
      details[`${prefix}: largest shard data bytes`] = shards.largestDataBytes;
      details[`${prefix}: largest shard object bytes`] = shards.largestObjectBytes;
    }
    details["memory/cluster throughput (1 instance c32)"] = round(
      memory.callsPerSec / oneInstance.callsPerSec,
      1,
    );
    details["memory/cluster throughput (4 instances c32)"] = round(
      memory.callsPerSec / fourInstances.callsPerSec,
      1,
    );
    details.note =
      "fake API server on 127.0.0.1 in the same process (client and server share the CPU); +5ms API adds 5 ms to every request, the order of a real API server write";
    return { name: "sequence store next()", details };
  } finally {
    await server.close();
    await removeKubeconfig(kubeconfig);
  }
}

// Run directly: node dist/test/bench/sequence-bench.js
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchSequence();
  console.log(result.name);
  for (const [key, value] of Object.entries(result.details)) console.log(`  ${key}: ${value}`);
}
