// `simkube-fn replay`: runs the local replay with the parsed flags (functions/cli/args.ts).

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "../../../shared/log.js";
import { replayLocally } from "./replay.js";

const DEFAULT_TRACE = "../shared/data/simkube-traces/bare-pods.sktrace";

function resolveTrace(flag: string | undefined, env: string | undefined): string {
  const chosen = flag ?? env;
  if (chosen) return chosen.startsWith("file://") ? fileURLToPath(chosen) : chosen;
  const fallback = path.resolve(process.cwd(), DEFAULT_TRACE);
  if (existsSync(fallback)) return fallback;
  throw new Error(`no trace to replay: pass --trace FILE (SimKube's examples live in ${DEFAULT_TRACE})`);
}

export interface ReplayArgs {
  trace?: string;
  simName: string;
  speed: number;
}

/** traceEnv: TRACE_PATH, used when --trace is not given. */
export async function runReplayCommand(args: ReplayArgs, traceEnv: string | undefined): Promise<number> {
  const { simName, speed } = args;
  const tracePath = resolveTrace(args.trace, traceEnv);
  const traceBytes = await readFile(tracePath);
  const result = await replayLocally({
    simName,
    traceBytes,
    traceLabel: tracePath,
    speed,
    log: createLogger("warn"),
    out: (line) => process.stdout.write(`${line}\n`),
  });
  const ok = result.mutated === result.pods && result.clonesOnTeardown === 0;
  process.stdout.write(
    `\n${result.pods} pod(s) replayed, ${result.mutated} pinned to virtual nodes, ${result.completed} with a completion time, ` +
      `${result.clonesOnInterruption} clone(s) after the interruption, ${result.clonesOnTeardown} during teardown: ${ok ? "OK" : "UNEXPECTED"}\n`,
  );
  return ok ? 0 : 1;
}
