import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** JSON lines on stdout (pino's synchronous default) unless a destination is given (tests read it back). */
export function createLogger(level: LogLevel = "info", destination?: DestinationStream): Logger {
  const options = { level, base: { app: "simkube-fn" } };
  return destination ? pino(options, destination) : pino(options);
}
