// Holds shared/kube/client.ts's KNOWN_RESOURCES (the kinds addressed without discovery) to what an API server's
// discovery says, for the API double and for the real kube-apiserver alike.

import assert from "node:assert/strict";
import { KNOWN_RESOURCES } from "../../shared/kube/client.js";

export interface DiscoveredList {
  resources: { kind: string; name: string; namespaced: boolean }[];
}

/** Fails naming the first kind whose plural or scope differs from `discover(apiVersion)`'s list. */
export async function assertKnownResourcesMatch(
  discover: (apiVersion: string) => Promise<DiscoveredList>,
): Promise<void> {
  for (const [apiVersion, kinds] of Object.entries(KNOWN_RESOURCES)) {
    const list = await discover(apiVersion);
    for (const [kind, known] of Object.entries(kinds)) {
      // Subresources (pods/status) share the kind; the resource itself has no slash.
      const served = list.resources.find((r) => r.kind === kind && !r.name.includes("/"));
      assert.deepEqual(
        known,
        { name: served?.name, namespaced: served?.namespaced },
        `${apiVersion} ${kind}`,
      );
    }
  }
}
