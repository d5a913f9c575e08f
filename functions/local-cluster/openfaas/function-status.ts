// Why a function faas-netes deployed does not come up: its pods (label faas_function=<name>, faas-netes'
// own) and their Warning events, read through the API server. A wait for a function is bounded, fails at
// once when a pod can never start (its image missing or refused, its container config invalid), and
// otherwise ends at its deadline with each pod's state and the last probe failure in the message.

import type { RestClient } from "../rest.js";

/** Container waiting reasons that no amount of waiting fixes. */
const FATAL_REASONS = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "ErrImageNeverPull",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "CrashLoopBackOff",
]);

interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; running?: unknown };
  lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string } };
}

export interface FunctionPod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    containerStatuses?: ContainerStatus[];
    conditions?: { type: string; status: string }[];
  };
}

interface PodEvent {
  involvedObject: { name: string };
  reason?: string;
  message?: string;
  type?: string;
}

/** One line per pod: phase, readiness, and each container's waiting reason or last termination. */
export function describePod(pod: FunctionPod): string {
  const s = pod.status ?? {};
  const parts = (s.containerStatuses ?? []).map((c) => {
    const waiting = c.state?.waiting;
    const last = c.lastState?.terminated;
    const state = waiting
      ? `waiting ${waiting.reason ?? "?"}${waiting.message ? ` (${waiting.message.slice(0, 200)})` : ""}`
      : c.ready
        ? "ready"
        : "running, not ready";
    const restarts = c.restartCount ? `, ${c.restartCount} restarts` : "";
    const ended = last ? `, last exit ${last.exitCode} ${last.reason ?? ""}`.trimEnd() : "";
    return `${c.name}: ${state}${restarts}${ended}`;
  });
  return `pod ${pod.metadata.name} ${s.phase ?? "Pending"}${parts.length ? `: ${parts.join("; ")}` : ""}`;
}

/** The first pod state that can never become ready, described; undefined when none. */
export function fatalPodState(pods: FunctionPod[]): string | undefined {
  for (const pod of pods) {
    for (const c of pod.status?.containerStatuses ?? []) {
      const reason = c.state?.waiting?.reason;
      if (reason && FATAL_REASONS.has(reason)) return describePod(pod);
    }
  }
  return undefined;
}

export async function functionPods(
  admin: RestClient,
  namespace: string,
  name: string,
): Promise<FunctionPod[]> {
  const list = await admin.request<{ items: FunctionPod[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`faas_function=${name}`)}`,
  );
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

/** The newest Warning event of the pods (a failing probe, a refused pull), as "reason: message". */
export async function lastWarning(
  admin: RestClient,
  namespace: string,
  pods: FunctionPod[],
): Promise<string | undefined> {
  const names = new Set(pods.map((p) => p.metadata.name));
  const events = await admin.request<{ items: PodEvent[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=type%3DWarning`,
  );
  const mine = events.items.filter((e) => names.has(e.involvedObject.name));
  const last = mine.at(-1);
  return last ? `${last.reason}: ${last.message?.trim().slice(0, 300)}` : undefined;
}

export class FunctionStartError extends Error {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Until `name` has a ready pod in `namespace`. Throws FunctionStartError at once when a pod cannot start, or
 * after `timeoutMs` naming each pod's state and the last Warning event (a failing readiness probe says so).
 */
export async function waitForFunctionPods(
  admin: RestClient,
  namespace: string,
  name: string,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = await functionPods(admin, namespace, name);
    const ready = pods.some((p) =>
      p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
    if (ready) return;
    const fatal = fatalPodState(pods);
    const expired = Date.now() > deadline;
    if (fatal || expired) {
      const warning = await lastWarning(admin, namespace, pods);
      const states = pods.length > 0 ? pods.map(describePod).join("; ") : "no pod created";
      const why = fatal ? "cannot start" : `not ready after ${timeoutMs} ms`;
      throw new FunctionStartError(
        `OpenFaaS function ${namespace}/${name} ${why}: ${fatal ?? states}${warning ? `; last warning ${warning}` : ""}`,
      );
    }
    await sleep(1000);
  }
}
