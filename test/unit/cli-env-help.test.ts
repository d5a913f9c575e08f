// Every environment variable the code reads is named in the help of each command that reads it. The sources
// (functions/, shared/, knative/) are searched for reads (`env.NAME`, `env["NAME"]`, `(env, "NAME")`, not
// assignments); each folder says which commands run its code. A new variable read anywhere fails here until
// the right help names it, and a read in a folder this file does not know fails until it is placed.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type CommandName, usage } from "../../functions/cli/args.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Which commands run the code under each folder (the longest matching prefix wins). */
const COMMANDS_OF: readonly [string, readonly CommandName[]][] = [
  ["shared/config/", ["serve"]],
  ["functions/runtime/", ["serve"]],
  // The object-store readers: every command that reads a trace location.
  ["shared/trace/sources/", ["serve", "trace", "manifests"]],
];

/** Reads in main.ts, each for the commands it serves. */
const MAIN_READS: Readonly<Record<string, readonly CommandName[]>> = {
  TRACE_PATH: ["replay"],
  SIMKUBE_FN_CONTROLPLANE_BIN: ["replay", "cluster"],
};

/** Read by the build, not by anyone running a command: scripts/bundle.mjs sets it to write the code cache. */
const BUILD_ONLY = new Set(["SIMKUBE_FN_WRITE_CODE_CACHE"]);

const READS = [
  /\benv\.([A-Z][A-Z0-9_]*)\b(?!\s*=[^=])/g,
  /\benv\[\s*"([A-Z][A-Z0-9_]*)"\s*\](?!\s*=[^=])/g,
  /\(\s*env\s*,\s*"([A-Z][A-Z0-9_]*)"/g,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** file -> the variables it reads. */
function envReads(): Map<string, Set<string>> {
  const reads = new Map<string, Set<string>>();
  for (const file of ["functions", "shared", "knative"].flatMap(sourceFiles)) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const names = new Set(READS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1] as string)));
    if (names.size > 0) reads.set(file, names);
  }
  return reads;
}

function commandsReading(file: string, name: string): readonly CommandName[] | undefined {
  if (file === "functions/cli/main.ts") return MAIN_READS[name];
  const prefix = COMMANDS_OF.filter(([p]) => file.startsWith(p)).sort((a, b) => b[0].length - a[0].length)[0];
  return prefix?.[1];
}

describe("the help names every environment variable its command reads", () => {
  const reads = envReads();

  it("finds the reads it should (the search itself works)", () => {
    assert.ok(reads.get("shared/config/config.ts")?.has("POD_READ_ROLE"));
    assert.ok(reads.get("shared/config/config.ts")?.has("TRACE_CONCURRENT_LOADS"), "(env, NAME) reads");
    assert.ok(reads.get("shared/trace/sources/s3.ts")?.has("AWS_ENDPOINT_URL_S3"));
    // knative/webhook-endpoints.ts only sets the functions' environment.
    assert.equal(reads.get("knative/webhook-endpoints.ts"), undefined);
  });

  for (const [file, names] of reads) {
    it(file, () => {
      for (const name of names) {
        if (BUILD_ONLY.has(name)) continue;
        const commands = commandsReading(file, name);
        assert.ok(
          commands,
          `${file} reads ${name}: say here which commands run it, and name it in their help`,
        );
        for (const command of commands) {
          assert.match(usage(command), new RegExp(`\\b${name}\\b`), `help ${command} does not name ${name}`);
        }
      }
    });
  }
});
