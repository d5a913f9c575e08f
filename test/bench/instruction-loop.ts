// The in-process loop instructions.ts counts under valgrind: one contender answers the bench's reviews
// `passes` times over, from the text as it arrives (JSON.parse) to the answer's text, with nothing else: no
// HTTP, no API server (a stub that holds the bench's Simulation and SimulationRoot), no logs. Usage:
//   node instruction-loop.js <contender> <passes>
// Prints the number of answers and the total length of their text (so no work can be skipped as unused).

import { fileURLToPath } from "node:url";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import { createMutateStats } from "../../functions/mutate-create/stats.js";
import { createRescheduleDeleteHandler } from "../../functions/reschedule-delete/handler.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import { type ReviewHandler, reviewJson } from "../../shared/admission/review.js";
import { SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import { silentLog } from "../support/logs.js";
import { objectsKube } from "../support/objects-kube.js";
import { bareAnswer, createFloorAnswer } from "./answers.js";
import { benchReviews } from "./bench-reviews.js";
import { BENCH_SIM_NAME, benchSimulation, benchSimulationRoot } from "./bench-world.js";

export const CONTENDERS = [
  "create-bare",
  "create-floor",
  "mutate-create",
  "teardown-bare",
  "reschedule-delete",
] as const;
export type Contender = (typeof CONTENDERS)[number];

export function isContender(value: string): value is Contender {
  return (CONTENDERS as readonly string[]).includes(value);
}

/** A contender's answer to one review's text. Handlers are awaited, as the HTTP adapter does. */
type Answer = (text: string) => string | Promise<string>;

function handlerAnswer(handle: ReviewHandler): Answer {
  return async (text) => reviewJson(await handle(JSON.parse(text)));
}

function answerOf(contender: Contender): Answer {
  const kube = objectsKube([benchSimulation(), benchSimulationRoot()]);
  const log = silentLog();
  // Far longer than a run, so every contender reads the Simulation once, as in a burst.
  const simulation = createSimulationSource(kube, BENCH_SIM_NAME, { ttlMs: 24 * 3600_000 });
  switch (contender) {
    case "create-bare":
    case "teardown-bare":
      return (text) => bareAnswer(JSON.parse(text));
    case "create-floor": {
      const floor = createFloorAnswer();
      return (text) => floor(JSON.parse(text));
    }
    case "mutate-create":
      return handlerAnswer(
        createMutateCreateHandler({
          simName: BENCH_SIM_NAME,
          log,
          owners: createOwnerResolver(kube, log),
          simulation,
          sequences: createMemorySequenceStore(),
          stats: createMutateStats(),
        }),
      );
    case "reschedule-delete":
      return handlerAnswer(
        createRescheduleDeleteHandler({
          kube,
          simName: BENCH_SIM_NAME,
          driverUsers: [SIMKUBE_DRIVER_USER],
          log,
          simulation,
          stats: createRescheduleStats(),
        }),
      );
  }
}

// A fixed clock for the teardown's deletion times, so that every run answers the very same texts.
const TEARDOWN_AT = new Date("2026-12-01T00:00:00.000Z");

function reviewTexts(contender: Contender): string[] {
  const path = contender.startsWith("create") || contender === "mutate-create" ? "create" : "teardown";
  return benchReviews(path, { now: TEARDOWN_AT }).map((request) => request.body.toString("utf8"));
}

async function main(args: string[]): Promise<number> {
  const [contender = "", passesText = ""] = args;
  const passes = Number(passesText);
  if (!isContender(contender) || !Number.isInteger(passes) || passes < 1) {
    process.stderr.write(`usage: instruction-loop.js <${CONTENDERS.join("|")}> <passes>\n`);
    return 2;
  }
  const answer = answerOf(contender);
  const texts = reviewTexts(contender);
  let answers = 0;
  let length = 0;
  for (let pass = 0; pass < passes; pass++) {
    for (const text of texts) {
      length += (await answer(text)).length;
      answers++;
    }
  }
  process.stdout.write(`${JSON.stringify({ contender, answers, length })}\n`);
  return 0;
}

// Only as a program: instructions.ts imports it for the contenders' names.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
