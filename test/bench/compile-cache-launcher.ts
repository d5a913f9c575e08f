// The launcher as it would be with Node's compile cache (module.enableCompileCache, Node 22.1+) instead of the
// hand-built V8 code cache of functions/cli/launcher.ts: the bundle loaded by require(), its compiled code kept
// in compile-cache/ beside it. Not shipped: launch-modes.ts builds it into a copy of dist/bundle to compare.

import { createRequire, enableCompileCache } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { mapBundleStacks } from "../../functions/runtime/bundle-stacks.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const bundleFile = path.join(here, process.argv[2] === "serve" ? "simkube-fn-serve.cjs" : "simkube-fn.cjs");
enableCompileCache(path.join(here, "compile-cache"));
// require() adds nothing before the bundle's first line: no column correction there.
mapBundleStacks(bundleFile, 0);
createRequire(bundleFile)(bundleFile);
