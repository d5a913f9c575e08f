export type { AllowedLocation } from "./allowlist.js";
export { deploymentTraceCheck, parseAllowedLocation } from "./allowlist.js";
export { TraceError } from "./error.js";
export { gvkOfOwner, normalizeGvk, parseGvk } from "./gvk.js";
export type { Instant } from "./lifecycle.js";
export {
  chooseLifecycleList,
  completionTime,
  lookupPodLifecycle,
  simulatedDurationSeconds,
  usesStableHash,
} from "./lifecycle.js";
export { describeLocation } from "./location-text.js";
export type { PodLifecycle, Trace, TraceEvent, TraceForLookups, TracerConfig, TraceTables } from "./model.js";
export { CURRENT_TRACE_FORMAT_VERSION } from "./model.js";
export type { LoadedTrace } from "./reader.js";
export { loadTrace, loadTraceForLookups, loadTraceForLookupsIfChanged, parseTrace } from "./reader.js";
export type { LoadTraceOptions } from "./source.js";
export { DEFAULT_MAX_TRACE_BYTES } from "./source.js";
export { getPodLifecycles, hasObject, lifecycleKey, lifecycleOwners, summarizeEvents } from "./tables.js";
