// What the replay sees of the cluster: every pod of the virtual namespaces, polled, with the traced object it
// belongs to (its owner chain walked up to the object the driver applied), whether mutate-create pinned it,
// its hash and sequence, and when it became Ready and when it Succeeded (KWOK's own status timestamps).

import {
  ORIG_NAMESPACE_ANNOTATION_KEY,
  ORIG_OWNER_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
} from "../../../shared/base/index.js";
import type { KubeObject } from "../../../shared/kube/index.js";
import type { RestClient } from "../../local-cluster/rest.js";
import { type ObservedPod, ownerKey } from "./lifecycle-match.js";

interface OwnerRef {
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

type Pod = KubeObject & {
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: {
      state?: { running?: { startedAt?: string }; terminated?: { startedAt?: string; finishedAt?: string } };
    }[];
  };
};

const CLONE_SUFFIX = /-clone-\d+$/;
const seconds = (iso: string | undefined) => (iso ? Math.round(Date.parse(iso) / 1000) : undefined);

/** The traced object's "Kind <original ns>/<name>": up the controllers until one the root owns. */
export function tracedOwner(
  pod: KubeObject,
  rootUid: string,
  controllers: ReadonlyMap<string, KubeObject>,
): string {
  return traceOwner(pod, rootUid, controllers).owner;
}

/** The controllers poll() lists; the chain from a pod to its traced object goes through these. */
const LISTED_CONTROLLER_KINDS = new Set(["ReplicaSet", "Job"]);

/**
 * tracedOwner, and whether the chain reached the root: when a controller on the way was not among
 * `controllers` (not listed yet, or already deleted), the owner is that controller's, not the traced object's.
 */
function traceOwner(
  pod: KubeObject,
  rootUid: string,
  controllers: ReadonlyMap<string, KubeObject>,
): { owner: string; complete: boolean } {
  const originalNs = pod.metadata?.annotations?.[ORIG_NAMESPACE_ANNOTATION_KEY] ?? "?";
  let current: KubeObject = pod;
  for (let depth = 0; depth < 8; depth++) {
    const refs = (current.metadata?.ownerReferences ?? []) as OwnerRef[];
    if (refs.length === 0 || refs.some((r) => r.uid === rootUid)) break;
    const controller = refs.find((r) => r.controller) ?? refs[0];
    const next = controller ? controllers.get(controller.uid) : undefined;
    if (!next) {
      // Only ReplicaSets and Jobs are listed; another kind (a Deployment, a CronJob) is the traced object.
      if (!controller) return { owner: "?", complete: false };
      const owner = ownerKey(controller.kind, `${originalNs}/${controller.name}`);
      return { owner, complete: !LISTED_CONTROLLER_KINDS.has(controller.kind) };
    }
    current = next;
  }
  if (current === pod) {
    const name = pod.metadata?.annotations?.[ORIG_OWNER_ANNOTATION_KEY] ?? pod.metadata?.name ?? "";
    return { owner: ownerKey("Pod", `${originalNs}/${name.replace(CLONE_SUFFIX, "")}`), complete: true };
  }
  return {
    owner: ownerKey(current.kind ?? "?", `${originalNs}/${current.metadata?.name ?? ""}`),
    complete: true,
  };
}

export function observePod(
  pod: Pod,
  rootUid: string,
  controllers: ReadonlyMap<string, KubeObject>,
  before?: ObservedPod,
): ObservedPod {
  const annotations = pod.metadata?.annotations ?? {};
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
  const state = pod.status?.containerStatuses?.[0]?.state;
  const finished = state?.terminated?.finishedAt;
  const hash = annotations[POD_SPEC_STABLE_HASH_KEY];
  const sequence = annotations[POD_SEQUENCE_NUMBER_KEY];
  // KWOK's complete stage rewrites the Ready condition's time: a finished container's startedAt is the start.
  const runningAt =
    seconds(state?.terminated?.startedAt) ??
    seconds(state?.running?.startedAt) ??
    seconds(ready?.lastTransitionTime);
  const succeededAt = pod.status?.phase === "Succeeded" ? seconds(finished) : undefined;
  const traced = traceOwner(pod, rootUid, controllers);
  return {
    name: pod.metadata?.name ?? "",
    // A chain cut short this time (its Job listed after the pod, or gone) keeps what an earlier poll found.
    owner: traced.complete || before === undefined ? traced.owner : before.owner,
    clone: CLONE_SUFFIX.test(pod.metadata?.name ?? ""),
    mutated: hash !== undefined,
    ...(hash !== undefined ? { hash } : {}),
    ...(sequence !== undefined ? { sequence: Number(sequence) } : {}),
    ...(runningAt !== undefined ? { runningAt } : {}),
    ...(succeededAt !== undefined ? { succeededAt } : {}),
    ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
  };
}

export interface PodObserver {
  /** Every pod seen so far, by uid, latest state (pods stay after they are gone). */
  readonly pods: Map<string, ObservedPod>;
  /** Live pods by uid with their node (interruptions pick from these). */
  readonly live: Map<
    string,
    { namespace: string; name: string; node?: string; bare: boolean; phase?: string }
  >;
  poll(namespaces: readonly string[]): Promise<void>;
}

async function list<T>(api: RestClient, path: string): Promise<T[]> {
  return (await api.request<{ items?: T[] }>("GET", path)).items ?? [];
}

export function createPodObserver(api: RestClient, rootUid: string): PodObserver {
  const pods = new Map<string, ObservedPod>();
  const live: PodObserver["live"] = new Map();
  // Kept across polls: a CronJob's Job may be deleted (its history limit) while its pods are still listed.
  const controllers = new Map<string, KubeObject>();
  return {
    pods,
    live,
    async poll(namespaces) {
      const found: Pod[] = [];
      for (const ns of namespaces) {
        for (const path of [
          `/apis/apps/v1/namespaces/${ns}/replicasets`,
          `/apis/batch/v1/namespaces/${ns}/jobs`,
        ])
          for (const o of await list<KubeObject>(api, path)) controllers.set(o.metadata?.uid ?? "", o);
        found.push(...(await list<Pod>(api, `/api/v1/namespaces/${ns}/pods`)));
      }
      live.clear();
      for (const pod of found) {
        const uid = pod.metadata?.uid ?? "";
        const seen = observePod(pod, rootUid, controllers, pods.get(uid));
        // The first time it was seen running is kept: a later status may carry another time.
        const before = pods.get(uid)?.runningAt;
        if (before !== undefined) seen.runningAt = Math.min(before, seen.runningAt ?? before);
        pods.set(uid, seen);
        const refs = (pod.metadata?.ownerReferences ?? []) as OwnerRef[];
        const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
        live.set(uid, {
          namespace: pod.metadata?.namespace ?? "",
          name: pod.metadata?.name ?? "",
          bare: refs.every((r) => r.uid === rootUid),
          ...(node ? { node } : {}),
          ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
        });
      }
    },
  };
}
