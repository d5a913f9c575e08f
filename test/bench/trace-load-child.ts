// One trace load in a fresh process, so that its peak RSS is its own: `node trace-load-child.js MODE FILE`
// prints one JSON line. MODE: lean (loadTraceForLookups, what mutate-create does), full (loadTrace, what
// the replay does), lean-one-read (the file read by one readFileSync, then the lean decode), read (only reading the bytes, as both loads do), msgpackr (the file read and decoded by
// msgpackr, nothing checked: the baseline).

import { readFileSync } from "node:fs";
import { loadTrace, loadTraceForLookups, parseTraceForLookups } from "../../shared/trace/reader.js";
import { DEFAULT_MAX_TRACE_BYTES, readTraceBytes } from "../../shared/trace/source.js";
import { procStatusBytes } from "./proc-status.js";

export interface LoadSample {
  mode: string;
  /** Reading and decoding, wall time. */
  ms: number;
  /** VmRSS before loading (the process with its modules) and VmHWM after (its peak), in bytes. */
  rssBeforeBytes: number;
  peakRssBytes: number;
}

/** A field of /proc/self/status in bytes (Linux), else what Node reports. */
function ownBytes(field: "VmRSS" | "VmHWM"): number {
  const fromProc = procStatusBytes("self", field);
  if (fromProc !== undefined) return fromProc;
  return field === "VmRSS" ? process.memoryUsage().rss : process.resourceUsage().maxRSS * 1024;
}

async function load(mode: string, file: string): Promise<unknown> {
  if (mode === "lean") return loadTraceForLookups(file);
  if (mode === "full") return loadTrace(file);
  // The lean decode of bytes read in one piece: what reading costs on top (see trace-bench.ts).
  if (mode === "lean-one-read") return parseTraceForLookups(readFileSync(file));
  if (mode === "read") return readTraceBytes(file, { timeoutMs: 30_000, maxBytes: DEFAULT_MAX_TRACE_BYTES });
  if (mode === "msgpackr") {
    // Imported here, so the other modes' RSS does not include it. The reference configuration of the
    // strict decoder's tests: Maps (pod_lifecycles has tuple keys), 64-bit integers as bigint.
    const { Unpackr } = await import("msgpackr");
    return new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false }).unpack(
      readFileSync(file),
    );
  }
  throw new Error(`unknown mode ${mode}`);
}

async function main(): Promise<void> {
  const [mode = "", file = ""] = process.argv.slice(2);
  const rssBeforeBytes = ownBytes("VmRSS");
  const started = performance.now();
  const loaded = await load(mode, file);
  const ms = performance.now() - started;
  const sample: LoadSample = { mode, ms, rssBeforeBytes, peakRssBytes: ownBytes("VmHWM") };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
  // Keep what was loaded alive until measured.
  if (loaded === undefined) process.exitCode = 1;
}

if (!process.env.NODE_TEST_CONTEXT) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
