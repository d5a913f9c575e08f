// The bundle's entry point, dist/bundle/simkube-fn.mjs (package.json "bin", the image's ENTRYPOINT). It runs
// the CLI bundle next to it, simkube-fn.cjs (functions/cli/main.ts with every dependency inlined), through V8's code
// cache; `serve` runs simkube-fn-serve.cjs instead, the same without the other commands (scripts/serve-bundle.mjs),
// which a cold start reads faster. Only meaningful inside dist/bundle/ (scripts/bundle.mjs builds it there).
//
// Why: most of a cold start of `serve` is V8 parsing and compiling the bundled libraries (the Kubernetes
// client, prom-client, pino). vm.Script accepts V8 code cache data: the build starts each function once and keeps
// what V8 compiled in simkube-fn.cjs.cache; later starts deserialize that instead of compiling. V8 rejects a
// cache from another V8 version or other V8 flags (the code is then compiled as usual), and the cache file
// starts with the build id of the bundle it belongs to, because V8 only checks the source's length.
//
// SIMKUBE_FN_WRITE_CODE_CACHE=1 writes the cache when the process exits (the build does; so can an image build
// whose Node differs from the one that built the bundle, see the Dockerfile).
//
// Why not Node 22's module.enableCompileCache: it keeps what V8 compiled when the module loaded, not the
// functions compiled lazily afterwards, and a start with it took 1.08-1.16x the CPU of one with this cache on
// Node 22 and 24 (`npm run bench:launch`, docs/performance.md, "Source maps and the code cache"). Stacks name
// the TypeScript source through runtime/bundle-stacks.ts, since Node maps only what it loads itself.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { bundleBuildId } from "../runtime/bundle-build-id.js";
import { mapBundleStacks } from "../runtime/bundle-stacks.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const bundleFile = path.join(here, process.argv[2] === "serve" ? "simkube-fn-serve.cjs" : "simkube-fn.cjs");
const cacheFile = `${bundleFile}.cache`;

/** The V8 data in the cache file, if the file exists and belongs to this build. */
function readCache(buildId: string | undefined): Buffer | undefined {
  if (!buildId) return undefined;
  let file: Buffer;
  try {
    file = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const header = Buffer.from(`${buildId}\n`, "latin1");
  if (file.length <= header.length || !file.subarray(0, header.length).equals(header)) return undefined;
  return file.subarray(header.length);
}

// The build checks that the bundle is ASCII (esbuild escapes the rest): read as latin1, the cheapest decoding.
const source = readFileSync(bundleFile, "latin1");
const buildId = bundleBuildId(source);
// The CommonJS wrapper, as Node's own loader would apply it (on the first line: line numbers stay right).
const WRAPPER = "(function (exports, require, module, __filename, __dirname) {";
mapBundleStacks(bundleFile, WRAPPER.length);
const script = new vm.Script(`${WRAPPER}${source}\n})`, {
  filename: bundleFile,
  cachedData: readCache(buildId),
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
if (process.env.SIMKUBE_FN_WRITE_CODE_CACHE === "1" && buildId) {
  // At exit V8 has compiled what this run needed (module code, startup functions): all of it goes in.
  process.once("exit", () => {
    writeFileSync(
      cacheFile,
      Buffer.concat([Buffer.from(`${buildId}\n`, "latin1"), script.createCachedData()]),
    );
  });
}
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, here);
