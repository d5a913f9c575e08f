// What SimKube's driver applies for one traced object (sk-driver/src/runner.rs, sk-core/src/k8s/util.rs): the
// object moved to its virtual namespace, labelled as the simulation's, owned by the driver's SimulationRoot,
// without status; and every pod template in it pinned to virtual nodes. Pure: no I/O, the input is not changed.

import {
  ORIG_NAMESPACE_ANNOTATION_KEY,
  SIMULATION_LABEL_KEY,
  VIRTUAL_LABEL_KEY,
} from "../../../shared/base/index.js";
import type { KubeObject } from "../../../shared/kube/index.js";
import { VIRTUAL_NODE_SELECTOR, withVirtualNodeToleration } from "../../../shared/simulation/index.js";
import type { TracerConfig } from "../../../shared/trace/index.js";

export const APP_NAME_LABEL_KEY = "app.kubernetes.io/name";
const MAX_LABEL_VALUE_LENGTH = 63;

type Json = Record<string, unknown>;

export interface DriverContext {
  simName: string;
  virtualNsPrefix: string;
  /** The driver's SimulationRoot (its uid is in every owner reference). */
  root: KubeObject;
}

/** `<prefix>-<namespace>`, the namespace SimKube's driver moves a traced namespace's objects to. */
export function virtualNamespaceName(prefix: string, namespace: string): string {
  return `${prefix}-${namespace}`;
}

/** A label value: at most 63 characters, ending in an alphanumeric (truncation can leave '-', '_' or '.'). */
export function truncateLabelValue(value: string): string {
  return value.slice(0, MAX_LABEL_VALUE_LENGTH).replace(/[^A-Za-z0-9]+$/, "");
}

/** SimKube's default pod_spec_template_paths by kind (JSON pointers; "" is the object itself). */
const DEFAULT_TEMPLATE_PATHS: Record<string, string[]> = {
  Pod: [""],
  Deployment: ["/spec/template"],
  ReplicaSet: ["/spec/template"],
  StatefulSet: ["/spec/template"],
  DaemonSet: ["/spec/template"],
  Job: ["/spec/template"],
  CronJob: ["/spec/jobTemplate/spec/template"],
};

/** The pod template paths of an object: the trace config's for its GVK, else SimKube's default for its kind. */
export function podTemplatePaths(object: KubeObject, config: TracerConfig | undefined): string[] {
  const apiVersion = object.apiVersion ?? "v1";
  const gvk = `${apiVersion}.${object.kind ?? ""}`;
  return config?.trackedObjects[gvk]?.podSpecTemplatePaths ?? DEFAULT_TEMPLATE_PATHS[object.kind ?? ""] ?? [];
}

/** The object at a JSON pointer ("" = the root), or undefined when a step is missing or not an object. */
function at(root: Json, pointer: string): Json | undefined {
  if (pointer === "") return root;
  let node: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const step = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Json)[step];
  }
  return typeof node === "object" && node !== null && !Array.isArray(node) ? (node as Json) : undefined;
}

function objectAt(parent: Json, key: string): Json {
  const existing = parent[key];
  if (typeof existing === "object" && existing !== null && !Array.isArray(existing)) return existing as Json;
  const created: Json = {};
  parent[key] = created;
  return created;
}

/** Pins one pod template (or bare pod) to virtual nodes as the driver does. */
function pinTemplate(template: Json, originalNamespace: string): void {
  const metadata = objectAt(template, "metadata");
  objectAt(metadata, "annotations")[ORIG_NAMESPACE_ANNOTATION_KEY] = originalNamespace;
  const spec = objectAt(template, "spec");
  Object.assign(objectAt(spec, "nodeSelector"), VIRTUAL_NODE_SELECTOR);
  spec.tolerations = withVirtualNodeToleration(
    Array.isArray(spec.tolerations) ? spec.tolerations : [],
    "append",
  );
  // The virtual nodes run nothing: a port would only make the scheduler look for host-port conflicts.
  for (const list of [spec.containers, spec.initContainers]) {
    if (!Array.isArray(list)) continue;
    for (const container of list as Json[]) delete container.ports;
  }
}

/** Fields an object read from a cluster carries that an apply to another cluster must not. */
const SERVER_OWNED_METADATA = ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"];

/** The object the driver server-side applies for a traced object. */
export function driverObject(traced: KubeObject, ctx: DriverContext, config?: TracerConfig): KubeObject {
  const object = structuredClone(traced) as Json & KubeObject;
  delete object.status;
  const metadata = objectAt(object, "metadata") as NonNullable<KubeObject["metadata"]> & Json;
  for (const field of SERVER_OWNED_METADATA) delete metadata[field];
  const originalNamespace = metadata.namespace ?? "default";
  metadata.namespace = virtualNamespaceName(ctx.virtualNsPrefix, originalNamespace);
  metadata.labels = {
    ...(metadata.labels ?? {}),
    [SIMULATION_LABEL_KEY]: truncateLabelValue(ctx.simName),
    [APP_NAME_LABEL_KEY]: truncateLabelValue(metadata.name ?? ""),
    [VIRTUAL_LABEL_KEY]: "true",
  };
  metadata.ownerReferences = [...(metadata.ownerReferences ?? []), rootOwnerReference(ctx.root)];
  for (const pointer of podTemplatePaths(traced, config)) {
    const template = at(object, pointer);
    if (template) pinTemplate(template, originalNamespace);
  }
  return object;
}

export function rootOwnerReference(root: KubeObject) {
  return {
    apiVersion: root.apiVersion ?? "",
    kind: root.kind ?? "",
    name: root.metadata?.name ?? "",
    uid: root.metadata?.uid ?? "",
  };
}

/** The virtual namespace the driver creates for a traced namespace: owned by the root, labelled virtual. */
export function driverNamespace(name: string, ctx: DriverContext): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: { [VIRTUAL_LABEL_KEY]: "true", [SIMULATION_LABEL_KEY]: truncateLabelValue(ctx.simName) },
      ownerReferences: [rootOwnerReference(ctx.root)],
    },
  };
}
