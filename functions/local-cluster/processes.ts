// The control plane's processes: each started with its output in a log file, watched for an early exit (so a
// crash fails the start at once, with the log's tail, instead of a readiness timeout), and stopped with
// SIGTERM, then SIGKILL if it lingers. Each is started through util-linux's `setpriv --pdeathsig KILL`, so the
// kernel kills it when this process dies, even by SIGKILL, when no exit handler runs.

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";

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

const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((file) => existsSync(file));

/** bin and args, behind setpriv when the machine has it (setpriv execs bin: same pid, no extra process). */
export function withParentDeathSignal(bin: string, args: readonly string[]): [string, string[]] {
  return SETPRIV ? [SETPRIV, ["--pdeathsig", "KILL", "--", bin, ...args]] : [bin, [...args]];
}

export interface StartProcessOptions {
  /**
   * The pid that stop() signals when it is not the spawned one (nsenter --pid forks: the program runs as its
   * child, and nsenter does not pass signals on).
   */
  stopTarget?: () => number | undefined;
}

function signalTarget(
  child: ChildProcess,
  target: (() => number | undefined) | undefined,
  sig: NodeJS.Signals,
) {
  const pid = target?.();
  if (pid === undefined) {
    child.kill(sig);
    return;
  }
  try {
    process.kill(pid, sig);
  } catch {
    child.kill(sig); // already gone: the wrapper ends with it
  }
}

export function startProcess(
  name: string,
  bin: string,
  args: string[],
  logFile: string,
  options: StartProcessOptions = {},
): ManagedProcess {
  const fd = openSync(logFile, "a");
  const [command, commandArgs] = withParentDeathSignal(bin, args);
  const child = spawn(command, commandArgs, { stdio: ["ignore", fd, fd] });
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
      const signal = (sig: NodeJS.Signals) => signalTarget(child, options.stopTarget, sig);
      signal("SIGTERM");
      const killer = setTimeout(() => signal("SIGKILL"), graceMs);
      await waitExit(child);
      clearTimeout(killer);
    },
  };
}
