// The kinds the double serves: the built-in ones and any registered later, looked up by kind, resource name
// or URL segments.

import type { ResourceInfo } from "./types.js";

function builtin(
  group: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  statusSubresource: boolean,
  shortNames?: string[],
): ResourceInfo {
  const info: ResourceInfo = {
    group,
    version: "v1",
    kind,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    statusSubresource,
    custom: false,
  };
  if (shortNames) info.shortNames = shortNames;
  return info;
}

export const BUILTIN_RESOURCES: readonly ResourceInfo[] = [
  builtin("", "Namespace", "namespaces", false, true, ["ns"]),
  builtin("", "Pod", "pods", true, true, ["po"]),
  builtin("", "ConfigMap", "configmaps", true, false, ["cm"]),
  builtin("", "Node", "nodes", false, true, ["no"]),
  builtin("", "ServiceAccount", "serviceaccounts", true, false, ["sa"]),
  // What mutate-create records on a Simulation whose rescheduling its deployment cannot serve.
  builtin("", "Event", "events", true, false, ["ev"]),
  builtin("apps", "Deployment", "deployments", true, true, ["deploy"]),
  builtin("apps", "ReplicaSet", "replicasets", true, true, ["rs"]),
  builtin("apps", "StatefulSet", "statefulsets", true, true, ["sts"]),
  builtin("apps", "DaemonSet", "daemonsets", true, true, ["ds"]),
  builtin("batch", "Job", "jobs", true, true),
  builtin("batch", "CronJob", "cronjobs", true, true, ["cj"]),
  // What reschedule-delete creates with --pod-reads virtual-namespaces (the double does not authorize).
  builtin("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", true, false),
  {
    group: "simkube.io",
    version: "v1",
    kind: "Simulation",
    plural: "simulations",
    singular: "simulation",
    namespaced: false,
    statusSubresource: true,
    custom: true,
    shortNames: ["sim", "sims"],
  },
  {
    group: "simkube.io",
    version: "v1",
    kind: "SimulationRoot",
    plural: "simulationroots",
    singular: "simulationroot",
    namespaced: false,
    statusSubresource: false,
    custom: true,
    shortNames: ["simroot", "simroots"],
  },
];

/** Kinds whose metadata.generation tracks spec changes (pods, configmaps and namespaces have none). */
export const NO_GENERATION = new Set([
  "pods",
  "configmaps",
  "namespaces",
  "nodes",
  "serviceaccounts",
  "rolebindings",
  "events",
]);

export function apiVersionOf(res: ResourceInfo): string {
  return res.group ? `${res.group}/${res.version}` : res.version;
}

/** The URL prefix of a kind's group version: /api/v1 or /apis/<group>/<version>. */
export function basePathOf(res: ResourceInfo): string {
  return res.group ? `/apis/${res.group}/${res.version}` : `/api/${res.version}`;
}

export class ResourceRegistry {
  readonly all: ResourceInfo[] = [];

  constructor(extra: readonly ResourceInfo[] = []) {
    for (const r of BUILTIN_RESOURCES) this.register(r);
    for (const r of extra) this.register(r);
  }

  /** Adds a kind, or replaces the one with the same group, version and plural. */
  register(resource: ResourceInfo): void {
    const info: ResourceInfo = { statusSubresource: true, custom: true, ...resource };
    const at = this.all.findIndex(
      (r) => r.group === info.group && r.version === info.version && r.plural === info.plural,
    );
    if (at >= 0) this.all[at] = info;
    else this.all.push(info);
  }

  /** By Kind ("Pod") or resource name ("pods"), optionally narrowed by apiVersion; throws when unknown. */
  resolve(kind: string, apiVersion?: string): ResourceInfo {
    const first = this.all.find(
      (r) =>
        (r.kind === kind || r.plural === kind) &&
        (apiVersion === undefined || apiVersionOf(r) === apiVersion),
    );
    if (!first) throw new Error(`fake-apiserver: unknown kind ${apiVersion ?? ""} ${kind}`);
    return first;
  }

  /** By the URL's group, version and resource name. */
  find(group: string, version: string, plural: string | undefined): ResourceInfo | undefined {
    return this.all.find((r) => r.group === group && r.version === version && r.plural === plural);
  }

  namespaces(): ResourceInfo {
    return this.resolve("Namespace", "v1");
  }

  pods(): ResourceInfo {
    return this.resolve("Pod", "v1");
  }
}
