// The functions as webhooks of a real Kubernetes control plane (functions/local-cluster/): one cluster for
// this file, driven with @kubernetes/client-node. Mutation of every kind of simulation pod, KWOK's
// completion, every deletion path with the DELETE reviews reschedule-delete received, and the clones that
// exist afterwards. Skipped with one loud line when Go is missing (fails under CI=true).

import { after } from "node:test";
import { deletionCases } from "../support/cluster/deletion-scenarios.js";
import { describeRow } from "../support/cluster/reviews.js";
import { openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { createWorld, type World } from "../support/cluster/world.js";

const suite = await openClusterSuite({ reschedule: true, recordReviews: true });
let world: World | undefined;
const ref = {
  get(): World {
    if (!("cluster" in suite)) throw new Error("no cluster");
    world ??= createWorld(suite.cluster);
    return world;
  },
};

registerClusterCases("test/cluster/real-cluster.test.ts", suite, [...deletionCases(ref)]);

after(async () => {
  if (world) {
    for (const m of world.measured) {
      process.stdout.write(
        `# ${m.path}: ${m.clones} clone(s), ${m.ms} ms; status updates: ${m.statusUpdates.join(", ") || "none"}\n`,
      );
      for (const row of m.rows) process.stdout.write(`#     ${describeRow(row)}\n`);
    }
  }
  if ("cluster" in suite) await suite.cluster.stop();
});
