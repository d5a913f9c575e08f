// The control plane's processes: each started with its output in a log file, watched for an early exit (so a
// crash fails the start at once, with the log's tail, instead of a readiness timeout), and stopped with
// SIGTERM, then SIGKILL if it lingers.

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Set once the process has exited: "code N" or "signal S". */
  exitedWith(): string | undefined;
  /** The last lines of its log (for error messages). */
  logTail(lines?: number): string;
  stop(graceMs?: number): Promise<void>;
}

export function tailOf(file: string, lines = 25): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** Children still running when this process exits any other way than stop() (an uncaught error, exit()). */
const orphans = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of orphans) child.kill("SIGKILL");
});

export function startProcess(name: string, bin: string, args: string[], logFile: string): ManagedProcess {
  const fd = openSync(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  orphans.add(child);
  child.once("exit", () => orphans.delete(child));
  let exit: string | undefined;
  let spawnError: string | undefined;
  child.once("error", (err) => {
    spawnError = `could not start ${bin}: ${err.message}`;
  });
  child.once("exit", (code, signal) => {
    exit = signal ? `signal ${signal}` : `code ${code}`;
  });
  return {
    name,
    pid: child.pid ?? -1,
    logFile,
    exitedWith: () => spawnError ?? exit,
    logTail: (lines) => tailOf(logFile, lines),
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await waitExit(child);
      clearTimeout(killer);
    },
  };
}
