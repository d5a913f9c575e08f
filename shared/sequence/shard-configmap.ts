// The ConfigMap that holds one shard: how it is first built, what a PUT sends back of it, and its size
// against the API server's limit. Pure.

import type { V1ConfigMap } from "@kubernetes/client-node";
import { isLabelValue, SIMULATION_LABEL_KEY } from "../base/index.js";
import type { KubeObject } from "../kube/index.js";
import type { SequenceOwner, SequenceScope } from "./store.js";

export type ConfigMap = V1ConfigMap & KubeObject;

/** The API server refuses a ConfigMap whose data keys and values add up to more (kubernetes/kubernetes
 * pkg/apis/core/validation: ValidateConfigMap, MaxSecretSize). */
export const CONFIGMAP_DATA_LIMIT_BYTES = 1024 * 1024;

/**
 * Bytes the API server counts against a ConfigMap's limit: every data key and value. Keys are checked
 * hashes and values are counts, all ASCII, so string length is byte length (a hand-edited non-ASCII value
 * is undercounted and then refused by the API server with its own 422).
 */
export function configMapDataSize(data: Record<string, string>): number {
  let size = 0;
  for (const key in data) size += key.length + (data[key] as string).length;
  return size;
}

/** The ConfigMap as first created: labelled with the simulation, owned by its root so it goes with it. */
export function buildSequenceConfigMap(
  ref: { namespace: string; name: string },
  scope: SequenceScope,
  data: Record<string, string>,
  annotations?: Record<string, string>,
): ConfigMap {
  const labels: Record<string, string> = { "app.kubernetes.io/managed-by": "simkube-fn" };
  if (isLabelValue(scope.simName)) labels[SIMULATION_LABEL_KEY] = scope.simName;
  const metadata: ConfigMap["metadata"] = { name: ref.name, namespace: ref.namespace, labels };
  if (annotations) metadata.annotations = annotations;
  if (scope.owner) metadata.ownerReferences = [ownerReference(scope.owner)];
  return { apiVersion: "v1", kind: "ConfigMap", metadata, data };
}

// No blockOwnerDeletion: setting it needs update on the owner's finalizers, which the function does not have.
function ownerReference(owner: SequenceOwner) {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid };
}

/**
 * The metadata a PUT sends back: the base copy's, without managedFields. An update that omits managedFields
 * keeps the stored ones (kubernetes.io "Server-Side Apply", managed fields), and the API server then neither
 * decodes nor compares them: measured against the real API server on the 2-core machine with a 5-counter
 * shard, 10-20% less API-server CPU and 20-35% less client CPU per PUT (docs/performance.md).
 */
export function metadataForWrite(meta: ConfigMap["metadata"]): ConfigMap["metadata"] {
  if (meta?.managedFields === undefined) return meta;
  const { managedFields: _stored, ...rest } = meta;
  return rest;
}
