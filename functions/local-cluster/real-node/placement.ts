// Placing a whole namespace's pods on the real node without editing their manifests: kube-apiserver's
// PodNodeSelector and PodTolerationRestriction admission plugins (enabled with a real node) give every pod
// created in a namespace carrying these annotations the node selector and the toleration. Knative's own
// Deployments and the Revisions it creates then land on the real node as they are.

import { REAL_NODE_LABEL, REAL_NODE_TAINT } from "./configs.js";

/** The admission plugins that read the annotations (upstream: plugin/pkg/admission/podnodeselector and podtolerationrestriction). */
export const PLACEMENT_ADMISSION_PLUGINS = ["PodNodeSelector", "PodTolerationRestriction"] as const;

export const NODE_SELECTOR_ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector";
export const DEFAULT_TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/defaultTolerations";

/** The annotations that put a namespace's pods on the real node. */
export function realNodePlacement(): Record<string, string> {
  return {
    [NODE_SELECTOR_ANNOTATION]: `${REAL_NODE_LABEL}=true`,
    [DEFAULT_TOLERATIONS_ANNOTATION]: JSON.stringify([
      {
        key: REAL_NODE_TAINT.key,
        operator: "Equal",
        value: REAL_NODE_TAINT.value,
        effect: REAL_NODE_TAINT.effect,
      },
    ]),
  };
}

interface NamespaceLike {
  metadata: { name: string; annotations?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** The namespace with the placement annotations added (its own annotations kept). */
export function placedOnRealNode<T extends NamespaceLike>(namespace: T): T {
  const annotations = { ...namespace.metadata.annotations, ...realNodePlacement() };
  return { ...namespace, metadata: { ...namespace.metadata, annotations } };
}
