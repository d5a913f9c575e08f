// The cluster a `replay --cluster local` drives: one it starts (functions/local-cluster/) or a running
// `cluster up` reached with the driver's kubeconfig. Either way: a client acting as SimKube's driver, the
// Simulation and its SimulationRoot, and reschedule-delete's counters (GET /stats).

import { readFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "../../../shared/kube/index.js";
import { driverRootName } from "../../../shared/simulation/index.js";
import { resolveControlPlane } from "../../local-cluster/binaries.js";
import { startLocalCluster } from "../../local-cluster/cluster.js";
import type { RecordedReview } from "../../local-cluster/functions.js";
import { createRestClient, type RestClient } from "../../local-cluster/rest.js";

export interface RescheduleCounters {
  reviews: number;
  clonesCreated: number;
}

export interface ReplayCluster {
  /** Requests as SimKube's driver (its service account: DRIVER_USERS applies). */
  driver: RestClient;
  /** The simulation's name and virtual namespace prefix, from its Simulation. */
  simulation: KubeObject;
  root: KubeObject;
  counters(): Promise<RescheduleCounters>;
  /** Reviews with their latency, when this process serves the functions (else undefined). */
  reviews?: readonly (RecordedReview & { ms?: number })[];
  stop(): Promise<void>;
}

export interface ConnectOptions {
  kubeconfig?: string;
  tracePath: string;
  searchFrom: string[];
  binDir?: string;
}

function countersOf(stats: Record<string, unknown>): RescheduleCounters {
  const clones = (stats.clones ?? {}) as { created?: number };
  return { reviews: Number(stats.reviews ?? 0), clonesCreated: Number(clones.created ?? 0) };
}

export async function startReplayCluster(o: ConnectOptions): Promise<ReplayCluster> {
  if (o.kubeconfig) return connectToRunning(o.kubeconfig);
  const binaries = await resolveControlPlane({
    searchFrom: o.searchFrom,
    ...(o.binDir ? { binDir: o.binDir } : {}),
  });
  const cluster = await startLocalCluster({
    binaries,
    reschedule: true,
    tracePath: o.tracePath,
    recordReviews: true,
    logLevel: "warn",
  });
  const driver = await restClientFromKubeconfig(cluster.driverKubeconfig);
  return {
    driver,
    simulation: cluster.simulation,
    root: cluster.root,
    counters: async () => countersOf(cluster.functions["reschedule-delete"].stats()),
    reviews: cluster.reviews,
    stop: () => cluster.stop(),
  };
}

export async function restClientFromKubeconfig(file: string): Promise<RestClient> {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new Error(
      `could not read kubeconfig ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  if (!cluster || !token)
    throw new Error(`${file}: needs a current cluster and a bearer token (cluster up's driverKubeconfig)`);
  const ca = cluster.caFile
    ? await readFile(cluster.caFile, "utf8")
    : Buffer.from(cluster.caData ?? "", "base64").toString("utf8");
  return createRestClient(cluster.server, ca, token);
}

/** A running `cluster up`: its one Simulation, its root, and reschedule-delete's /stats at its webhook URL. */
async function connectToRunning(kubeconfig: string): Promise<ReplayCluster> {
  const driver = await restClientFromKubeconfig(kubeconfig);
  const sims = await driver.request<{ items: KubeObject[] }>("GET", "/apis/simkube.io/v1/simulations");
  const simulation = sims.items[0];
  if (!simulation) throw new Error("the cluster has no Simulation (start it with `simkube-fn cluster up`)");
  const root = await driver.request<KubeObject>(
    "GET",
    `/apis/simkube.io/v1/simulationroots/${driverRootName(simulation.metadata?.name ?? "")}`,
  );
  const statsUrl = await rescheduleStatsUrl(driver);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const caFile = kc.getCurrentCluster()?.caFile;
  const ca = caFile ? await readFile(caFile, "utf8") : undefined;
  const client = await webhookClientBeside(kubeconfig);
  return {
    driver,
    simulation,
    root,
    counters: async () => countersOf(await getJson(statsUrl, { ...(ca ? { ca } : {}), ...client })),
    stop: async () => {},
  };
}

async function rescheduleStatsUrl(api: RestClient): Promise<string> {
  type Config = { webhooks?: { rules?: { operations?: string[] }[]; clientConfig?: { url?: string } }[] };
  const list = await api.request<{ items: Config[] }>(
    "GET",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
  );
  for (const config of list.items)
    for (const hook of config.webhooks ?? [])
      if (hook.clientConfig?.url && hook.rules?.some((r) => r.operations?.includes("DELETE")))
        return statsUrlOf(hook.clientConfig.url);
  throw new Error("no DELETE webhook with a URL: cannot read reschedule-delete's /stats");
}

/** /stats is guarded as reviews are: under the webhook URL's path (its secret), the query dropped. */
export function statsUrlOf(webhookUrl: string): string {
  const url = new URL(webhookUrl);
  url.search = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/stats`;
  return url.toString();
}

/**
 * The API server's webhook client certificate of a production-mode `cluster up` (its files sit beside the
 * driver's kubeconfig in the run's directory): /stats asks for it as reviews do. None under --insecure-dev.
 */
async function webhookClientBeside(kubeconfig: string): Promise<{ cert?: string; key?: string }> {
  const dir = path.dirname(kubeconfig);
  try {
    const cert = await readFile(path.join(dir, "webhook-client.crt"), "utf8");
    const key = await readFile(path.join(dir, "webhook-client.key"), "utf8");
    return { cert, key };
  } catch {
    return {};
  }
}

interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
}

function getJson(url: string, tls: TlsOptions): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ...tls, timeout: 5_000 }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          try {
            resolve(JSON.parse(text) as Record<string, unknown>);
          } catch (err) {
            reject(err);
          }
        });
      })
      .on("error", reject);
  });
}
