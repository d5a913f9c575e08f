// The floor under any pod's start on the real node: a pod whose one container is the node's own pause image
// (nothing to load, nothing to probe), created straight through the API server (no Knative, no webhook), taken
// apart as mutate-create's pod is. Two kinds: with the service-account token volume every pod gets by default
// (and mutate-create's has: it reads the API), and without any volume (the kubelet then waits for none).

import { readFile } from "node:fs/promises";
import path from "node:path";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { PAUSE_IMAGE } from "../../functions/local-cluster/real-node/pause-image.js";
import { placedOnRealNode } from "../../functions/local-cluster/real-node/placement.js";
import { eventually } from "../support/cluster/kube.js";
import { podStartFromLog } from "./pod-start-log.js";
import { type StartPieces, startPieces } from "./pod-start-pieces.js";
import { watchPods } from "./pod-watch.js";

export const FLOOR_NAMESPACE = "cold-floor";
export const FLOOR_KINDS = ["token volume", "no volume"] as const;
export type FloorKind = (typeof FLOOR_KINDS)[number];

export interface FloorStart extends StartPieces {
  /** From the create sent until the container ran (containerd's StartContainer returned). */
  runningMs?: number;
  /** From the create sent until the pod was listed Ready. */
  readyMs?: number;
}

/** The namespace, placed on the real node, and its default ServiceAccount. */
export async function createFloorNamespace(c: LocalCluster): Promise<void> {
  const body = placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name: FLOOR_NAMESPACE } });
  await c.admin.request("POST", "/api/v1/namespaces", body);
  await eventually(`ServiceAccount ${FLOOR_NAMESPACE}/default`, async () =>
    c.admin.request("GET", `/api/v1/namespaces/${FLOOR_NAMESPACE}/serviceaccounts/default`),
  );
}

function floorPod(name: string, kind: FloorKind) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      automountServiceAccountToken: kind === "token volume",
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: "pause",
          image: PAUSE_IMAGE,
          imagePullPolicy: "Never",
          // The function's QoS class (Burstable), so the kubelet makes the same cgroups.
          resources: { requests: { cpu: "100m", memory: "32Mi" } },
        },
      ],
    },
  };
}

/** Starts one floor pod, takes its start apart, deletes it and waits until it is gone. */
export async function floorStart(c: LocalCluster, name: string, kind: FloorKind): Promise<FloorStart> {
  const pods = `/api/v1/namespaces/${FLOOR_NAMESPACE}/pods`;
  const watch = watchPods(c, `${pods}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  const t0 = Date.now();
  await c.admin.request("POST", pods, floorPod(name, kind));
  const seen = await watch.stop(15_000);
  const log = podStartFromLog(await readFile(path.join(c.logDir, "containerd.log"), "utf8"), name);
  const started = log?.containers[0]?.started;
  await c.admin.request("DELETE", `${pods}/${name}?gracePeriodSeconds=0`);
  await eventually(
    `floor pod ${name} gone`,
    async () => {
      const list = await c.admin.request<{ items: unknown[] }>(
        "GET",
        `${pods}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
      );
      return list.items.length === 0;
    },
    60_000,
  );
  return {
    ...startPieces(seen, log),
    ...(started === undefined ? {} : { runningMs: started - t0 }),
    ...(seen.readyAt === undefined ? {} : { readyMs: seen.readyAt - t0 }),
  };
}
