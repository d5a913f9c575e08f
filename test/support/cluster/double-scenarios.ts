// The deletion paths the API double (functions/local-apiserver/) models, run on it the way the real-cluster
// scenarios run them, with the same users; what it sends to a DELETE webhook is reduced to the same rows, so
// a test can hold the double to what the real API server was measured to send.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { startFakeApiServer } from "../../../functions/local-apiserver/server.js";
import { ADMIN_USER, KWOK_USER } from "../../../functions/local-cluster/control-plane.js";
import type { AdmissionReview } from "../../../shared/admission/review.js";
import { DEFAULT_DRIVER_USERS } from "../../../shared/base/identities.js";
import { type DeleteReviewRow, deleteReviewRow } from "./reviews.js";

const NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller";
const DRIVER = DEFAULT_DRIVER_USERS[0] as string;
const NAMESPACE = "virtual-deletions";
const DOOMED = "virtual-doomed";

/** The roles of the teardown controllers, whose first-phase reviews the real server's conditions filter. */
const TEARDOWN_ROLES: ReadonlySet<string> = new Set(["namespace-controller", "generic-garbage-collector"]);

/** The same roles the real-cluster rows use. */
export const DOUBLE_ROLES: Record<string, string> = { [ADMIN_USER]: "admin", [KWOK_USER]: "kwok" };

/** A webhook that records every review and allows it (what the API server sends, nothing else). */
async function recorder(): Promise<{ url: string; reviews: AdmissionReview[]; close(): Promise<void> }> {
  const reviews: AdmissionReview[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const review = JSON.parse(body) as AdmissionReview;
      reviews.push(review);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: review.kind,
          response: { uid: review.request?.uid, allowed: true },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    reviews,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function runningPod(name: string, namespace: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      ownerReferences: [
        {
          apiVersion: "simkube.io/v1",
          kind: "SimulationRoot",
          name: "sk-local-sim-driver-root",
          uid: "root-uid",
        },
      ],
    },
    spec: {
      nodeName: "virtual-node-1",
      terminationGracePeriodSeconds: 30,
      containers: [{ name: "app", image: "registry.example/app:1" }],
    },
    status: { phase: "Running" },
  };
}

type Api = Awaited<ReturnType<typeof startFakeApiServer>>;

interface DoublePath {
  /** The pod's name, as in the real scenario (request.name is compared). */
  pod: string;
  act: (api: Api, name: string) => Promise<unknown>;
}

const PATHS: Record<string, DoublePath> = {
  "graceful delete (user)": {
    pod: "graceful",
    act: async (api, name) => {
      await api.request("DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${name}`, undefined, {
        user: ADMIN_USER,
      });
      await api.finishPodTerminations({ namespace: NAMESPACE, user: KWOK_USER });
    },
  },
  "dry-run delete (user)": {
    pod: "dry-run",
    act: (api, name) =>
      api.request("DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${name}?dryRun=All`, undefined, {
        user: ADMIN_USER,
      }),
  },
  "force delete, grace 0 (user)": {
    pod: "forced",
    act: (api, name) =>
      api.request(
        "DELETE",
        `/api/v1/namespaces/${NAMESPACE}/pods/${name}`,
        { gracePeriodSeconds: 0 },
        { user: ADMIN_USER },
      ),
  },
  "driver's delete": {
    pod: "driver-deleted",
    act: async (api, name) => {
      await api.request("DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${name}`, undefined, {
        user: DRIVER,
      });
      await api.finishPodTerminations({ namespace: NAMESPACE, user: KWOK_USER });
    },
  },
  "namespace deletion (namespace controller)": {
    pod: "in-doomed-namespace",
    act: async (api) => {
      await api.terminateNamespace(DOOMED, { user: ADMIN_USER, controllerUser: NAMESPACE_CONTROLLER });
      await api.finishPodTerminations({ namespace: DOOMED, user: KWOK_USER });
    },
  },
};

export const DOUBLE_PATHS = Object.keys(PATHS);

/** Each modelled path on a fresh double: the DELETE review rows of its one pod. */
export async function measureOnDouble(): Promise<Map<string, DeleteReviewRow[]>> {
  const measured = new Map<string, DeleteReviewRow[]>();
  for (const [path, { pod, act }] of Object.entries(PATHS)) {
    const hook = await recorder();
    const api = await startFakeApiServer({
      namespaces: ["default", NAMESPACE, DOOMED],
      webhooks: [{ url: hook.url, operations: ["DELETE"], resources: ["pods"], failurePolicy: "Ignore" }],
    });
    try {
      const namespace = path.startsWith("namespace") ? DOOMED : NAMESPACE;
      api.store.put(runningPod(pod, namespace) as never);
      await act(api, pod);
      measured.set(
        path,
        hook.reviews.flatMap((r) => (r.request ? [deleteReviewRow(r.request, DOUBLE_ROLES)] : [])),
      );
    } finally {
      await api.close();
      await hook.close();
    }
  }
  return measured;
}

/**
 * The rows two API servers should agree on. Known, explained differences are taken out first:
 * - the double does not evaluate matchConditions, so it sends reviews the real server's conditions filter:
 *   the driver's ("not-driver-deletes"), the teardown controllers' first phase
 *   ("not-teardown-controller-deletes"), and every final-phase review of a pod without DisruptionTarget
 *   ("final-phase-only-when-disrupted": KWOK's final deletes, a user's grace-0 storage delete, the namespace
 *   controller's repeats). Those rows are dropped on both sides;
 * - the real server may review one step twice in a row (a retried update or storage delete); the double
 *   reviews it once. The user's first review may also come again after a later one (seen under CPU load:
 *   admin, kwok, admin, all for the same delete), and under load KWOK may send its graceful delete of a disrupted pod again after its
 *   final grace-0 one, from a cache that had not seen its own delete yet. A review identical to an earlier
 *   one asks the function nothing new, so such repeats are dropped.
 */
export function comparableRows(rows: readonly DeleteReviewRow[]): DeleteReviewRow[] {
  const kept = rows
    .filter((r) => r.user !== "driver")
    .filter((r) => !(TEARDOWN_ROLES.has(r.user) && !r.deletionTimestamp))
    .filter((r) => !r.deletionTimestamp || r.disruptionTarget !== undefined);
  // Dropping every row equal to an earlier one also takes the consecutive repeats.
  return withoutEarlierRepeats(kept);
}

/** Rows equal to an earlier row, not only to the one before, taken out. */
function withoutEarlierRepeats(rows: readonly DeleteReviewRow[]): DeleteReviewRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const key = JSON.stringify(r);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
