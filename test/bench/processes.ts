// Child processes for the benchmarks: started with a bounded wait, their output drained into a small tail
// (a full pipe would stall the child), stopped by pid with SIGTERM then SIGKILL, each wait bounded.
// Every child is remembered so that a crashing bench still kills what it started.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { procStatusBytes } from "./proc-status.js";

const TAIL_BYTES = 16 * 1024;
const started = new Set<number>();

process.once("exit", () => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

export interface Child {
  pid: number;
  process: ChildProcess;
  /** The last few KB of stdout and stderr, for error messages. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the child is gone. */
  exited: Promise<number | string | null>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Open an IPC channel (process.send in the child). */
  ipc?: boolean;
  cwd?: string;
}

export function startChild(command: string, args: string[], options: SpawnOptions = {}): Child {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not start ${command} ${args.join(" ")}`);
  const pid = child.pid;
  started.add(pid);
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-TAIL_BYTES);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | string | null>((resolve) => {
    child.once("exit", (code, signal) => {
      started.delete(pid);
      resolve(code ?? signal);
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    pid,
    process: child,
    output: () => tail,
    exited,
    stop() {
      stopping ??= (async () => {
        if (!started.has(pid)) return;
        signal(pid, "SIGTERM");
        if ((await within(exited, 3_000)) === timedOut) {
          signal(pid, "SIGKILL");
          await within(exited, 2_000);
        }
      })();
      return stopping;
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

const timedOut = Symbol("timed out");

/** The promise's value, or `timedOut` after ms. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof timedOut> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function isTimedOut(value: unknown): value is typeof timedOut {
  return value === timedOut;
}

/** Polls check() every intervalMs until it returns true; false once timeoutMs has passed. */
export async function waitUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 5,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return false;
}

/** Resident set size of a process in bytes, from /proc (Linux); undefined elsewhere. */
export function rssOf(pid: number): number | undefined {
  return procStatusBytes(pid, "VmRSS");
}

/** CPU time a process used, in user space (its own code) and in the kernel on its behalf (syscalls). */
export interface CpuTimes {
  user: number;
  system: number;
}

/**
 * Pure: user and system CPU ticks from the text of /proc/<pid>/stat. The command name (field 2) may hold
 * spaces and parentheses, so fields are counted from its closing parenthesis: utime and stime are fields 14
 * and 15.
 */
export function cpuTicksFromStat(stat: string): CpuTimes | undefined {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  return Number.isFinite(user) && Number.isFinite(system) && fields.length > 12
    ? { user, system }
    : undefined;
}

let clockTicks: number | undefined;

/** CPU seconds a live process has used, user and system, from /proc (Linux); undefined elsewhere. */
export function cpuTimesOf(pid: number): CpuTimes | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const ticks = cpuTicksFromStat(stat);
  if (ticks === undefined) return undefined;
  if (clockTicks === undefined) {
    const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
    clockTicks = Number(out.stdout) > 0 ? Number(out.stdout) : 100;
  }
  return { user: ticks.user / clockTicks, system: ticks.system / clockTicks };
}

/**
 * The command prefix that pins a process to one core (`taskset -c <core>`), or nothing where taskset is
 * missing or the core does not exist. Servers go on one core and the load generator on another, so that
 * neither steals the other's CPU.
 */
export function pinTo(core: number): string[] {
  if (os.cpus().length <= core) return [];
  return spawnSync("taskset", ["--version"], { stdio: "ignore" }).error === undefined
    ? ["taskset", "-c", String(core)]
    : [];
}
