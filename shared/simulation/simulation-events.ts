// The Event mutate-create records on a Simulation that asks for rescheduling (spec.rescheduleInterruptedBarePods)
// when its deployment has no DELETE webhook to serve it: where `kubectl describe simulation` shows it. Pure.

import { SIMKUBE_API_VERSION, SIMULATION_KIND } from "../base/index.js";
import type { KubeObject } from "../kube/index.js";
import type { Simulation } from "./simulation.js";

/**
 * Simulations are cluster-scoped; the API server takes a core/v1 Event about a cluster-scoped object (one
 * without eventTime) only in "default" or without a namespace (kubernetes pkg/apis/core/validation/events.go).
 */
export const SIMULATION_EVENTS_NAMESPACE = "default";
export const RESCHEDULING_NOT_SERVED_REASON = "ReschedulingNotServed";
/** source.component of the Event. */
export const MUTATE_CREATE_COMPONENT = "simkube-fn-mutate-create";

export const RESCHEDULING_NOT_SERVED_MESSAGE =
  "spec.rescheduleInterruptedBarePods is true, but this simkube-fn deployment has no DELETE webhook " +
  "(rendered with --no-reschedule, or Helm value reschedule=false): interrupted bare pods are not rescheduled. " +
  "Render it without --no-reschedule to serve it.";

/** A core/v1 Event about `sim` (its name and uid), timestamped `at`, named by the API server (generateName). */
export function buildReschedulingNotServedEvent(sim: Simulation, at: Date): KubeObject {
  const name = sim.metadata?.name ?? "";
  // metav1.Time has whole seconds on the wire.
  const time = `${at.toISOString().slice(0, 19)}Z`;
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { generateName: `${name}.`, namespace: SIMULATION_EVENTS_NAMESPACE },
    involvedObject: {
      apiVersion: SIMKUBE_API_VERSION,
      kind: SIMULATION_KIND,
      name,
      ...(sim.metadata?.uid ? { uid: sim.metadata.uid } : {}),
    },
    reason: RESCHEDULING_NOT_SERVED_REASON,
    message: RESCHEDULING_NOT_SERVED_MESSAGE,
    type: "Warning",
    source: { component: MUTATE_CREATE_COMPONENT },
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}
