// Creates the objects of a multi-document YAML stream (Knative's release YAML) through the launcher's REST
// client, as `kubectl create -f` would: each object's collection path comes from the API server's discovery
// (any kind, CRD-defined ones included), Namespaces and CRDs go first, objects that already exist are left
// alone, and a kind whose CRD is not served yet is retried until it is.

import { parseAllDocuments } from "yaml";
import { waitUntil } from "../readiness.js";
import type { RestClient } from "../rest.js";

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** One entry of a group version's discovery document (`GET /apis/<group>/<version>`). */
export interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** The non-empty documents of a YAML stream; a document that is not a Kubernetes object is an error. */
export function parseManifestStream(text: string): ManifestObject[] {
  const objects: ManifestObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]?.message}`);
    const value = doc.toJSON() as Partial<ManifestObject> | null;
    if (value === null || value === undefined) continue;
    if (!value.apiVersion || !value.kind || !value.metadata?.name)
      throw new Error(
        `not a Kubernetes object (apiVersion, kind, metadata.name): ${JSON.stringify(value).slice(0, 200)}`,
      );
    objects.push(value as ManifestObject);
  }
  return objects;
}

const FIRST_KINDS = ["Namespace", "CustomResourceDefinition"];

/** Namespaces, then CRDs, then everything else, each group in stream order (what the others depend on first). */
export function creationOrder(objects: readonly ManifestObject[]): ManifestObject[] {
  const rank = (o: ManifestObject) => {
    const i = FIRST_KINDS.indexOf(o.kind);
    return i === -1 ? FIRST_KINDS.length : i;
  };
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i)
    .map(({ o }) => o);
}

/** `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** The collection an object is created in, given its kind's discovery entry. */
export function collectionUrl(object: ManifestObject, resource: ApiResource): string {
  const base = groupVersionPath(object.apiVersion);
  if (!resource.namespaced) return `${base}/${resource.name}`;
  const namespace = object.metadata.namespace ?? "default";
  return `${base}/namespaces/${namespace}/${resource.name}`;
}

async function discover(
  admin: RestClient,
  apiVersion: string,
  kind: string,
): Promise<ApiResource | undefined> {
  const doc = await admin.request<{ resources?: ApiResource[] }>("GET", groupVersionPath(apiVersion));
  return doc.resources?.find((r) => r.kind === kind && !r.name.includes("/"));
}

/** Creates every object of the stream (existing ones are kept); waits up to `timeoutMs` for each kind's API. */
export async function createManifestStream(
  admin: RestClient,
  objects: readonly ManifestObject[],
  timeoutMs = 60_000,
): Promise<void> {
  const resources = new Map<string, ApiResource>();
  for (const object of creationOrder(objects)) {
    const key = `${object.apiVersion}/${object.kind}`;
    await waitUntil(
      `${object.kind} ${object.metadata.name} created`,
      async () => {
        let resource = resources.get(key);
        if (!resource) {
          resource = await discover(admin, object.apiVersion, object.kind);
          if (!resource) return false;
          resources.set(key, resource);
        }
        await admin.ensure(collectionUrl(object, resource), object);
        return true;
      },
      { timeoutMs, intervalMs: 500 },
    );
  }
}
