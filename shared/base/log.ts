// The functions' logs: JSON lines that log pipelines read without a parser of their own. By default the level
// is a string ("level":"info") and the time ISO 8601 ("time":"2026-12-05T12:00:00.000Z"), which Loki, Vector,
// Fluent Bit and the Elastic agent take as they are; `gcp` writes Cloud Logging's `severity` and `message`;
// `pino` keeps pino's own numbers (level 30, epoch milliseconds) for pino's tooling. LOG_FORMAT chooses.

import { type DestinationStream, type Logger, type LoggerOptions, pino, stdTimeFunctions } from "pino";

export type { Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export const LOG_FORMATS = ["json", "gcp", "pino"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

/** Cloud Logging's LogSeverity names for pino's levels. */
const GCP_SEVERITY: Record<string, string> = {
  trace: "DEBUG",
  debug: "DEBUG",
  info: "INFO",
  warn: "WARNING",
  error: "ERROR",
  fatal: "CRITICAL",
};

function formatOptions(format: LogFormat): LoggerOptions {
  switch (format) {
    case "json":
      return { formatters: { level: (label) => ({ level: label }) }, timestamp: stdTimeFunctions.isoTime };
    case "gcp":
      return {
        messageKey: "message",
        formatters: { level: (label) => ({ severity: GCP_SEVERITY[label] ?? "DEFAULT" }) },
        timestamp: stdTimeFunctions.isoTime,
      };
    case "pino":
      return {};
  }
}

/** JSON lines on stdout (pino's synchronous default) unless a destination is given (tests read it back). */
export function createLogger(
  level: LogLevel = "info",
  destination?: DestinationStream,
  format: LogFormat = "json",
): Logger {
  const options = { level, base: { app: "simkube-fn" }, ...formatOptions(format) };
  return destination ? pino(options, destination) : pino(options);
}

/** The logging a unit of work does: pino's methods, with the unit's bindings on every line. */
export type WorkLogger = Pick<Logger, "debug" | "info" | "warn" | "error">;

/**
 * `log.child(bindings())`, made only when a line is written at an enabled level. pino's child() serialises its
 * bindings when called, which cost every review at LOG_LEVEL=warn although nothing was written.
 */
export function lazyChild(log: Logger, bindings: () => Record<string, unknown>): WorkLogger {
  let child: Logger | undefined;
  const forward =
    (level: keyof WorkLogger) =>
    (...args: unknown[]): void => {
      if (!log.isLevelEnabled(level)) return;
      child ??= log.child(bindings());
      (child[level] as (...a: unknown[]) => void)(...args);
    };
  return {
    debug: forward("debug") as Logger["debug"],
    info: forward("info") as Logger["info"],
    warn: forward("warn") as Logger["warn"],
    error: forward("error") as Logger["error"],
  };
}

/** A WorkLogger whose lines also carry `extra` (pino's merge object), without making a child logger. */
export function withBindings(log: WorkLogger, extra: Record<string, unknown>): WorkLogger {
  const forward =
    (level: keyof WorkLogger) =>
    (first: unknown, ...rest: unknown[]): void => {
      const write = log[level] as (...a: unknown[]) => void;
      const isMergeObject = typeof first === "object" && first !== null && !(first instanceof Error);
      if (isMergeObject) write.call(log, { ...extra, ...(first as Record<string, unknown>) }, ...rest);
      else
        write.call(
          log,
          first instanceof Error ? { ...extra, err: first } : extra,
          ...(first instanceof Error ? rest : [first, ...rest]),
        );
    };
  return {
    debug: forward("debug") as Logger["debug"],
    info: forward("info") as Logger["info"],
    warn: forward("warn") as Logger["warn"],
    error: forward("error") as Logger["error"],
  };
}
