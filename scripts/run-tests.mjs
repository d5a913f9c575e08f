// Runs `node --test` on every dist/test/<suite>/**/*.test.js file of the suites named, with any --flags given
// before them passed on. Why not `node --test dist/test/unit/`: Node 20 takes folders there and Node 22+
// takes only files and globs, and a file list works on both, so the test command stays the same whichever
// Node runs it.
//
//   node scripts/run-tests.mjs [--test-reporter=spec ...] unit http e2e cluster

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith("--"));
const suites = args.filter((a) => !a.startsWith("--"));
if (suites.length === 0) {
  process.stderr.write("run-tests: name at least one suite (unit, http, e2e, cluster)\n");
  process.exit(2);
}

const files = [];
for (const suite of suites) {
  const dir = path.join(root, "dist", "test", suite);
  if (!existsSync(dir)) {
    process.stderr.write(`run-tests: ${path.relative(root, dir)} does not exist (run npm run build first)\n`);
    process.exit(2);
  }
  const found = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".test.js"))
    .sort()
    .map((f) => path.join(dir, f));
  files.push(...found);
}

const run = spawnSync(process.execPath, ["--test", ...flags, ...files], { stdio: "inherit" });
process.exit(run.status ?? 1);
