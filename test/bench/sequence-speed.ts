// `npm run bench:sequence-speed`: the cluster sequence store against the real API server (the local control
// plane, functions/local-cluster), issue 25's speed goals. Never part of `npm test`. Three parts, one run:
//
// 1. CREATE: `serve mutate-create` with SEQUENCE_STORE=memory and with SEQUENCE_STORE=cluster (its own
//    service account, the real API server), alternating round by round under wrk. Every request carries a
//    new request uid (wrk.ts, freshUidScript): with uids cycled, mutate-create would answer repeats from what
//    it remembers (sequence-claims.ts) and the store would hardly be asked. Server on core 1, wrk on core 0;
//    the control plane runs where the kernel puts it (the machine has 2 cores).
// 2. Replicas: 1, 2 and 4 processes (sequence-replica.ts), each 32 next() calls in flight over 4 spec hashes
//    of one simulation run, for the same seconds: aggregate next()/s, before and after.
// 3. Distinct hashes: one store growing one simulation run to 1,000, 10,000 and 100,000 distinct hashes; the
//    last 1,000 calls at each size (all new hashes, 32 in flight) are timed, before and after.
//
// "Before" is the merge-base of HEAD and main (BENCH_SEQUENCE_BASE=<commit> for another), built in a
// temporary copy (base-build.ts); BENCH_SEQUENCE_BASE=none leaves it out. Ratios are printed beside the
// figures; every figure comes from this run.
// Knobs: BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_CONNECTIONS (64, the CREATE part), BENCH_SEQUENCE_PARTS=create,replicas,hashes (any subset).
// Needs wrk and the control-plane binaries (Go to build them); results also in dist/sequence-speed.json.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveControlPlane } from "../../functions/local-cluster/binaries.js";
import { startLocalCluster } from "../../functions/local-cluster/cluster.js";
import { FUNCTIONS_NAMESPACE, type LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { type BaseBuild, buildBase } from "./base-build.js";
import { REPO } from "./node-children.js";
import { benchCreate, type CreateComparison } from "./sequence-speed-create.js";
import { benchHashes, benchReplicas, type HashRow, type ReplicaRow } from "./sequence-speed-store.js";
import { wrkInstalled } from "./wrk.js";

const PARTS = new Set(
  (process.env.BENCH_SEQUENCE_PARTS ?? "create,replicas,hashes").split(",").map((p) => p.trim()),
);

interface Results {
  create?: CreateComparison;
  replicas?: ReplicaRow[];
  hashes?: HashRow[];
  base?: string;
}

async function measure(cluster: LocalCluster, base: BaseBuild | undefined): Promise<Results> {
  const results: Results = {};
  if (PARTS.has("create")) results.create = await benchCreate(cluster);
  const builds = [
    ...(base ? [{ label: "before", distRoot: base.distRoot }] : []),
    { label: "after", distRoot: join(REPO, "dist") },
  ];
  const world = {
    kubeconfig: cluster.functionKubeconfigs["mutate-create"],
    namespace: FUNCTIONS_NAMESPACE,
    root: cluster.root,
  };
  if (PARTS.has("replicas")) results.replicas = await benchReplicas(world, builds);
  if (PARTS.has("hashes")) results.hashes = await benchHashes(world, builds);
  if (base) results.base = base.commit;
  return results;
}

async function main(): Promise<number> {
  if (PARTS.has("create") && !wrkInstalled()) {
    process.stderr.write("bench:sequence-speed needs wrk: apt-get install -y wrk\n");
    return 1;
  }
  const binaries = await resolveControlPlane({ searchFrom: [process.cwd()], buildOutput: "inherit" });
  // BENCH_SEQUENCE_BASE=none: this build alone (no "before" rows).
  const needsBase =
    (PARTS.has("replicas") || PARTS.has("hashes")) && process.env.BENCH_SEQUENCE_BASE !== "none";
  const base = needsBase ? buildBase(process.env.BENCH_SEQUENCE_BASE) : undefined;
  process.stdout.write(base ? `before: ${base.commit} (built in ${base.distRoot})\n` : "");
  try {
    // Production security (path secret, client certificate, pod-create policy) guards the functions' own
    // endpoints and pod creation, not the store's ConfigMap calls; without it the cluster starts faster.
    const cluster = await startLocalCluster({ binaries, logLevel: "warn", insecureDev: true });
    try {
      const results = await measure(cluster, base);
      writeFileSync(join(REPO, "dist/sequence-speed.json"), `${JSON.stringify(results, null, 2)}\n`);
      return 0;
    } finally {
      await cluster.stop();
    }
  } finally {
    base?.remove();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
