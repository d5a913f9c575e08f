// The simulation the benchmarks pretend to run: one Simulation, its SimulationRoot, the virtual namespaces.
// Shared by the API double (which stores them) and the load generator (whose reviews point at them).

import { buildSimulation, buildSimulationRoot } from "../support/builders.js";

export const BENCH_SIM_NAME = "bench-sim";
export const BENCH_SIM_UID = "bench-sim-uid-0001";
export const BENCH_ROOT_NAME = "sk-bench-sim-driver-7x2kq-root";
export const BENCH_ROOT_UID = "bench-root-uid-0001";
/** Where the cluster sequence store keeps its ConfigMap. */
export const BENCH_STORE_NAMESPACE = "simkube";
export const BENCH_TRACED_NAMESPACES = ["default", "shop", "batch", "monitoring"];
export const BENCH_VIRTUAL_NAMESPACES = BENCH_TRACED_NAMESPACES.map((ns) => `virtual-${ns}`);

/** tracePath: the Simulation's spec.driver.tracePath (the memory bench's trace; otherwise a file never read). */
export function benchSimulation(tracePath = "file:///bench/none.sktrace") {
  return buildSimulation({
    name: BENCH_SIM_NAME,
    uid: BENCH_SIM_UID,
    rescheduleInterruptedBarePods: true,
    spec: {
      driver: { namespace: "simkube", tracePath, virtualNsPrefix: "virtual" },
    },
  });
}

export function benchSimulationRoot() {
  return buildSimulationRoot({
    name: BENCH_ROOT_NAME,
    uid: BENCH_ROOT_UID,
    simName: BENCH_SIM_NAME,
    simUid: BENCH_SIM_UID,
  });
}
