// Listing pods every POLL_MS to see when one appeared, was bound to a node, got its IP and was Ready: the only
// sub-second view of a pod's progress the API gives (its conditions' times are whole seconds).

import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import type { PodSighting } from "./pod-start-pieces.js";

export const POLL_MS = 20;

interface ListedPod {
  metadata: { name: string };
  spec?: { nodeName?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Notes what the first pod of one listing shows, each thing when first seen. */
function note(seen: PodSighting, pod: ListedPod, now: number): void {
  seen.name ??= pod.metadata.name;
  seen.createdAt ??= now;
  if (pod.spec?.nodeName) seen.scheduledAt ??= now;
  if (pod.status?.podIP) {
    seen.ip = pod.status.podIP;
    seen.ipAt ??= now;
  }
  if (pod.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True")) seen.readyAt ??= now;
}

/** Lists `listPath` (a pod list URL with its selector) every POLL_MS until stopped. */
export function watchPods(c: LocalCluster, listPath: string) {
  const seen: PodSighting = {};
  let stopped = false;
  const poll = async () => {
    while (!stopped) {
      const list = await c.admin.request<{ items: ListedPod[] }>("GET", listPath);
      const [pod] = list.items;
      if (pod) note(seen, pod, Date.now());
      await sleep(POLL_MS);
    }
  };
  const done = poll();
  return {
    seen,
    /** Stops once the pod was seen Ready, or after `graceMs`. */
    async stop(graceMs: number): Promise<PodSighting> {
      const deadline = Date.now() + graceMs;
      while (seen.readyAt === undefined && Date.now() < deadline) await sleep(POLL_MS);
      stopped = true;
      await done;
      return seen;
    },
  };
}
