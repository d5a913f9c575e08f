// What readiness checks (readiness.ts decides how often): that the function can read the API as its reviews
// will. Both functions get the Simulation they serve first, so that is the read: the one SIM_NAME names, or,
// serving every Simulation, a name none has. RBAC is decided before the object is looked up, so a 404 proves
// the read is allowed as well as a 200 does; a 404 for the kind itself means SimKube's CRDs are missing.
// The trace, when TRACE_PATH names one, is read before the server listens (a start fails without it).

import { type Logger, SIMKUBE_API_VERSION, SIMULATION_KIND } from "../../shared/base/index.js";
import type { FunctionConfig } from "../../shared/config/index.js";
import { type KubeApi, kubeErrorOf } from "../../shared/kube/index.js";
import { createReadiness, type Readiness, type ReadinessCheck } from "./readiness.js";

/** A Simulation name no Simulation has (a DNS-1123 name with a dot would do; a reserved-looking one reads better). */
export const READINESS_PROBE_NAME = "simkube-fn-readiness-check";

const SIMULATIONS = "get simulations.simkube.io";

/** One line naming what the read's failure says is missing. */
export function describeReadFailure(err: unknown): string {
  const e = kubeErrorOf(err);
  if (e === undefined) return `reading the API failed: ${(err as Error)?.message ?? String(err)}`;
  if (e.status === 0) return `the API server is unreachable: ${e.message}`;
  if (e.status === 401) return `the API server refuses this function's credentials (401): ${e.message}`;
  if (e.status === 403) return `RBAC forbids the read this function needs (${SIMULATIONS}): ${e.message}`;
  if (e.reason === "UnknownKind") {
    return `the API server serves no simkube.io/v1 Simulation: install SimKube's CRDs (${e.message})`;
  }
  return `${SIMULATIONS} failed (${e.status} ${e.reason}): ${e.message}`;
}

export function apiReadinessCheck(kube: KubeApi, simName: string | undefined): ReadinessCheck {
  const ref = {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_KIND,
    name: simName ?? READINESS_PROBE_NAME,
  };
  return async () => {
    try {
      await kube.read(ref, { metadataOnly: true });
      return undefined;
    } catch (err) {
      const e = kubeErrorOf(err);
      if (e?.status === 404 && e.reason !== "UnknownKind") return undefined;
      return describeReadFailure(err);
    }
  };
}

/** A function's readiness from that read; every change is logged with its reason. */
export function createFunctionReadiness(config: FunctionConfig, kube: KubeApi, log: Logger): Readiness {
  return createReadiness(apiReadinessCheck(kube, config.simName), {
    onChange: ({ ready, reason }) => {
      if (ready) log.info("ready");
      else log.warn({ reason }, "not ready");
    },
  });
}
