// One deployment for every Simulation on a real control plane (functions/local-cluster/ with
// everySimulation): its own cluster, since the functions run without SIM_NAME. Skipped with one loud line
// when Go is missing (fails under CI=true).

import { after } from "node:test";
import { multiSimulationCases } from "../support/cluster/multi-simulation-scenarios.js";
import { openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { createWorld, type World, type WorldRef } from "../support/cluster/world.js";

const suite = await openClusterSuite({ everySimulation: true, reschedule: true, recordReviews: true });
let world: World | undefined;
const ref: WorldRef = {
  get() {
    if (!("cluster" in suite)) throw new Error("no cluster");
    world ??= createWorld(suite.cluster);
    return world;
  },
};

registerClusterCases("test/cluster/multi-simulation.test.ts", suite, multiSimulationCases(ref));

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});
