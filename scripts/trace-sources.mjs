// The object-store trace readers (shared/trace/sources/{s3,gcs,azure}.ts) as bundle files of their own, for
// scripts/bundle.mjs (dist/bundle/) and scripts/bundle-openfaas.mjs (dist/openfaas/mutate-create/). Each
// holds its store's SDK; the main bundle requires one only when a trace location of that store is read, so a
// start that reads a file or an http(s) trace never parses them.

import { isAscii } from "node:buffer";
import { appendFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

export const traceSources = ["s3", "gcs", "azure"];

/**
 * shared/trace/source.ts imports "./sources/<store>.js" dynamically. In a bundle that import becomes
 * a stub that `require`s "./trace-sources/<store>.cjs", the file built beside the bundle: the CLI's launcher
 * runs the bundle through vm.Script, which has no loader for a real import(), while its require (and the
 * OpenFaaS template's) resolves files beside the bundle. esbuild runs the stub, so the require, only when the
 * import is reached.
 */
export const traceSourcesExternal = {
  name: "trace-sources-external",
  setup(b) {
    b.onResolve({ filter: /^\.\/sources\/[a-z0-9]+\.js$/ }, (args) => {
      const store = /([a-z0-9]+)\.js$/.exec(args.path)[1];
      if (
        !args.importer.endsWith(path.join("shared", "trace", "source.ts")) ||
        !traceSources.includes(store)
      ) {
        return undefined;
      }
      return { path: store, namespace: "trace-source-stub" };
    });
    b.onLoad({ filter: /.*/, namespace: "trace-source-stub" }, (args) => ({
      contents: `module.exports = require("./trace-sources/${args.path}.cjs");`,
      loader: "js",
    }));
    b.onResolve(
      { filter: /^\.\/trace-sources\/[a-z0-9]+\.cjs$/, namespace: "trace-source-stub" },
      (args) => ({
        path: args.path,
        external: true,
      }),
    );
  },
};

/** Builds <outdir>/trace-sources/<store>.cjs (+ .LEGAL.txt, the SDKs' license notices) for every store. */
export async function buildTraceSources(root, outdir, common) {
  const { metafile } = await build({
    ...common,
    entryPoints: Object.fromEntries(
      traceSources.map((s) => [`trace-sources/${s}`, path.join(root, `shared/trace/sources/${s}.ts`)]),
    ),
    outdir,
    outExtension: { ".js": ".cjs" },
    format: "cjs",
    legalComments: "linked",
    // Whatever the caller's minification: comments dropped, so the files stay ASCII-only like the bundle.
    minifyWhitespace: true,
    // Some ESM dependencies (the Azure SDK's) call createRequire(import.meta.url), which CommonJS has not:
    // the file's own URL takes its place.
    define: { "import.meta.url": "__simkube_fn_file_url" },
    banner: { js: 'const __simkube_fn_file_url = require("node:url").pathToFileURL(__filename).href;' },
    metafile: true,
  });
  for (const store of traceSources) {
    const file = path.join(outdir, `trace-sources/${store}.cjs`);
    if (!isAscii(readFileSync(file))) throw new Error(`${file} is not ASCII-only`);
    const output = metafile.outputs[path.relative(process.cwd(), file)];
    appendFileSync(`${file}.LEGAL.txt`, packageNotices(root, Object.keys(output?.inputs ?? {})));
  }
}

/**
 * The SDKs carry few license comments for esbuild to keep, so each package bundled is listed with its
 * license, and the text of each distinct LICENSE file the packages ship follows once.
 */
function packageNotices(root, inputs) {
  const packages = new Map();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match && !packages.has(match[1])) packages.set(match[1], path.join(root, match[1]));
  }
  const lines = ["", "Bundled packages and their licenses:", ""];
  const texts = new Map();
  for (const dir of [...packages.values()].sort()) {
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    lines.push(`  ${pkg.name}@${pkg.version}: ${pkg.license ?? "see its package"}`);
    const licenseFile = existsSync(dir) && readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
    if (!licenseFile) continue;
    const text = readFileSync(path.join(dir, licenseFile), "utf8").trim();
    texts.set(text, [...(texts.get(text) ?? []), pkg.name]);
  }
  for (const [text, names] of texts) lines.push("", `License text of ${names.join(", ")}:`, "", text);
  return `${lines.join("\n")}\n`;
}
