export type {
  ClientCertSubject,
  ConfigFlags,
  Env,
  FunctionConfig,
  TlsFiles,
  TraceLoadConfig,
} from "./config.js";
export { ConfigError, checkPathSecret, guardSetting, loadConfig, TRACE_MEMORY_DEFAULTS } from "./config.js";
