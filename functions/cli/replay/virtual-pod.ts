// How SimKube's driver turns a traced bare pod into the object it applies in the simulation
// (sk-driver/src/runner.rs build_virtual_obj), for the local replay. Pure.

import {
  ORIG_NAMESPACE_ANNOTATION_KEY,
  SIMULATION_LABEL_KEY,
  VIRTUAL_LABEL_KEY,
} from "../../../shared/base/index.js";
import type { KubeObject, OwnerReference } from "../../../shared/kube/index.js";

export function virtualNamespace(prefix: string, originalNamespace: string): string {
  return `${prefix}-${originalNamespace}`;
}

/** A virtual namespace as the driver creates it: owned by the SimulationRoot, labelled `simkube.io/virtual`. */
export function buildVirtualNamespace(name: string, root: OwnerReference): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: { "kubernetes.io/metadata.name": name, [VIRTUAL_LABEL_KEY]: "true" },
      ownerReferences: [{ ...root }],
    },
  };
}

/**
 * The traced pod in its virtual namespace, owned by the SimulationRoot, labelled as virtual, remembering its
 * original namespace, without status and without container ports (the driver strips them before applying).
 */
export function buildVirtualPod(
  pod: KubeObject,
  simName: string,
  root: OwnerReference,
  prefix: string,
): KubeObject {
  const next = structuredClone(pod);
  const originalNamespace = next.metadata?.namespace ?? "default";
  next.metadata = {
    ...next.metadata,
    namespace: virtualNamespace(prefix, originalNamespace),
    labels: { ...next.metadata?.labels, [SIMULATION_LABEL_KEY]: simName, [VIRTUAL_LABEL_KEY]: "true" },
    annotations: { ...next.metadata?.annotations, [ORIG_NAMESPACE_ANNOTATION_KEY]: originalNamespace },
    ownerReferences: [...(next.metadata?.ownerReferences ?? []), { ...root, blockOwnerDeletion: true }],
  };
  delete next.status;
  const spec = next.spec as { containers?: Array<Record<string, unknown>> } | undefined;
  for (const container of spec?.containers ?? []) delete container.ports;
  return next;
}
