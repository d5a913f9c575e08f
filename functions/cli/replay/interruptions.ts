// What really interrupts a simulated pod, once each, on a node holding a running bare pod: an eviction through
// the eviction API, a NoExecute taint on its node (the taint-eviction controller), and its node's deletion (pod
// garbage collection). reschedule-delete should then clone the pod; each waits for that clone to run.

import type { KubeObject } from "../../../shared/kube/index.js";
import { buildVirtualNode } from "../../local-cluster/cluster-objects.js";
import { waitUntil } from "../../local-cluster/readiness.js";
import type { RestClient } from "../../local-cluster/rest.js";
import type { PodObserver } from "./pod-observer.js";

export const INTERRUPTION_KINDS = ["eviction", "NoExecute taint", "node deletion"] as const;
export type InterruptionKind = (typeof INTERRUPTION_KINDS)[number];

export interface InterruptionResult {
  kind: InterruptionKind;
  pod?: string;
  node?: string;
  /** The clone that replaced the pod, or why there was none. */
  clone?: string;
  note?: string;
}

const TAINT = { key: "simkube-fn.replay/interrupt", value: "now", effect: "NoExecute" };
type Node = KubeObject & { spec?: { taints?: { key: string }[] } };

async function setTaints(api: RestClient, node: string, change: (t: { key: string }[]) => { key: string }[]) {
  const current = await api.request<Node>("GET", `/api/v1/nodes/${node}`);
  current.spec = { ...current.spec, taints: change(current.spec?.taints ?? []) };
  await api.request("PUT", `/api/v1/nodes/${node}`, current);
}

async function act(api: RestClient, kind: InterruptionKind, namespace: string, pod: string, node: string) {
  if (kind === "eviction") {
    await api.request("POST", `/api/v1/namespaces/${namespace}/pods/${pod}/eviction`, {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: pod, namespace },
    });
  } else if (kind === "NoExecute taint") {
    await setTaints(api, node, (taints) => [...taints, TAINT]);
  } else {
    await api.request("DELETE", `/api/v1/nodes/${node}`);
  }
}

/** Puts the node back as it was (untainted, or created again), so the rest of the run has its capacity. */
async function restore(api: RestClient, kind: InterruptionKind, node: string) {
  if (kind === "NoExecute taint") await setTaints(api, node, (t) => t.filter((x) => x.key !== TAINT.key));
  if (kind === "node deletion") {
    await waitUntil(
      `node ${node} deleted`,
      async () => {
        try {
          await api.request("GET", `/api/v1/nodes/${node}`);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 60_000 },
    );
    await api.ensure("/api/v1/nodes", buildVirtualNode(node));
  }
}

/** One interruption on a running bare pod (not one already interrupted); waits up to 3 minutes for its clone. */
export async function interrupt(
  api: RestClient,
  kind: InterruptionKind,
  observer: PodObserver,
  namespaces: readonly string[],
  done: Set<string>,
): Promise<InterruptionResult> {
  const candidate = () =>
    [...observer.live.values()].find((p) => p.bare && p.phase === "Running" && p.node && !done.has(p.name));
  // A pod the last event applied may still be starting: give it up to a minute (if there is a bare pod at all).
  await observer.poll(namespaces);
  const anyBare = [...observer.live.values()].some((p) => p.bare && !done.has(p.name));
  if (!anyBare) return { kind, note: "skipped: the trace has no bare pod left to interrupt" };
  await waitUntil(
    "a running bare pod",
    async () => {
      await observer.poll(namespaces);
      return candidate() !== undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch(() => undefined);
  const target = candidate();
  if (!target?.node)
    return { kind, note: "skipped: no running bare pod on a node at this point of the trace" };
  done.add(target.name);
  const { namespace, name, node } = target;
  await act(api, kind, namespace, name, node);
  let clone: string | undefined;
  try {
    await waitUntil(
      `a running clone of ${name}`,
      async () => {
        await observer.poll(namespaces);
        clone = [...observer.live.values()].find(
          (p) =>
            p.name.startsWith(`${name.replace(/-clone-\d+$/, "")}-clone-`) &&
            !done.has(p.name) &&
            p.phase === "Running",
        )?.name;
        return clone !== undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
  } finally {
    await restore(api, kind, node);
  }
  return { kind, pod: name, node, ...(clone ? { clone } : {}) };
}
