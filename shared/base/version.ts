// The version `simkube-fn --version` prints: package.json's, inlined by the bundle.

import packageJson from "../../package.json" with { type: "json" };

export const VERSION: string = packageJson.version;
