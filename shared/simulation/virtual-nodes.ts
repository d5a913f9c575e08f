// How a pod is pinned to SimKube's virtual nodes: the nodeSelector `type: virtual`, and a toleration of the
// virtual nodes' `kwok-provider` NoSchedule taint. One home for both, and for the three ways the project adds
// the toleration, each after its model (docs/differences-from-simkube.md). Pure: copies in, copies out.

import {
  isRecord,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "../base/index.js";

/** The selector only virtual nodes match (SimKube overwrites a different `type` with it). */
export const VIRTUAL_NODE_SELECTOR: Readonly<Record<string, string>> = Object.freeze({
  [VIRTUAL_NODE_SELECTOR_KEY]: VIRTUAL_NODE_SELECTOR_VALUE,
});

/** SimKube's toleration of the virtual nodes' taint, a new object each call (it ends up in pods). */
export function virtualNodeToleration(): { key: string; operator: "Exists"; effect: "NoSchedule" } {
  return { key: VIRTUAL_NODE_TOLERATION_KEY, operator: "Exists", effect: "NoSchedule" };
}

/** Whether any of the tolerations is of the virtual nodes' taint key (whatever it tolerates). */
export function toleratesVirtualNodes(tolerations: readonly unknown[]): boolean {
  return tolerations.some((t) => isRecord(t) && t.key === VIRTUAL_NODE_TOLERATION_KEY);
}

/**
 * How SimKube's toleration joins a pod's own:
 * - "unless-present": SimKube's handler (add_node_selector_tolerations) adds it unless one of its key is there;
 * - "append": SimKube's driver appends it to every template it creates, whatever is there;
 * - "only": the clone fence: exactly one toleration of that key, SimKube's (another might tolerate more).
 */
export type TolerationRule = "unless-present" | "append" | "only";

export function withVirtualNodeToleration(tolerations: readonly unknown[], rule: TolerationRule): unknown[] {
  if (rule === "unless-present" && toleratesVirtualNodes(tolerations)) return [...tolerations];
  const kept =
    rule === "only"
      ? tolerations.filter((t) => !(isRecord(t) && t.key === VIRTUAL_NODE_TOLERATION_KEY))
      : tolerations;
  return [...kept, virtualNodeToleration()];
}

/** The spec with the virtual-node selector set and the toleration added by `rule`; a missing map or list is new. */
export function pinToVirtualNodes(
  spec: Record<string, unknown>,
  rule: TolerationRule,
): Record<string, unknown> {
  const nodeSelector = isRecord(spec.nodeSelector) ? spec.nodeSelector : {};
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  return {
    ...spec,
    nodeSelector: { ...nodeSelector, ...VIRTUAL_NODE_SELECTOR },
    tolerations: withVirtualNodeToleration(tolerations, rule),
  };
}
