// Memory figures of a process from /proc (Linux). A module of its own, importing only node:fs, so that the
// trace-load child can use it without loading what the rest of the bench needs (its RSS is what it measures).

import { readFileSync } from "node:fs";

/**
 * A memory field of /proc/<pid>/status in bytes (Linux): VmRSS now, VmHWM the peak, and the two parts of
 * VmRSS that matter here: RssAnon (the process's own memory) and RssFile (pages of mapped files, the node
 * binary above all: shared, clean, dropped by the kernel under pressure). Undefined elsewhere.
 */
export function procStatusBytes(
  pid: number | "self",
  field: "VmRSS" | "VmHWM" | "RssAnon" | "RssFile",
): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
