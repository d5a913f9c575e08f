// `npm run bench:instructions`: instructions per review, counted by valgrind, for each function and its
// references, in process (instruction-loop.ts: JSON.parse, answer, answer text; no HTTP). Also a part of
// `npm run bench` (BENCH_PARTS=instructions).
//
// Why: on a shared VM the CPU time of one review moves by 10-40% between runs of the same build (issue 11's
// bench runs saw the bare server at 36-107 µs per review), so a change of a few percent cannot be resolved by
// timing it. The number of instructions retired is not disturbed by other tenants. Two runs of one build
// under `--single-threaded` (V8's compilers and collector on the main thread, so no background thread does a
// varying share of the work) agreed to 0.04% here. What it does not see: cache misses, branch mispredictions
// and everything between requests (node:http, the kernel), where a served review spends most of its time.
// So it says how much work our code does per review, and the timed bench says what that costs when served.
//
// Per review, the marginal count: a run of 1 pass over the 5,000 reviews and a run of 4 passes start the
// same way (Node, the modules, the first pass's compilation), so their difference over 15,000 reviews is the
// steady-state work of one review.

import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_REVIEW_COUNT } from "./bench-reviews.js";
import { CONTENDERS, type Contender } from "./instruction-loop.js";
import { SERVER_NODE } from "./node-children.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const LOOP = join(HERE, "instruction-loop.js");
const SHORT_PASSES = 1;
const LONG_PASSES = 4;
/** Two cores here: one valgrind each. */
const PARALLEL = 2;

export interface InstructionCounts {
  node: string;
  /** Marginal instructions per review, by contender. */
  perReview: Record<Contender, number>;
  ratios: {
    createBareOverFunction: number;
    createFloorOverFunction: number;
    createBareOverFloor: number;
    teardownBareOverFunction: number;
  };
}

interface Run {
  instructions: number;
  answers: number;
}

/** "==123== I   refs:      5,261,587,027" (or "I refs:") from cachegrind's summary on stderr. */
export function parseInstructionRefs(stderr: string): number | undefined {
  const match = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  return match ? Number((match[1] as string).replaceAll(",", "")) : undefined;
}

function valgrindInstalled(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn("valgrind", ["--version"], { stdio: "ignore" });
    child.on("error", () => resolve(false));
    child.on("exit", (code) => resolve(code === 0));
  });
}

function countRun(node: string, contender: Contender, passes: number): Promise<Run> {
  const args = [
    "--tool=cachegrind",
    "--cache-sim=no",
    // V8 writes and rewrites its code at run time: valgrind must look for changed code on the heap and stack.
    "--smc-check=all-non-file",
    "--cachegrind-out-file=/dev/null",
    node,
    "--single-threaded",
    LOOP,
    contender,
    String(passes),
  ];
  return new Promise((resolve, reject) => {
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawn("valgrind", args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const instructions = parseInstructionRefs(stderr);
      let answers = Number.NaN;
      try {
        answers = (JSON.parse(stdout.trim()) as { answers: number }).answers;
      } catch {
        // reported below
      }
      if (code !== 0 || instructions === undefined || answers !== passes * BENCH_REVIEW_COUNT) {
        reject(
          new Error(`${contender} x${passes} under valgrind failed (exit ${code}):\n${stdout}\n${stderr}`),
        );
        return;
      }
      resolve({ instructions, answers });
    });
  });
}

/** Runs `jobs` at most `limit` at a time, results in order. */
async function inParallel<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await (jobs[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

export async function benchInstructions(
  log: (line: string) => void = () => {},
): Promise<InstructionCounts | { skipped: string }> {
  if (!(await valgrindInstalled())) {
    return { skipped: "valgrind is not installed (apt-get install -y valgrind)" };
  }
  const node = SERVER_NODE;
  const jobs = CONTENDERS.flatMap((contender) =>
    [SHORT_PASSES, LONG_PASSES].map((passes) => () => countRun(node, contender, passes)),
  );
  const runs = await inParallel(jobs, PARALLEL);
  const perReview = {} as Record<Contender, number>;
  CONTENDERS.forEach((contender, i) => {
    const short = runs[2 * i] as Run;
    const long = runs[2 * i + 1] as Run;
    perReview[contender] = (long.instructions - short.instructions) / (long.answers - short.answers);
    log(
      `  ${contender.padEnd(20)} ${Math.round(perReview[contender]).toLocaleString("en-US")} instructions per review`,
    );
  });
  return {
    node,
    perReview,
    ratios: {
      createBareOverFunction: perReview["create-bare"] / perReview["mutate-create"],
      createFloorOverFunction: perReview["create-floor"] / perReview["mutate-create"],
      createBareOverFloor: perReview["create-bare"] / perReview["create-floor"],
      teardownBareOverFunction: perReview["teardown-bare"] / perReview["reschedule-delete"],
    },
  };
}

async function main(): Promise<number> {
  process.stdout.write(`instructions per review (valgrind, in process, ${SERVER_NODE} --single-threaded)\n`);
  const result = await benchInstructions((line) => process.stdout.write(`${line}\n`));
  if ("skipped" in result) {
    process.stdout.write(`skipped: ${result.skipped}\n`);
    return 0;
  }
  const r = result.ratios;
  process.stdout.write(
    `  CREATE bare/mutate-create ${r.createBareOverFunction.toFixed(3)}, floor/mutate-create ${r.createFloorOverFunction.toFixed(3)}, bare/floor ${r.createBareOverFloor.toFixed(3)}; teardown bare/reschedule-delete ${r.teardownBareOverFunction.toFixed(3)}\n`,
  );
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
