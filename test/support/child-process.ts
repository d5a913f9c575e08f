// Stopping a child process a test started: SIGTERM, then SIGKILL if it has not exited within a bound, so a
// child that ignores SIGTERM cannot hang the suite.

import type { ChildProcess } from "node:child_process";

export async function stopChild(child: ChildProcess, killAfterMs = 5_000): Promise<void> {
  // Already gone (exited, or ended by a signal): its "exit" event has fired and would never fire again.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  await exited;
  clearTimeout(timer);
}
