// The objects the cluster's API holds before the functions take reviews: SimKube's CRDs, KWOK and its virtual
// nodes, the Simulation with its root and first virtual namespace, and the webhook configuration.

import path from "node:path";
import type { KubeObject } from "../../shared/kube/index.js";
import { clusterAdminBinding } from "./cluster-accounts.js";
import {
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  buildVirtualNode,
  collectionPath,
  simkubeCrds,
} from "./cluster-objects.js";
import { FUNCTIONS_NAMESPACE, type LocalClusterOptions, type Setup } from "./cluster-types.js";
import { KWOK_USER } from "./control-plane.js";
import type { LocalFunction } from "./functions.js";
import { startKwok } from "./kwok.js";
import type { ManagedProcess } from "./processes.js";
import { waitUntil } from "./readiness.js";
import type { RestClient } from "./rest.js";

const NODE_COUNT = 3;

export async function applyCrds(admin: RestClient): Promise<void> {
  for (const crd of simkubeCrds())
    await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  for (const crd of simkubeCrds()) {
    const name = (crd.metadata as { name: string }).name;
    await waitUntil(
      `CRD ${name} established`,
      async () => {
        const got = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        );
        return Boolean(got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True"));
      },
      { timeoutMs: 30_000 },
    );
  }
}

/** POST, retried while the API is still catching up (a CRD's first objects, a namespace's first pods). */
async function createRetrying(admin: RestClient, object: KubeObject): Promise<KubeObject> {
  let created: KubeObject | undefined;
  await waitUntil(
    `${object.kind} ${object.metadata?.name} created`,
    async () => {
      created = await admin.request<KubeObject>("POST", collectionPath(object), object);
      return true;
    },
    { timeoutMs: 30_000 },
  );
  return created as KubeObject;
}

/** Gives KWOK cluster-admin, starts it, and waits for its virtual nodes to be Ready. */
export async function startKwokNodes(
  admin: RestClient,
  options: LocalClusterOptions,
  kwokKubeconfig: string,
  dir: string,
  processes: ManagedProcess[],
): Promise<string[]> {
  await clusterAdminBinding(admin, KWOK_USER, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "User",
    name: KWOK_USER,
  });
  const kwok = startKwok(options.binaries, kwokKubeconfig, path.join(dir, "logs"));
  processes.push(kwok);
  return createNodes(admin, kwok);
}

async function createNodes(admin: RestClient, kwok: ManagedProcess): Promise<string[]> {
  const names = Array.from({ length: NODE_COUNT }, (_, i) => `virtual-node-${i + 1}`);
  for (const name of names) await admin.ensure("/api/v1/nodes", buildVirtualNode(name));
  for (const name of names) {
    await waitUntil(
      `node ${name} Ready (KWOK)`,
      async () => {
        const node = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/api/v1/nodes/${name}`,
        );
        return Boolean(node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      },
      { timeoutMs: 60_000, process: kwok },
    );
  }
  return names;
}

export async function createSimulation(
  s: Setup,
  o: LocalClusterOptions,
): Promise<{ simulation: KubeObject; root: KubeObject }> {
  const simulation = await createRetrying(
    s.admin,
    buildSimulation({
      name: s.simName,
      reschedule: o.reschedule ?? false,
      virtualNsPrefix: s.prefix,
      driverNamespace: FUNCTIONS_NAMESPACE,
      ...(o.tracePath ? { tracePath: o.tracePath } : {}),
    }),
  );
  const root = await createRetrying(s.admin, buildSimulationRoot(simulation));
  // SimKube's driver makes one virtual namespace per traced namespace; `<prefix>-default` is ready to use.
  await s.admin.ensure("/api/v1/namespaces", buildVirtualNamespace(`${s.prefix}-default`, root, s.simName));
  return { simulation, root };
}

/** The MutatingWebhookConfiguration from the project's builders, then a dry-run create until it is live. */
export async function registerWebhooks(s: Setup, config: object, mutateCreate: LocalFunction): Promise<void> {
  await s.admin.request(
    "POST",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    config,
  );
  const namespace = `${s.prefix}-default`;
  await waitUntil(
    `ServiceAccount ${namespace}/default`,
    async () => {
      await s.admin.request("GET", `/api/v1/namespaces/${namespace}/serviceaccounts/default`);
      return true;
    },
    { timeoutMs: 60_000 },
  );
  const probe = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "webhook-probe" },
    spec: { containers: [{ name: "c", image: "probe" }] },
  };
  const before = mutateCreate.reviewsSeen();
  await waitUntil(
    "the webhook configuration to reach mutate-create",
    async () => {
      await s.admin.request("POST", `/api/v1/namespaces/${namespace}/pods?dryRun=All`, probe);
      return mutateCreate.reviewsSeen() > before;
    },
    { timeoutMs: 30_000 },
  );
}
