// Memory of the function pods on the real node: ~3 MiB CREATE reviews posted straight to a pod (as the API
// server would, with its webhook client certificate and the path secret), the container's cgroup v1 memory
// figures read (never written) from kubelet's cgroupfs hierarchy, and a copy of the rendered mutate-create
// Deployment with a lower memory limit, kept out of the Service so the API server never calls it.

import { type Dirent, readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import type {
  LocalCluster,
  WebhookClientCredentials,
} from "../../../functions/local-cluster/cluster-types.js";
import { MAX_BODY_BYTES } from "../../../functions/runtime/http-server.js";
import type { Manifest } from "../../../knative/manifests.js";
import { TLS_CONTAINER_PORT } from "../../../knative/workloads.js";
import type { AdmissionReview } from "../../../shared/admission/review.js";
import { buildCreateReview } from "../builders.js";
import { type BarePodOptions, barePod } from "./kube.js";

export interface BigReviewOptions {
  /** The SimulationRoot that owns the pod (default: the cluster's). */
  root?: BarePodOptions["root"];
  /** A Running pod needs its lifecycle, so its Simulation's trace. */
  running?: boolean;
}

/** A CREATE review of a simulation pod in `namespace` filled with small env vars to just under the limit. */
export function bigCreateReview(
  c: LocalCluster,
  namespace: string,
  name: string,
  options: BigReviewOptions = {},
): string {
  const pod = barePod(c, name, options.root ? { root: options.root } : {});
  pod.metadata = { ...pod.metadata, namespace };
  if (options.running) pod.status = { phase: "Running" };
  const base = JSON.stringify(buildCreateReview({ pod: pod as never })).length;
  const room = MAX_BODY_BYTES - 4 * 1024 - base;
  const env: { name: string; value: string }[] = [];
  for (let used = 0, n = 0; ; n++) {
    const entry = { name: `VAR_${n}`, value: "v".repeat(60) };
    used += JSON.stringify(entry).length + 1;
    if (used > room) break;
    env.push(entry);
  }
  const container = pod.spec?.containers[0];
  if (container) container.env = env;
  return JSON.stringify(buildCreateReview({ pod: pod as never }));
}

export interface ReviewAnswer {
  /** HTTP status, 0 when the connection failed. */
  status: number;
  allowed?: boolean;
  message?: string;
}

/** POSTs a review to a pod's HTTPS port, with `client` as the client certificate when given. */
export function postToPod(
  podIp: string,
  pathSecret: string | undefined,
  body: string,
  client?: WebhookClientCredentials,
): Promise<ReviewAnswer> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: podIp,
        port: TLS_CONTAINER_PORT,
        path: pathSecret ? `/${pathSecret}` : "/",
        method: "POST",
        agent: false,
        // The pod's serving certificate names its Service, not its IP; who the pod is matters not here.
        rejectUnauthorized: false,
        timeout: 120_000,
        headers: { "content-type": "application/json" },
        ...(client
          ? { cert: readFileSyncCached(client.certFile), key: readFileSyncCached(client.keyFile) }
          : {}),
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          try {
            const parsed = JSON.parse(text) as AdmissionReview & { message?: string };
            const response = parsed.response;
            resolve({
              status,
              ...(response ? { allowed: response.allowed } : {}),
              ...(response?.status?.message || parsed.message
                ? { message: response?.status?.message ?? parsed.message }
                : {}),
            });
          } catch {
            resolve({ status, message: text.slice(0, 200) });
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer in 120 s")));
    req.on("error", (err) => resolve({ status: 0, message: err.message }));
    req.end(body);
  });
}

const files = new Map<string, Buffer>();
function readFileSyncCached(file: string): Buffer {
  let got = files.get(file);
  if (!got) {
    got = readFileSync(file);
    files.set(file, got);
  }
  return got;
}

export interface CgroupMemory {
  dir: string;
  limitBytes: number;
  maxUsageBytes: number;
  usageBytes: number;
  /** Times the limit was hit (memory.failcnt). */
  failcnt: number;
}

const MEMORY_MOUNT = "/sys/fs/cgroup/memory";

async function findDir(root: string, name: string, depth: number): Promise<string | undefined> {
  if (depth < 0) return undefined;
  let entries: Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) if (e.isDirectory() && e.name === name) return path.join(root, e.name);
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const found = await findDir(path.join(root, e.name), name, depth - 1);
    if (found) return found;
  }
  return undefined;
}

/** The container's cgroup v1 memory figures under the real node's root (/simkube-fn-node-<i>/kubepods/...). */
export async function containerMemory(c: LocalCluster, pod: V1Pod): Promise<CgroupMemory> {
  const id = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
  if (!id) throw new Error(`${pod.metadata?.name} has no container ID`);
  const node = c.realNode;
  if (!node) throw new Error("no real node");
  const root = path.join(MEMORY_MOUNT, `simkube-fn-node-${node.namespaces.addresses.index}`);
  const dir = await findDir(root, id, 4);
  if (!dir) throw new Error(`no memory cgroup named ${id} under ${root}`);
  const read = async (file: string) => Number((await readFile(path.join(dir, file), "utf8")).trim());
  return {
    dir,
    limitBytes: await read("memory.limit_in_bytes"),
    maxUsageBytes: await read("memory.max_usage_in_bytes"),
    usageBytes: await read("memory.usage_in_bytes"),
    failcnt: await read("memory.failcnt"),
  };
}

export const LOW_LIMIT_COMPONENT = "mutate-create-low-limit";

/**
 * mutate-create's rendered Deployment, rendered with a lower memory limit (`manifests --memory-limit`), renamed
 * and relabelled so that neither its Service nor the tests' pod lookups select it.
 */
export function lowLimitCopy(rendered: Manifest): Manifest {
  const d = structuredClone(rendered) as Manifest & {
    metadata: { name: string };
    spec: {
      replicas: number;
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
  };
  d.metadata.name = `${d.metadata.name}-low-limit`;
  d.spec.replicas = 1;
  d.spec.selector.matchLabels["app.kubernetes.io/component"] = LOW_LIMIT_COMPONENT;
  d.spec.template.metadata.labels["app.kubernetes.io/component"] = LOW_LIMIT_COMPONENT;
  return d;
}
