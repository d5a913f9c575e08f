// Metadata-only reads: the API server's PartialObjectMetadata transform (meta.k8s.io/v1). A GET asking for
// it gets `{apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata}` and nothing of the
// object's spec, status or data. RBAC cannot grant "metadata only" (the verb is get either way), so this
// does not narrow what an account may read; it narrows what the function holds in memory and logs, and it
// says in the code which reads need the whole object. Pure.

import type { KubeObject } from "./api.js";

export const PARTIAL_METADATA_API_VERSION = "meta.k8s.io/v1";
export const PARTIAL_METADATA_KIND = "PartialObjectMetadata";

/**
 * The Accept header of a metadata-only read, as client-go's metadata client sends it (JSON only): the
 * transform first, then plain JSON, which a server that cannot transform (an aggregated API) answers with
 * the whole object. The caller reduces that answer too (asPartialObjectMetadata), so either way it sees
 * metadata only.
 */
export const PARTIAL_METADATA_ACCEPT = `application/json;as=${PARTIAL_METADATA_KIND};g=meta.k8s.io;v=v1, application/json`;

/** An object reduced to what a metadata-only read returns; an answer already in that shape is kept as is. */
export function asPartialObjectMetadata(object: KubeObject): KubeObject {
  if (object.kind === PARTIAL_METADATA_KIND && object.apiVersion === PARTIAL_METADATA_API_VERSION)
    return object;
  return {
    kind: PARTIAL_METADATA_KIND,
    apiVersion: PARTIAL_METADATA_API_VERSION,
    metadata: structuredClone(object.metadata ?? {}),
  };
}
