// `simkube-fn replay`: argument handling for the local replay.

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
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

export async function runReplayCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { trace: { type: "string" }, "sim-name": { type: "string" }, speed: { type: "string" } },
  });
  const speed = Number(values.speed ?? "1");
  if (!Number.isFinite(speed) || speed <= 0)
    throw new Error(`--speed must be a positive number, got ${values.speed}`);
  const tracePath = resolveTrace(values.trace, process.env.TRACE_PATH);
  const traceBytes = await readFile(tracePath);
  const result = await replayLocally({
    simName: values["sim-name"] ?? "local-sim",
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
