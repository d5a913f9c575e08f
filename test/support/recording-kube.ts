// A KubeApi that records every call as the API server would authorize it: (API group, resource, verb,
// namespace). It wraps the in-memory fake, which keys cluster-scoped objects by namespace too, so refs of
// cluster-scoped kinds lose their namespace on the way in (as the real adapter's URLs do).

import type { KubeApi, ObjectRef } from "../../shared/kube/api.js";
import { refOf } from "../../shared/kube/api.js";
import { createMemoryKube, type MemoryKube } from "./memory-kube.js";

export interface AuthorizedCall {
  group: string;
  /** Lower-case plural, as in RBAC rules and URLs. */
  resource: string;
  /** The RBAC verb: read -> get, create -> create, replace -> update (KubeApi has no others). */
  verb: "get" | "create" | "update";
  /** Absent for cluster-scoped resources. */
  namespace?: string;
  /** A get of the metadata only (PartialObjectMetadata); RBAC authorizes it as get all the same. */
  metadataOnly?: true;
}

const CLUSTER_SCOPED = new Set(["Namespace", "Node", "Simulation", "SimulationRoot"]);

function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? (apiVersion.split("/")[0] as string) : "";
}

/** Every kind the functions touch is a regular English plural: Pod -> pods, ReplicaSet -> replicasets. */
function resourceOf(kind: string): string {
  return `${kind.toLowerCase()}s`;
}

export interface RecordingKube extends KubeApi {
  readonly memory: MemoryKube;
  readonly calls: AuthorizedCall[];
}

export function createRecordingKube(): RecordingKube {
  const memory = createMemoryKube();
  const calls: AuthorizedCall[] = [];
  const scoped = (ref: ObjectRef): ObjectRef => {
    if (!CLUSTER_SCOPED.has(ref.kind)) return ref;
    const { namespace: _cluster, ...rest } = ref;
    return rest;
  };
  const record = (ref: ObjectRef, verb: AuthorizedCall["verb"], metadataOnly = false) => {
    const call: AuthorizedCall = { group: groupOf(ref.apiVersion), resource: resourceOf(ref.kind), verb };
    const { namespace } = scoped(ref);
    if (namespace !== undefined) call.namespace = namespace;
    if (metadataOnly) call.metadataOnly = true;
    calls.push(call);
  };
  return {
    memory,
    calls,
    read(ref, options) {
      record(ref, "get", options?.metadataOnly === true);
      return memory.read(scoped(ref), options);
    },
    create(object) {
      record(refOf(object), "create");
      return memory.create(object);
    },
    replace(object) {
      record(refOf(object), "update");
      return memory.replace(object);
    },
  };
}
