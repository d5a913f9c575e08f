// The metadata-only reads (shared/kube/partial-metadata.ts) as the API server answers them, case by case: the
// transform, its v1beta1 form, the list form, the fallback clause, and the 406s. The same cases run against the
// API double (test/e2e/api-double-metadata.test.ts) and against the real kube-apiserver beside it
// (test/cluster/production-security.test.ts), which compares the two answers case by case.

import type { KubeObject } from "../../shared/kube/api.js";
import { PARTIAL_METADATA_ACCEPT } from "../../shared/kube/partial-metadata.js";

/** What a case needs to exist: a namespace, a pod in it and a SimulationRoot (any, by name). */
export interface MetadataWorld {
  namespace: string;
  pod: string;
  root: string;
}

/** A pod whose spec carries what a metadata-only read must not return. */
export function podWithSecret(w: MetadataWorld): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: w.pod, namespace: w.namespace, labels: { app: "meta" } },
    spec: { containers: [{ name: "main", image: "busybox", env: [{ name: "PASSWORD", value: "hunter2" }] }] },
  };
}

export interface MetadataCase {
  name: string;
  path: string;
  accept: string;
}

/** One GET with an Accept header: the HTTP status and the parsed body. */
export type RawGet = (path: string, accept: string) => Promise<{ status: number; body: unknown }>;

const as = (kind: string, version = "v1") => `application/json;as=${kind};g=meta.k8s.io;v=${version}`;

export function metadataCases(w: MetadataWorld): MetadataCase[] {
  const pod = `/api/v1/namespaces/${w.namespace}/pods/${w.pod}`;
  const pods = `/api/v1/namespaces/${w.namespace}/pods`;
  return [
    { name: "a pod, metadata only (what the functions send)", path: pod, accept: PARTIAL_METADATA_ACCEPT },
    { name: "a pod, metadata only, v1beta1", path: pod, accept: as("PartialObjectMetadata", "v1beta1") },
    { name: "a pod, whole", path: pod, accept: "application/json" },
    { name: "a pod, an unknown transform", path: pod, accept: as("Bogus") },
    { name: "a pod, an unknown meta version", path: pod, accept: as("PartialObjectMetadata", "v2") },
    { name: "a pod, an unknown transform then JSON", path: pod, accept: `${as("Bogus")}, application/json` },
    {
      name: "a pod, JSON at q=0.5 before the transform (q orders the clauses)",
      path: pod,
      accept: `application/json;q=0.5, ${as("PartialObjectMetadata")}`,
    },
    { name: "a pod, the list transform", path: pod, accept: as("PartialObjectMetadataList") },
    { name: "a pod, text/plain", path: pod, accept: "text/plain" },
    { name: "a pod, application/*", path: pod, accept: "application/*" },
    { name: "a missing pod, metadata only", path: `${pod}-missing`, accept: PARTIAL_METADATA_ACCEPT },
    { name: "pods, the list transform", path: pods, accept: as("PartialObjectMetadataList") },
    { name: "pods, the object transform", path: pods, accept: as("PartialObjectMetadata") },
    {
      name: "a namespace, metadata only",
      path: `/api/v1/namespaces/${w.namespace}`,
      accept: PARTIAL_METADATA_ACCEPT,
    },
    {
      name: "a SimulationRoot, metadata only",
      path: `/apis/simkube.io/v1/simulationroots/${w.root}`,
      accept: PARTIAL_METADATA_ACCEPT,
    },
    {
      name: "a SimulationRoot, an unknown transform",
      path: `/apis/simkube.io/v1/simulationroots/${w.root}`,
      accept: as("Bogus"),
    },
  ];
}

/**
 * What is compared of an answer: the status and the body's type, which top-level fields it has, the name,
 * and for a list the items' types. A 406's message without the Go type the real server appends.
 */
export interface Outcome {
  status: number;
  kind?: string;
  apiVersion?: string;
  fields: string[];
  name?: string;
  itemTypes?: string[];
  reason?: string;
  message?: string;
}

export function outcomeOf(status: number, body: unknown): Outcome {
  const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const meta = (b.metadata ?? {}) as Record<string, unknown>;
  const outcome: Outcome = { status, fields: Object.keys(b).sort() };
  if (typeof b.kind === "string") outcome.kind = b.kind;
  if (typeof b.apiVersion === "string") outcome.apiVersion = b.apiVersion;
  if (typeof meta.name === "string") outcome.name = meta.name;
  if (Array.isArray(b.items)) {
    outcome.itemTypes = [
      ...new Set(
        b.items.map((i: { kind?: string; apiVersion?: string }) => `${i.apiVersion ?? "-"}/${i.kind ?? "-"}`),
      ),
    ];
  }
  if (b.kind === "Status") {
    if (typeof b.reason === "string") outcome.reason = b.reason;
    // 404 messages name the resource the same way; 406 messages may end in " (*core.PodList)".
    if (typeof b.message === "string") outcome.message = b.message.replace(/ \(\*[^)]*\)$/, "");
  }
  return outcome;
}

export async function outcomesOf(
  get: RawGet,
  cases: readonly MetadataCase[],
): Promise<Record<string, Outcome>> {
  const out: Record<string, Outcome> = {};
  for (const c of cases) {
    const { status, body } = await get(c.path, c.accept);
    out[c.name] = outcomeOf(status, body);
  }
  return out;
}
