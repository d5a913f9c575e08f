// The tests' hands on the real cluster: @kubernetes/client-node clients for an identity (admin, the driver,
// a function's account), polling, and the pods the scenarios start from.

import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1Pod,
} from "@kubernetes/client-node";
import {
  buildVirtualNamespace,
  collectionPath,
  objectPath,
  ownerRefTo,
} from "../../../functions/local-cluster/cluster-objects.js";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import type { KubeObject } from "../../../shared/kube/api.js";

export interface Clients {
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  custom: CustomObjectsApi;
  admission: AdmissionregistrationV1Api;
}

export function clientsFor(kubeconfig: string): Clients {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    admission: kc.makeApiClient(AdmissionregistrationV1Api),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a value (not undefined/false); fails naming `what`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await sleep(200);
  }
}

/** Deletes the object if it is there, then creates it as given (cluster-admin). */
export async function replaceObject(c: LocalCluster, object: object): Promise<void> {
  await c.admin.remove(objectPath(object as KubeObject));
  await c.admin.request("POST", collectionPath(object as KubeObject), object);
}

export function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

export async function readPod(core: CoreV1Api, namespace: string, name: string): Promise<V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function waitPodPhase(
  core: CoreV1Api,
  namespace: string,
  name: string,
  phase: string,
  timeoutMs = 30_000,
): Promise<V1Pod> {
  return eventually(
    `pod ${namespace}/${name} ${phase}`,
    async () => {
      const pod = await readPod(core, namespace, name);
      return pod?.status?.phase === phase ? pod : undefined;
    },
    timeoutMs,
  );
}

export function waitPodGone(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<true> {
  return eventually(
    `pod ${namespace}/${name} gone`,
    async () => (await readPod(core, namespace, name)) === undefined,
    timeoutMs,
  );
}

/** A virtual namespace as SimKube's driver makes it, and its default ServiceAccount (pods need it). */
export async function createVirtualNamespace(
  cluster: LocalCluster,
  core: CoreV1Api,
  name: string,
): Promise<void> {
  await core.createNamespace({ body: buildVirtualNamespace(name, cluster.root, cluster.simName) as never });
  await eventually(`ServiceAccount ${name}/default`, async () =>
    core.readNamespacedServiceAccount({ name: "default", namespace: name }),
  );
}

export interface BarePodOptions {
  nodeName?: string;
  annotations?: Record<string, string>;
  /** Owner: the SimulationRoot given (default: the driver's). */
  root?: LocalCluster["root"];
}

/** A bare simulation pod as the driver creates it: owned by the SimulationRoot, nothing else. */
export function barePod(cluster: LocalCluster, name: string, options: BarePodOptions = {}): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      ownerReferences: [ownerRefTo(options.root ?? cluster.root)],
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      containers: [{ name: "app", image: "registry.example/app:1" }],
      terminationGracePeriodSeconds: 30,
      ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    },
  };
}

/** Creates the pod and waits until KWOK runs it. */
export async function runningBarePod(
  cluster: LocalCluster,
  core: CoreV1Api,
  namespace: string,
  name: string,
  options: BarePodOptions = {},
): Promise<V1Pod> {
  await core.createNamespacedPod({ namespace, body: barePod(cluster, name, options) });
  return waitPodPhase(core, namespace, name, "Running");
}

export async function podNames(core: CoreV1Api, namespace: string): Promise<string[]> {
  const list = await core.listNamespacedPod({ namespace });
  return list.items.map((p) => p.metadata?.name ?? "").sort();
}

export async function clonesOf(core: CoreV1Api, namespace: string, name: string): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace });
  return list.items.filter((p) => p.metadata?.name?.startsWith(`${name}-clone-`));
}
