// npm run bundle: the CLI as one folder that runs without node_modules, dist/bundle/ (package.json "bin";
// the Docker image copies the folder):
//   simkube-fn.mjs        the entry: functions/cli/launcher.ts
//   simkube-fn.cjs        functions/cli/main.ts with every dependency inlined, ending in its build id
//   simkube-fn.cjs.cache  V8's code cache for it, written by running `--version`
//   simkube-fn-serve.cjs  the same without the commands other than `serve` (scripts/serve-bundle.mjs says why)
//                         and without client-node's typed APIs and models (scripts/client-node-slim.mjs)
//   simkube-fn-serve.cjs.cache  its code cache, written by starting each function once (`serve --check`)
//   simkube-fn.cjs.map, simkube-fn-serve.cjs.map  their source maps, so logged stacks name the TypeScript
//   simkube-fn.cjs.LEGAL.txt, simkube-fn-serve.cjs.LEGAL.txt  the bundled libraries' license notices
//   trace-sources/{s3,gcs,azure}.cjs  the object-store trace readers, each with its SDK inlined and its own
//                         .LEGAL.txt, required only when a trace location of that store is read
//                         (scripts/trace-sources.mjs)
//   examples/scenario.yaml    the example `replay` runs when given no trace
//
// The cache is only valid for the Node that wrote it (V8 rejects it otherwise, and compiles as usual).

import { isAscii } from "node:buffer";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { clientNodeSlim } from "./client-node-slim.mjs";
import { serveOnly } from "./serve-bundle.mjs";
import { buildTraceSources, traceSourcesExternal } from "./trace-sources.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/bundle");
const cli = path.join(outdir, "simkube-fn.cjs");
const serveCli = path.join(outdir, "simkube-fn-serve.cjs");
const entry = path.join(outdir, "simkube-fn.mjs");

const common = {
  bundle: true,
  platform: "node",
  target: "node22",
  // Whitespace and syntax only: identifiers keep their names (stack traces, logged errors), and V8 compiles
  // minified identifiers more slowly whenever the cache is not used.
  minifySyntax: true,
  minifyWhitespace: true,
  logLevel: "warning",
};

rmSync(outdir, { recursive: true, force: true });

const cliOptions = {
  ...common,
  entryPoints: [path.join(root, "functions/cli/main.ts")],
  format: "cjs",
  // The libraries' license notices go to simkube-fn.cjs.LEGAL.txt, leaving the bundle ASCII-only.
  legalComments: "linked",
  // simkube-fn.cjs.map: mappings only (a stack needs file, line and column, not the sources, which would
  // triple its size); functions/runtime/bundle-stacks.ts reads it when a stack is formatted.
  sourcemap: "linked",
  sourcesContent: false,
  alias: {
    "whatwg-url": path.join(root, "scripts/whatwg-url.cjs"),
  },
};
await build({ ...cliOptions, outfile: cli, plugins: [traceSourcesExternal] });
await build({ ...cliOptions, outfile: serveCli, plugins: [serveOnly, clientNodeSlim, traceSourcesExternal] });
await buildTraceSources(root, outdir, common);
// The example scenario `replay` runs when given no trace (functions/cli/trace/example.ts looks beside the bundle).
cpSync(path.join(root, "examples/scenario.yaml"), path.join(outdir, "examples/scenario.yaml"));
for (const file of [cli, serveCli]) {
  const bundled = readFileSync(file);
  // The launcher reads the bundle as latin1, which is only right for ASCII.
  if (!isAscii(bundled)) throw new Error(`${file} is not ASCII-only`);
  const buildId = createHash("sha256").update(bundled).digest("hex").slice(0, 16);
  appendFileSync(file, `\n//# simkube-fn-build ${buildId}\n`);
}

await build({
  ...common,
  entryPoints: [path.join(root, "functions/cli/launcher.ts")],
  outfile: entry,
  format: "esm",
  banner: { js: "#!/usr/bin/env node" },
});

// Start each function once, so that the cache holds the code a cold start compiles. No API server is needed:
// nothing but the readiness check calls one before the first review, and `--check` then reports the API
// unreachable (exit 1, "not ready") after everything was loaded. A throwaway kubeconfig keeps the
// developer's own out of it.
const scratch = mkdtempSync(path.join(tmpdir(), "simkube-fn-bundle-"));
try {
  const kubeconfig = path.join(scratch, "kubeconfig");
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "none", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "none", user: { token: "none" } }],
      contexts: [{ name: "none", context: { cluster: "none", user: "none" } }],
      "current-context": "none",
    }),
  );
  const runs = [
    ["--version"],
    ...["mutate-create", "reschedule-delete"].map((fn) => ["serve", fn, "--check", "--port", "0"]),
  ];
  for (const args of runs) {
    const run = spawnSync(process.execPath, [entry, ...args], {
      cwd: scratch,
      env: {
        PATH: process.env.PATH,
        SIM_NAME: "code-cache",
        KUBECONFIG: kubeconfig,
        LOG_LEVEL: "info",
        SIMKUBE_FN_WRITE_CODE_CACHE: "1",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    const unreachable =
      run.status === 1 && run.stderr.startsWith("simkube-fn: not ready: the API server is unreachable");
    if (run.status !== 0 && !(args[0] === "serve" && unreachable)) {
      throw new Error(`${args.join(" ")} failed (${run.status ?? run.signal}):\n${run.stderr}${run.stdout}`);
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
for (const file of [cli, serveCli]) {
  if (!existsSync(`${file}.cache`)) throw new Error(`no code cache was written for ${file}`);
}
