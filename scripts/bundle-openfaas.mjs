// npm run bundle:openfaas: each function as the folder the OpenFaaS node22 template builds from,
// dist/openfaas/<function>/: handler.js (the entry in functions/runtime/openfaas/ with every dependency
// inlined, `module.exports = handler`, which the template require()s), its source map handler.js.map, and a
// package.json naming it.
// mutate-create reads traces, so its folder also holds the object-store readers, trace-sources/*.cjs,
// required only when a trace location of that store is read (scripts/trace-sources.mjs).

import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { clientNodeSlim } from "./client-node-slim.mjs";
import { buildTraceSources, traceSourcesExternal } from "./trace-sources.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outdir = path.join(root, "dist/openfaas");
const functions = ["mutate-create", "reschedule-delete"];

const common = {
  bundle: true,
  platform: "node",
  target: "node22",
  minifySyntax: true,
  logLevel: "warning",
};

await build({
  ...common,
  entryPoints: Object.fromEntries(
    functions.map((fn) => [`${fn}/handler`, path.join(root, `functions/runtime/openfaas/${fn}.ts`)]),
  ),
  outdir,
  format: "cjs",
  footer: { js: "module.exports = module.exports.handler;" },
  // handler.js.map: mappings only, as the CLI bundle's (scripts/bundle.mjs); logged stacks name the
  // TypeScript through it (functions/runtime/openfaas/own-stacks.ts).
  sourcemap: "linked",
  sourcesContent: false,
  plugins: [clientNodeSlim, traceSourcesExternal],
});
await buildTraceSources(root, path.join(outdir, "mutate-create"), common);
for (const fn of functions) {
  const pkg = {
    name: `simkube-fn-${fn}`,
    private: true,
    main: "handler.js",
    scripts: { test: "node handler.js" },
  };
  writeFileSync(path.join(outdir, fn, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
}
