// `npm run gen:chart`: writes charts/simkube-fn/templates/<file> for each generated template; with --check,
// writes nothing and exits 1 naming each file that differs from what the builders give (the drift test).

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkFile, emitFile, mergeFile } from "./generate.js";
import { TEMPLATE_FILES } from "./template-files.js";

const TEMPLATES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../../../charts/simkube-fn/templates",
);

/** Every generated template's text, by file name. */
export function generateTemplates(checkTries = 300): Map<string, string> {
  const out = new Map<string, string>();
  for (const t of TEMPLATE_FILES) {
    const entries = mergeFile(t);
    checkFile(t, entries, checkTries);
    out.set(t.file, emitFile(t, entries));
  }
  return out;
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const check = process.argv.includes("--check");
  const stale: string[] = [];
  for (const [file, text] of generateTemplates()) {
    const target = path.join(TEMPLATES, file);
    if (readOrEmpty(target) === text) continue;
    if (check) stale.push(file);
    else writeFileSync(target, text);
  }
  if (stale.length > 0) {
    process.stderr.write(
      `charts/simkube-fn/templates differ from the builders (${stale.join(", ")}): run npm run gen:chart\n`,
    );
    process.exit(1);
  }
}
