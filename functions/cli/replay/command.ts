// `simkube-fn replay`: runs the local replay with the parsed flags (functions/cli/args.ts).

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createLogger } from "../../../shared/base/index.js";
import { exampleTrace } from "../trace/example.js";
import { type ControlPlaneSearch, runClusterReplayCommand } from "./cluster-command.js";
import { type ReplayResult, replayLocally } from "./replay.js";

/** The trace named by --trace or TRACE_PATH, else the project's example scenario built in memory. */
async function chooseTrace(
  flag: string | undefined,
  env: string | undefined,
): Promise<{ bytes: Uint8Array; label: string }> {
  const chosen = flag ?? env;
  if (!chosen) return exampleTrace();
  const file = chosen.startsWith("file://") ? fileURLToPath(chosen) : chosen;
  try {
    return { bytes: await readFile(file), label: file };
  } catch (err) {
    throw new Error(`could not read trace ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/** The counts `--json` prints, named as the real-cluster replay names them. */
export function replayCounts(result: ReplayResult) {
  return {
    podsCreated: result.pods,
    podsMutated: result.mutated,
    podsCompleted: result.completed,
    interruptions: result.interruptions,
    clones: result.clonesOnInterruption,
    teardownReviews: result.teardownReviews,
    teardownClones: result.clonesOnTeardown,
    errors: result.errors,
  };
}

export function replayOk(result: ReplayResult): boolean {
  return result.mutated === result.pods && result.clonesOnTeardown === 0 && result.errors === 0;
}

export interface ReplayArgs {
  trace?: string;
  simName: string;
  speed: number;
  json: boolean;
  /** The real replay on a local control plane (cluster-runner.ts) instead of the API double. */
  cluster?: "local";
  kubeconfig?: string;
  interruptions?: boolean;
}

/** traceEnv: TRACE_PATH, used when --trace is not given; where: how --cluster local finds controlplane/. */
export async function runReplayCommand(
  args: ReplayArgs,
  traceEnv: string | undefined,
  where: ControlPlaneSearch = { searchFrom: [] },
): Promise<number> {
  if (args.cluster === "local") return runClusterReplayCommand(args, traceEnv, where);
  const { simName, speed } = args;
  const trace = await chooseTrace(args.trace, traceEnv);
  const result = await replayLocally({
    simName,
    traceBytes: trace.bytes,
    traceLabel: trace.label,
    speed,
    log: createLogger("warn"),
    out: (line) => process.stdout.write(`${line}\n`),
  });
  const ok = replayOk(result);
  process.stdout.write(
    `\n${result.pods} pod(s) replayed, ${result.mutated} pinned to virtual nodes, ${result.completed} with a completion time, ` +
      `${result.clonesOnInterruption} clone(s) after the interruption, ${result.clonesOnTeardown} during teardown: ${ok ? "OK" : "UNEXPECTED"}\n`,
  );
  if (args.json) process.stdout.write(`${JSON.stringify({ ...replayCounts(result), ok })}\n`);
  return ok ? 0 : 1;
}
