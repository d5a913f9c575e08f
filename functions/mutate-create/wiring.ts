// mutate-create's dependencies, built from configuration: the trace (TRACE_PATH, loaded before the server
// listens) or the per-Simulation trace cache, the owner resolver, the Simulation source, the sequence store
// and the counters. The handler (handler.ts) takes them as they are and does no wiring of its own.

import type { Logger } from "../../shared/base/index.js";
import { type FunctionConfig, TRACE_MEMORY_DEFAULTS } from "../../shared/config/index.js";
import { createOwnerResolver, isNotFound, type KubeApi, type KubeObject } from "../../shared/kube/index.js";
import { createClusterSequenceStore, createMemorySequenceStore } from "../../shared/sequence/index.js";
import { createSimulationSource } from "../../shared/simulation/index.js";
import { deploymentTraceCheck, loadTraceForLookups } from "../../shared/trace/index.js";
import type { MutateCreateDeps } from "./handler.js";
import { createRescheduleNotice } from "./reschedule-notice.js";
import { rememberClaims } from "./sequence-claims.js";
import { createMutateStats, type MutateStats } from "./stats.js";
import { createTraceCache } from "./trace-cache.js";

/** What a deployment without SIM_NAME needs in addition: namespace reads and, without TRACE_PATH, traces. */
function multiSimulationDeps(kube: KubeApi, config: FunctionConfig): Partial<MutateCreateDeps> {
  const readNamespace = async (name: string): Promise<KubeObject | undefined> => {
    try {
      // Its labels and owner say which Simulation it belongs to; nothing else is needed.
      return await kube.read({ apiVersion: "v1", kind: "Namespace", name }, { metadataOnly: true });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  if (config.tracePath) return { readNamespace };
  const memory = config.traceMemory ?? TRACE_MEMORY_DEFAULTS;
  const traces = createTraceCache({
    isAllowed: deploymentTraceCheck(config.traceAllowlist),
    maxTraceBytes: memory.maxTraceBytes,
    maxTraces: memory.cacheMaxTraces,
    maxBytes: memory.cacheMaxBytes,
    recheckMs: memory.recheckMs,
    ...config.traceLoads,
  });
  return { readNamespace, traces };
}

/** Builds everything the handler needs from configuration: trace, caches, sequence store. */
export async function buildMutateCreateDeps(
  config: FunctionConfig,
  kube: KubeApi,
  log: Logger,
): Promise<MutateCreateDeps & { stats: MutateStats; traceLoadSeconds?: number }> {
  const started = performance.now();
  // Loaded once, before the server listens, so concurrent first reviews never load it twice.
  // TRACE_PATH is the operator's own; a download's redirects still must stay within the allowed locations.
  const allowRedirect = deploymentTraceCheck(config.traceAllowlist, config.tracePath);
  const maxBytes = (config.traceMemory ?? TRACE_MEMORY_DEFAULTS).maxTraceBytes;
  const trace = config.tracePath
    ? await loadTraceForLookups(config.tracePath, { allowRedirect, maxBytes })
    : undefined;
  const traceLoadSeconds = (performance.now() - started) / 1000;
  if (trace) log.info({ tracePath: config.tracePath, events: trace.eventSummary.count }, "trace loaded");
  else if (config.simName)
    log.warn("no TRACE_PATH: pods are pinned to virtual nodes but get no lifecycle from a trace");
  else log.info("no TRACE_PATH: each Simulation's spec.driver.tracePath is loaded when first needed");
  const deps: MutateCreateDeps & { stats: MutateStats; traceLoadSeconds?: number } = {
    ...(config.simName ? { simName: config.simName } : multiSimulationDeps(kube, config)),
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube, config.simName),
    sequences: rememberClaims(
      config.sequenceStore === "memory"
        ? createMemorySequenceStore()
        : createClusterSequenceStore(kube, { namespace: config.storeNamespace }),
    ),
    stats: createMutateStats(),
  };
  if (config.rescheduleServed === false) deps.rescheduleNotice = createRescheduleNotice(kube, log);
  if (trace) {
    deps.trace = trace;
    deps.traceLoadSeconds = traceLoadSeconds;
  }
  // Every admission needs the served Simulation: start reading it now, so the first review of a cold start
  // finds it read or in flight. A failure is not remembered; that review reads again and reports it.
  if (config.simName) deps.simulation.get().catch(() => undefined);
  return deps;
}
