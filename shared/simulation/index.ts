export type { LifecycleParams, Simulation, SimulationSource } from "./simulation.js";
export {
  createSimulationSource,
  DEFAULT_VIRTUAL_NS_PREFIX,
  delayAnnotationValue,
  driverRootName,
  isSimulationOver,
  simulationSpeed,
  simulationTracePath,
  virtualNsPrefix,
  wantsBarePodRescheduling,
} from "./simulation.js";
