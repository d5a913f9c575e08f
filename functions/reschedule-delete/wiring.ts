// reschedule-delete's dependencies, built from configuration: the API client as given, the Simulation source,
// the pod-read grants setting, the counters and the registry of clones waiting for their deletion. The handler
// (handler.ts) takes them as they are and does no wiring of its own.

import type { Logger } from "../../shared/base/index.js";
import type { FunctionConfig } from "../../shared/config/index.js";
import type { KubeApi } from "../../shared/kube/index.js";
import { createSimulationSource } from "../../shared/simulation/index.js";
import type { RescheduleDeleteDeps } from "./handler.js";
import { createPendingClones, type PendingClones } from "./pending-clones.js";
import { createRescheduleStats, type RescheduleStats } from "./stats.js";

/** Everything the handler needs, from configuration; the CLI does `createRescheduleDeleteHandler(await ...)`. */
export async function buildRescheduleDeleteDeps(
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
): Promise<RescheduleDeleteDeps & { stats: RescheduleStats; pending: PendingClones }> {
  const podReads = config.podReads?.role;
  log.info(
    { simName: config.simName, driverUsers: config.driverUsers, podReads: podReads ?? "cluster" },
    "reschedule-delete configured",
  );
  return {
    kube,
    ...(config.podReads ? { podReads: config.podReads } : {}),
    ...(config.simName ? { simName: config.simName } : {}),
    driverUsers: config.driverUsers,
    log,
    simulation: createSimulationSource(kube, config.simName),
    stats: createRescheduleStats(),
    pending: createPendingClones(),
  };
}
