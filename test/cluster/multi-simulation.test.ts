// One deployment for every Simulation on a real control plane (functions/local-cluster/ with
// everySimulation): its own cluster, since the functions run without SIM_NAME. Skipped with one loud line
// when Go is missing (fails under CI=true).

import { after } from "node:test";
import { multiSimulationCases } from "../support/cluster/multi-simulation-scenarios.js";
import { openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { lazyWorldRef } from "../support/cluster/world.js";

const suite = await openClusterSuite({ everySimulation: true, reschedule: true, recordReviews: true });
const ref = lazyWorldRef(suite);

registerClusterCases("test/cluster/multi-simulation.test.ts", suite, multiSimulationCases(ref));

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});
