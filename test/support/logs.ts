// Loggers for tests: one that writes nowhere, and one that keeps every JSON line it is given.

import { Writable } from "node:stream";
import { createLogger, type LogLevel } from "../../shared/base/log.js";

/** A logger that writes nothing (level silent, and a sink that drops whatever reaches it). */
export function silentLog() {
  return createLogger(
    "silent",
    new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    }),
  );
}

/** A logger at `level` whose lines are parsed and kept in `lines`, in order. */
export function capturingLog(level: LogLevel = "info") {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger(
    level,
    new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  return { log, lines };
}
