// The project's own example: examples/scenario.yaml, built into a trace in memory. `simkube-fn replay` replays
// it when no trace is given, so the main job runs on any clone (and from the bundle folder, which carries a
// copy: scripts/bundle.mjs).

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { scenarioToTrace } from "./scenario.js";
import { encodeTrace } from "./trace-writer.js";

export const EXAMPLE_SCENARIO = path.join("examples", "scenario.yaml");

// The CLI runs as the CommonJS bundle, where __dirname is the bundle folder; the compiled ES modules the tests
// load have no __dirname, and look from the working directory (the checkout, under npm test).
function startDir(): string {
  return typeof __dirname === "string" ? __dirname : process.cwd();
}

// dist/bundle/ holds a copy; a checkout's examples/ is two levels above it.
const MAX_LEVELS_UP = 2;

/** examples/scenario.yaml in this module's folder or a few above it (the checkout), if there. */
export function findExampleScenario(from = startDir()): string | undefined {
  let dir = from;
  for (let level = 0; level <= MAX_LEVELS_UP; level++) {
    const candidate = path.join(dir, EXAMPLE_SCENARIO);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

/** The example scenario as .sktrace bytes, and a label naming where it came from. */
export async function exampleTrace(): Promise<{ bytes: Uint8Array; label: string }> {
  const file = findExampleScenario();
  if (!file) throw new Error(`the example scenario ${EXAMPLE_SCENARIO} is missing: pass --trace FILE`);
  const bytes = encodeTrace(scenarioToTrace(await readFile(file, "utf8"), file));
  return { bytes, label: `the example scenario ${EXAMPLE_SCENARIO} (built in memory)` };
}
