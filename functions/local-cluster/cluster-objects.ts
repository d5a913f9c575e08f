// The objects a local cluster starts with, as pure builders: SimKube's CRDs (the fields the functions read),
// the Simulation and its driver's SimulationRoot, the virtual nodes KWOK manages, and the namespaces.

import {
  SIMKUBE_API_VERSION,
  SIMULATION_KIND,
  SIMULATION_LABEL_KEY,
  SIMULATION_ROOT_KIND,
  VIRTUAL_LABEL_KEY,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import { KWOK_NODE_ANNOTATION, KWOK_NODE_ANNOTATION_VALUE } from "./kwok.js";

export type Json = Record<string, unknown>;

const open = { type: "object", "x-kubernetes-preserve-unknown-fields": true };

/** The Simulation's spec as the functions read it (shared/simulation/simulation.ts); other fields are kept as given. */
const SIMULATION_SPEC_SCHEMA = {
  ...open,
  properties: {
    speed: { type: "number" },
    rescheduleInterruptedBarePods: { type: "boolean" },
    lifecycleParams: {
      type: "object",
      properties: {
        imagePullDelay: { type: "integer" },
        imagePullJitter: { type: "integer" },
        podStartupDelay: { type: "integer" },
        podStartupJitter: { type: "integer" },
      },
    },
    driver: {
      ...open,
      properties: {
        namespace: { type: "string" },
        virtualNsPrefix: { type: "string" },
        tracePath: { type: "string" },
      },
    },
  },
};

function crd(kind: string, plural: string, spec: Json): Json {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.simkube.io` },
    spec: {
      group: "simkube.io",
      // Cluster-scoped, as SimKube's: the functions read them without a namespace.
      scope: "Cluster",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec,
                status: { ...open, properties: { state: { type: "string" } } },
              },
            },
          },
        },
      ],
    },
  };
}

export function simkubeCrds(): Json[] {
  return [
    crd(SIMULATION_KIND, "simulations", SIMULATION_SPEC_SCHEMA),
    crd(SIMULATION_ROOT_KIND, "simulationroots", open),
  ];
}

export interface SimulationOptions {
  name: string;
  reschedule: boolean;
  virtualNsPrefix: string;
  /** The driver's namespace (SimKube's default "simkube"). */
  driverNamespace: string;
  tracePath?: string;
}

export function buildSimulation(o: SimulationOptions): KubeObject {
  const driver: Json = { namespace: o.driverNamespace, virtualNsPrefix: o.virtualNsPrefix };
  if (o.tracePath) driver.tracePath = o.tracePath;
  return {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_KIND,
    metadata: { name: o.name },
    spec: { speed: 1, rescheduleInterruptedBarePods: o.reschedule, driver },
  } as KubeObject;
}

/** SimKube's driver names its root sk-<simulation>-driver-root and hangs it off the Simulation. */
export function driverRootName(simName: string): string {
  return `sk-${simName}-driver-root`;
}

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export function ownerRefTo(owner: KubeObject, controller = false): OwnerRef {
  return {
    apiVersion: owner.apiVersion ?? "",
    kind: owner.kind ?? "",
    name: owner.metadata?.name ?? "",
    uid: owner.metadata?.uid ?? "",
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

export function buildSimulationRoot(simulation: KubeObject): KubeObject {
  const simName = simulation.metadata?.name ?? "";
  return {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_ROOT_KIND,
    metadata: { name: driverRootName(simName), ownerReferences: [ownerRefTo(simulation)] },
    spec: {},
  } as KubeObject;
}

/** A virtual namespace as SimKube's driver makes it: `<prefix>-<namespace>`, labelled, owned by the root. */
export function buildVirtualNamespace(name: string, root: KubeObject, simName: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: { [VIRTUAL_LABEL_KEY]: "true", [SIMULATION_LABEL_KEY]: simName },
      ownerReferences: [ownerRefTo(root)],
    },
  } as KubeObject;
}

const VIRTUAL_NODE_CAPACITY = { cpu: "1000", memory: "4Ti", pods: "2000" };

/** A node KWOK manages, labelled and tainted as SimKube's virtual nodes are. */
export function buildVirtualNode(name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        [VIRTUAL_NODE_SELECTOR_KEY]: VIRTUAL_NODE_SELECTOR_VALUE,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
      },
      annotations: { [KWOK_NODE_ANNOTATION]: KWOK_NODE_ANNOTATION_VALUE },
    },
    spec: { taints: [{ key: VIRTUAL_NODE_TOLERATION_KEY, value: "true", effect: "NoSchedule" }] },
    // KWOK keeps a capacity given at creation; room for a few thousand simulated pods per node.
    status: { capacity: VIRTUAL_NODE_CAPACITY, allocatable: VIRTUAL_NODE_CAPACITY },
  } as KubeObject;
}

export function buildNamespace(name: string): KubeObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } } as KubeObject;
}

function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith("y")) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** The collection URL an object is POSTed to (core, named groups, namespaced or not). */
export function collectionPath(object: KubeObject): string {
  const apiVersion = object.apiVersion ?? "v1";
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const namespace = object.metadata?.namespace;
  const ns = namespace ? `/namespaces/${namespace}` : "";
  return `${base}${ns}/${pluralOf(object.kind ?? "")}`;
}

export function objectPath(object: KubeObject): string {
  return `${collectionPath(object)}/${object.metadata?.name ?? ""}`;
}
