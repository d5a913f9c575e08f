// What every real-cluster scenario shares: the cluster, client-node clients for the admin and the driver,
// the roles that name users in review rows, and the table of measured deletion paths (the table in docs/functions.md).

import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { ADMIN_USER, KWOK_USER } from "../../../functions/local-cluster/control-plane.js";
import type { AdmissionRequest } from "../../../shared/admission/review.js";
import type { FunctionName } from "../../../shared/base/function-names.js";
import { type Clients, clientsFor } from "./kube.js";
import type { DeleteReviewRow } from "./reviews.js";
import type { ClusterSuite } from "./suite.js";

export interface MeasuredPath {
  path: string;
  rows: DeleteReviewRow[];
  clones: number;
  /** pods/status UPDATE reviews mutate-create saw from controllers during the deletion. */
  statusUpdates: string[];
  ms: number;
}

export interface World {
  cluster: LocalCluster;
  admin: Clients;
  driver: Clients;
  roles: Record<string, string>;
  measured: MeasuredPath[];
}

export function createWorld(cluster: LocalCluster): World {
  return {
    cluster,
    admin: clientsFor(cluster.kubeconfig),
    driver: clientsFor(cluster.driverKubeconfig),
    roles: { [ADMIN_USER]: "admin", [KWOK_USER]: "kwok" },
    measured: [],
  };
}

/** The requests one function was sent, from index `from` of the cluster's review log on. */
export function requestsTo(world: World, fn: FunctionName, from = 0): AdmissionRequest[] {
  return world.cluster.reviews
    .slice(from)
    .filter((r) => r.function === fn)
    .map((r) => r.request);
}

/** Lazily set once the file's cluster is up; scenario modules read it when their tests run. */
export interface WorldRef {
  get(): World;
}

/** A WorldRef for a test file's suite: the world is made on first use; `made()` is it, if it was. */
export function lazyWorldRef(suite: ClusterSuite): WorldRef & { made(): World | undefined } {
  let world: World | undefined;
  return {
    get() {
      if (!("cluster" in suite)) throw new Error("no cluster");
      world ??= createWorld(suite.cluster);
      return world;
    },
    made: () => world,
  };
}
