// A trace loading on a function pod: the trace served over HTTP from the host's end of the real node's veth
// (inside the cluster's own 198.18.0.0/15 addresses), a second Simulation that names it, and a second
// mutate-create deployment as `manifests --platform kubernetes` renders one serving every Simulation (no
// SIM_NAME, no TRACE_PATH, the trace's location allowed), so that a trace is loaded while reviews arrive, the
// case the rendered memory limit is sized for (knative/tuning.ts).

import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  collectionPath,
  objectPath,
} from "../../../functions/local-cluster/cluster-objects.js";
import { FUNCTIONS_NAMESPACE, type LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { waitUntil } from "../../../functions/local-cluster/readiness.js";
import { buildAllManifests, type Manifest } from "../../../knative/manifests.js";
import type { DeploymentOptions } from "../../../knative/options.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { createTlsSecrets, placeOnRealNode, podDeploymentOptions } from "./function-pods.js";

export interface ServedTrace {
  url: string;
  /** Full answers (200) sent so far: each is one load of the trace. */
  loads(): number;
  /** A new ETag: the next conditional GET gets the body again, as for a trace replaced in place. */
  replace(): void;
  close(): Promise<void>;
}

/** Serves `bytes` at http://<address>:<port>/trace.sktrace with an ETag, answering 304 while it matches. */
export async function serveTrace(bytes: Uint8Array, address: string): Promise<ServedTrace> {
  let version = 1;
  let loads = 0;
  const server = http.createServer((req, res) => {
    const etag = `"v${version}"`;
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, { etag }).end();
      return;
    }
    loads += 1;
    res.writeHead(200, {
      etag,
      "content-length": bytes.byteLength,
      "content-type": "application/octet-stream",
    });
    res.end(bytes);
  });
  server.listen(0, address);
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}/trace.sktrace`,
    loads: () => loads,
    replace: () => {
      version += 1;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const TRACE_SIM = "trace-load";
export const TRACE_NAMESPACE = "traceload-default";

function traceSimulation(tracePath?: string): KubeObject {
  return buildSimulation({
    name: TRACE_SIM,
    reschedule: false,
    virtualNsPrefix: "traceload",
    driverNamespace: FUNCTIONS_NAMESPACE,
    ...(tracePath ? { tracePath } : {}),
  });
}

/** The second Simulation (its spec.driver.tracePath the served trace), its root and its virtual namespace. */
export async function createTraceSimulation(c: LocalCluster, tracePath: string): Promise<KubeObject> {
  const body = traceSimulation(tracePath);
  const sim = await c.admin.request<KubeObject>("POST", collectionPath(body), body);
  const root = buildSimulationRoot(sim);
  const createdRoot = await c.admin.request<KubeObject>("POST", collectionPath(root), root);
  await c.admin.ensure("/api/v1/namespaces", buildVirtualNamespace(TRACE_NAMESPACE, createdRoot, TRACE_SIM));
  return createdRoot;
}

/** The namespace, then the Simulation (its root goes with it, by garbage collection). */
export async function deleteTraceSimulation(c: LocalCluster): Promise<void> {
  await c.admin.remove(`/api/v1/namespaces/${TRACE_NAMESPACE}`);
  await c.admin.remove(objectPath(traceSimulation()));
}

/** The name of the second deployment: its own accounts, Services, Deployments and labels. */
export const TRACE_INSTANCE = "trace-load";

/**
 * The second deployment's options: the cluster's, for every Simulation, the served trace allowed, one replica.
 * The only setting outside `manifests`: TRACE_RECHECK_SECONDS 1 (default 30), so the test need not wait
 * half a minute for the replaced trace to be noticed.
 */
export function traceDeploymentOptions(c: LocalCluster, tracePath: string): DeploymentOptions {
  const { simName: _simName, ...base } = podDeploymentOptions(c);
  return {
    ...base,
    name: TRACE_INSTANCE,
    webhookConfiguration: false,
    traceAllowedLocations: [tracePath],
    tuning: { "mutate-create": { minScale: 1 } },
  };
}

function withRecheckSecond(object: Manifest): Manifest {
  if (object.kind !== "Deployment") return object;
  const d = structuredClone(object) as Manifest & {
    spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  };
  for (const container of d.spec.template.spec.containers)
    container.env = [...(container.env ?? []), { name: "TRACE_RECHECK_SECONDS", value: "1" }];
  return d;
}

export interface TraceDeployment {
  objects: Manifest[];
  remove(): Promise<void>;
}

/** Applies the second deployment (no webhook configuration: only the test posts to it) and waits until Ready. */
export async function deployTraceLoadingFunctions(
  c: LocalCluster,
  options: DeploymentOptions,
): Promise<TraceDeployment> {
  await createTlsSecrets(c, options);
  const objects = buildAllManifests(options)
    .filter((o) => o.kind !== "MutatingWebhookConfiguration")
    .map(placeOnRealNode)
    .map(withRecheckSecond);
  const remove = async () => {
    for (const object of [...objects].reverse()) await c.admin.remove(objectPath(object as KubeObject));
  };
  try {
    for (const object of objects) await c.admin.ensure(collectionPath(object as KubeObject), object);
    for (const d of objects.filter((o) => o.kind === "Deployment")) {
      await waitUntil(
        `Deployment ${d.metadata?.name} Ready`,
        async () => {
          const got = await c.admin.request<{
            status?: { readyReplicas?: number };
            spec?: { replicas?: number };
          }>("GET", objectPath(d as KubeObject));
          return (got.status?.readyReplicas ?? 0) === got.spec?.replicas;
        },
        { timeoutMs: 120_000 },
      );
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return { objects, remove };
}
