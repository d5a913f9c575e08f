// esbuild plugin for the bundles that serve reviews (dist/bundle/simkube-fn-serve.cjs and the OpenFaaS
// handlers): @kubernetes/client-node without its generated API classes and typed models.
//
// shared/kube/client.ts deep-imports config.js (KubeConfig) and object.js (KubernetesObjectApi) and sends and reads
// raw JSON only, discovery included. But config.js imports the library's whole generated index for two names,
// and object.js its API index and the typed serializer, which together pull in every API class and ~700
// models (~430 KB of the serve bundle), all evaluated at every start. So those three imports, and only from
// those two files, get modules that re-export the few names the files use; the serializer becomes a stand-in
// that says why it is missing if anything ever reaches it. And socks-proxy-agent, which config.js constructs
// only for a socks:// proxy-url, is loaded then. Measured on Node 20 (docs/performance.md, "History"): spawn to first
// admitted review 148 -> 125 ms best, 169 -> 157 ms median over 30 alternating starts; code cache 1.23 ->
// 0.58 MB. The full CLI bundle keeps the whole library (its commands use the typed clients).

import path from "node:path";

/** The folder of client-node's own entry modules (config.js, object.js), as a path ending. */
const DIST = path.join("@kubernetes", "client-node", "dist");

const SERIALIZER_STAND_IN = `
const missing = () => {
  throw new Error("client-node's typed serializer is not in this bundle: shared/kube/client.ts reads and writes raw JSON");
};
export const ObjectSerializer = new Proxy({}, { get: () => missing });
`;

// config.js only constructs it, for a kubeconfig whose proxy-url is socks://: load it then (socks and
// ip-address are most of what evaluating it cost at every start).
const SOCKS_STAND_IN = `
export class SocksProxyAgent {
  constructor(...args) {
    const { SocksProxyAgent: Agent } = require("socks-proxy-agent");
    return new Agent(...args);
  }
}
`;

/** What replaces `specifier` when `importer` imports it, if anything: only for two files of client-node's dist/. */
function standIn(importer, specifier) {
  if (!path.dirname(importer).endsWith(`${path.sep}${DIST}`)) return undefined;
  const file = path.basename(importer);
  if (file === "config.js" && specifier === "./gen/index.js") {
    // config.js: `import { createConfiguration, ServerConfiguration } from './gen/index.js'`
    return `export { createConfiguration } from "./gen/configuration.js";
export { ServerConfiguration } from "./gen/servers.js";`;
  }
  if (file === "object.js" && specifier === "./api.js") {
    // object.js: `import { ApiException, HttpMethod } from './api.js'`
    return `export { ApiException } from "./gen/apis/exception.js";
export { HttpMethod } from "./gen/http/http.js";`;
  }
  if (file === "object.js" && specifier === "./serializer.js") return SERIALIZER_STAND_IN;
  if (file === "config.js" && specifier === "socks-proxy-agent") return SOCKS_STAND_IN;
  return undefined;
}

export const clientNodeSlim = {
  name: "client-node-slim",
  setup(build) {
    build.onResolve({ filter: /^(\.\/(gen\/index|api|serializer)\.js|socks-proxy-agent)$/ }, (args) => {
      const contents = standIn(args.importer, args.path);
      const dist = path.dirname(args.importer);
      return contents === undefined
        ? undefined
        : {
            path: path.join(dist, `slim:${args.path}`),
            namespace: "client-node-slim",
            pluginData: { contents, dist },
          };
    });
    build.onLoad({ filter: /.*/, namespace: "client-node-slim" }, (args) => ({
      contents: args.pluginData.contents,
      loader: "js",
      resolveDir: args.pluginData.dist,
    }));
  },
};
