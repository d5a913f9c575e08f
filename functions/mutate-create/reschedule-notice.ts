// A Simulation asks for rescheduling (spec.rescheduleInterruptedBarePods) and this deployment has no DELETE
// webhook (RESCHEDULE_SERVED=false): say so where the user looks, a warning in the log and a Warning Event on
// the Simulation, once per Simulation (name and uid) per process. Never awaited by the review and never
// failing it: an Event that cannot be written is logged and the pod is admitted as usual.

import { errorMessage, type Logger } from "../../shared/base/index.js";
import type { KubeApi } from "../../shared/kube/index.js";
import {
  buildReschedulingNotServedEvent,
  RESCHEDULING_NOT_SERVED_MESSAGE,
  type Simulation,
  wantsBarePodRescheduling,
} from "../../shared/simulation/index.js";

/** Called with each Simulation a review is admitted for; resolves when the notice (if any) is done. */
export type RescheduleNotice = (sim: Simulation) => Promise<void>;

/** Simulations remembered at most; past it the memory starts over (a second notice, never unbounded memory). */
const REMEMBERED = 1024;
const DONE = Promise.resolve();

export function createRescheduleNotice(
  kube: KubeApi,
  log: Logger,
  now: () => Date = () => new Date(),
): RescheduleNotice {
  const noticed = new Set<string>();
  return (sim) => {
    if (!wantsBarePodRescheduling(sim)) return DONE;
    const name = sim.metadata?.name ?? "";
    const key = `${name}/${sim.metadata?.uid ?? ""}`;
    if (noticed.has(key)) return DONE;
    if (noticed.size >= REMEMBERED) noticed.clear();
    noticed.add(key);
    log.warn({ sim: name }, RESCHEDULING_NOT_SERVED_MESSAGE);
    return kube.create(buildReschedulingNotServedEvent(sim, now())).then(
      () => undefined,
      (err: unknown) => {
        log.warn({ sim: name, err: errorMessage(err) }, "could not record the Event on the Simulation");
      },
    );
  };
}
