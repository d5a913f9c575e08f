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
export {
  buildReschedulingNotServedEvent,
  MUTATE_CREATE_COMPONENT,
  RESCHEDULING_NOT_SERVED_MESSAGE,
  RESCHEDULING_NOT_SERVED_REASON,
  SIMULATION_EVENTS_NAMESPACE,
} from "./simulation-events.js";
export type { TolerationRule } from "./virtual-nodes.js";
export {
  pinToVirtualNodes,
  toleratesVirtualNodes,
  VIRTUAL_NODE_SELECTOR,
  virtualNodeToleration,
  withVirtualNodeToleration,
} from "./virtual-nodes.js";
