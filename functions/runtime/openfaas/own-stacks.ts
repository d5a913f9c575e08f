// Stacks logged from the OpenFaaS bundle name the TypeScript file and line: scripts/bundle-openfaas.mjs ships
// handler.js.map beside handler.js, read only when a stack is first formatted (bundle-stacks.ts).

import { mapBundleStacks } from "../bundle-stacks.js";

/** In the CommonJS bundle, __filename is handler.js itself; run as ES modules (tests) there is none. */
export function mapOwnStacks(): void {
  // Node's CommonJS loader adds nothing before the first line: columns there need no correction.
  if (typeof __filename === "string") mapBundleStacks(__filename, 0);
}
