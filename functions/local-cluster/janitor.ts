// What is left when the launcher dies without running its stop() (SIGKILL, OOM kill): its children die with it
// (setpriv --pdeathsig; the real node's PID namespace), but files and the real node's cgroup directories stay.
// The janitor is a small detached shell whose stdin is a pipe from the launcher: the launcher's death closes
// the pipe, and the janitor then removes the run directory and the cgroup trees (deepest first, retrying while
// the killed processes leave them) and exits. After a normal stop it finds nothing left to remove.

import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";

const SCRIPT = `cat >/dev/null
dir="$1"; shift
for i in $(seq 100); do
  left=0
  for name in "$@"; do
    for root in /sys/fs/cgroup/*/"$name"; do
      [ -d "$root" ] || continue
      find "$root" -depth -type d -exec rmdir {} + 2>/dev/null || left=1
    done
  done
  [ "$left" = 0 ] && break
  sleep 0.2
done
rm -rf -- "$dir"
`;

export interface Janitor {
  /** Ends the janitor (after the launcher has cleaned up itself). */
  close(): Promise<void>;
}

/** dir: the run directory; cgroupNames: directories to remove under every cgroup hierarchy. */
export function startJanitor(dir: string, cgroupNames: readonly string[] = []): Janitor {
  const child: ChildProcess = spawn("bash", ["-c", SCRIPT, "janitor", dir, ...cgroupNames], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.unref();
  (child.stdin as Socket | null)?.unref();
  return {
    close() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.ref(); // unref'd so as not to hold the launcher open; now its exit is awaited
        child.once("exit", () => resolve());
        child.stdin?.end();
      });
    },
  };
}
