// Read rules for the owner kinds a trace tracks. SimKube's driver reads any owner (it runs as cluster-admin);
// mutate-create's account reads SimKube's six built-in workload kinds (rbac.ts OWNER_KINDS), so a pod owned
// by another kind the trace replays (an Argo Rollout, say) would be refused. A trace's config names every
// kind it tracks: `manifests --owner-kinds-from-trace TRACE` grants get on each. Pure.

import { guessResourceOfKind } from "../shared/kube/index.js";
import { parseGvk } from "../shared/trace/index.js";
import type { PolicyRuleInput } from "./options.js";
import { OWNER_KINDS } from "./rbac.js";

/** Pods own nothing the walk reads, and the built-in kinds are granted already. */
const ALREADY_READ = new Set(["v1.Pod", ...OWNER_KINDS.map((k) => `${k.apiVersion}.${k.kind}`)]);

/** One get rule per API group over the tracked kinds' resources (guessed from the kind), sorted. */
export function ownerRulesForTrackedKinds(trackedGvks: readonly string[]): PolicyRuleInput[] {
  const byGroup = new Map<string, Set<string>>();
  for (const text of trackedGvks) {
    const gvk = parseGvk(text);
    const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
    if (ALREADY_READ.has(`${apiVersion}.${gvk.kind}`)) continue;
    byGroup.set(gvk.group, (byGroup.get(gvk.group) ?? new Set()).add(guessResourceOfKind(gvk.kind)));
  }
  return [...byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs: ["get"] }));
}
