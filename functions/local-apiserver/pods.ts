// What the pod registry adds to the generic store (kubernetes/kubernetes pkg/apis/core/v1/defaults.go,
// pkg/registry/core/pod/strategy.go): defaulting, the QoS class, create and update validation, terminal phases.

import { isRecord } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import { clone } from "./objects.js";
import type { Cause } from "./status.js";
import type { ResourceInfo } from "./types.js";

function defaultContainer(c: Record<string, unknown>): void {
  c.terminationMessagePath ??= "/dev/termination-log";
  c.terminationMessagePolicy ??= "File";
  if (c.imagePullPolicy === undefined && typeof c.image === "string") {
    const tagged = /:[^/]+$/.test(c.image) && !c.image.endsWith(":latest");
    c.imagePullPolicy = tagged || c.image.includes("@") ? "IfNotPresent" : "Always";
  }
}

export function defaultPod(pod: KubeObject): void {
  if (!isRecord(pod.spec)) return;
  const spec = pod.spec;
  spec.restartPolicy ??= "Always";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= "ClusterFirst";
  spec.schedulerName ??= "default-scheduler";
  spec.securityContext ??= {};
  for (const list of [spec.containers, spec.initContainers]) {
    if (!Array.isArray(list)) continue;
    for (const c of list) if (isRecord(c)) defaultContainer(c);
  }
}

/** Defaulting of the kinds that have any here (only pods). */
export function applyDefaults(res: ResourceInfo, obj: KubeObject): void {
  if (res.plural === "pods") defaultPod(obj);
}

export function qosClass(pod: KubeObject): string {
  const containers = isRecord(pod.spec) && Array.isArray(pod.spec.containers) ? pod.spec.containers : [];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const r = isRecord(c) && isRecord(c.resources) ? c.resources : {};
    const requests = isRecord(r.requests) ? r.requests : {};
    const limits = isRecord(r.limits) ? r.limits : {};
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const res of ["cpu", "memory"]) {
      const limit = limits[res];
      const request = requests[res] ?? limit;
      if (limit === undefined || String(request) !== String(limit)) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

export function podCreateCauses(pod: KubeObject): Cause[] {
  const spec = pod.spec;
  if (!isRecord(spec)) return [{ reason: "FieldValueRequired", message: "Required value", field: "spec" }];
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    return [{ reason: "FieldValueRequired", message: "Required value", field: "spec.containers" }];
  }
  return [];
}

/** The pod spec without the fields an update may change, to compare old and new. */
function immutablePart(spec: unknown): string {
  const s = isRecord(spec) ? clone(spec) : {};
  for (const key of ["containers", "initContainers", "ephemeralContainers"]) {
    const list = s[key];
    if (Array.isArray(list)) for (const c of list) if (isRecord(c)) delete c.image;
  }
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  delete s.schedulingGates;
  return JSON.stringify(s);
}

/** Pod spec is immutable except images, activeDeadlineSeconds, tolerations (additions) and a few more. */
export function podSpecUpdateCauses(oldPod: KubeObject, newPod: KubeObject): Cause[] {
  if (immutablePart(oldPod.spec) === immutablePart(newPod.spec)) return [];
  return [
    {
      reason: "FieldValueForbidden",
      message:
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
      field: "spec",
    },
  ];
}

export function isTerminalPod(pod: KubeObject): boolean {
  const phase = isRecord(pod.status) ? pod.status.phase : undefined;
  return phase === "Succeeded" || phase === "Failed";
}

/**
 * The grace period a pod DELETE gets: the request's, else the pod's terminationGracePeriodSeconds, else 30;
 * unscheduled and terminal pods get 0 (CheckGracefulDelete, pkg/registry/core/pod/strategy.go).
 */
export function podGracePeriod(pod: KubeObject, requested: unknown): number {
  const spec = isRecord(pod.spec) ? pod.spec : {};
  if (!spec.nodeName || isTerminalPod(pod)) return 0;
  if (typeof requested === "number") return requested;
  return typeof spec.terminationGracePeriodSeconds === "number" ? spec.terminationGracePeriodSeconds : 30;
}
