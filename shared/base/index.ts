export { withDeadline } from "./deadline.js";
export {
  DNS1123_LABEL_RULE,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
  isLabelKey,
  isLabelValue,
} from "./dns-names.js";
export type { FunctionName } from "./function-names.js";
export { FUNCTION_NAMES, isFunctionName } from "./function-names.js";
export {
  ADMIN_USER,
  CONTROLLER_MANAGER_USER,
  DEFAULT_DRIVER_USERS,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
  SIMKUBE_DRIVER_USER,
  TEARDOWN_CONTROLLER_USERS,
} from "./identities.js";
export type { JsonObject } from "./json.js";
export { errorMessage, isRecord } from "./json.js";
export {
  DEPL_REVISION_LABEL_KEY,
  KWOK_STAGE_COMPLETE_KEY,
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  KWOK_STAGE_CREATE_DELAY_JITTER_KEY,
  KWOK_STAGE_CREATE_DELAY_KEY,
  KWOK_STAGE_READY_DELAY_JITTER_KEY,
  KWOK_STAGE_READY_DELAY_KEY,
  LAST_APPLIED_CONFIG_LABEL_KEY,
  ORIG_NAMESPACE_ANNOTATION_KEY,
  ORIG_OWNER_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMKUBE_API_VERSION,
  SIMKUBE_IO_PREFIX,
  SIMULATION_KIND,
  SIMULATION_LABEL_KEY,
  SIMULATION_ROOT_KIND,
  VIRTUAL_LABEL_KEY,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "./keys.js";
export type { LogFormat, Logger, LogLevel, WorkLogger } from "./log.js";
export {
  createLogger,
  isLogFormat,
  isLogLevel,
  LOG_FORMATS,
  LOG_LEVELS,
  lazyChild,
  withBindings,
} from "./log.js";
export { backoffDelay, withRetry } from "./retry.js";
export { VERSION } from "./version.js";
