// The serve bundle (dist/bundle/simkube-fn-serve.cjs): functions/cli/main.ts with the modules of every
// command but `serve` replaced by one stand-in, so a function's cold start reads, and keeps in memory, only
// what serving needs. The launcher (functions/cli/launcher.ts) runs it for `serve` and the full bundle for
// everything else, so the stand-in's functions are never called. Measured: 2.0 MB instead of 2.8 MB, a
// 1.2 MB code cache instead of 1.8 MB, ~8 ms (10%) off spawn-to-first-review (docs/performance.md, "History").

/** main.ts's command modules that `serve` never reaches (each is imported statically or by import()). */
const OTHER_COMMANDS = /\/(replay|manifests|cluster|loadtest|trace)\/command\.js$|\/hash-pod\.js$/;

// Every name main.ts imports from those modules. A name missing here fails the build ("No matching export").
const STAND_IN = `
const absent = () => { throw new Error("not in the serve bundle: the launcher runs simkube-fn.cjs for this command"); };
export const runReplayCommand = absent, runManifests = absent, runClusterCommand = absent,
  runLoadtestCommand = absent, runTraceCommand = absent, hashPodText = absent;
`;

/** esbuild plugin: the other commands' modules become STAND_IN. */
export const serveOnly = {
  name: "serve-only",
  setup(build) {
    build.onResolve({ filter: OTHER_COMMANDS }, (args) =>
      args.importer.endsWith("/functions/cli/main.ts")
        ? { path: args.path, namespace: "serve-only" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "serve-only" }, () => ({ contents: STAND_IN, loader: "js" }));
  },
};
