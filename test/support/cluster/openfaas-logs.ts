// What to read after a failure through OpenFaaS: the logs of the gateway pod's containers (the gateway,
// faas-netes), of every function pod (of-watchdog and the handler write to the same stream), including each
// container's previous run after a restart, and the API server's log, copied out of the cluster's directory
// (which its stop removes) into a fresh directory that stays.

import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { clientsFor } from "./kube.js";

interface PodContainers {
  metadata: { name: string };
  spec: { containers: { name: string }[] };
  status?: { containerStatuses?: { name: string; restartCount?: number }[] };
}

/** One pod's containers' logs, each to <pod>.<container>.log (and .previous.log after a restart). */
async function podLogs(cluster: LocalCluster, namespace: string, dir: string): Promise<string[]> {
  const core = clientsFor(cluster.kubeconfig).core;
  const pods = await cluster.admin.request<{ items: PodContainers[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods`,
  );
  const written: string[] = [];
  for (const pod of pods.items) {
    for (const { name: container } of pod.spec.containers) {
      const restarts = pod.status?.containerStatuses?.find((s) => s.name === container)?.restartCount ?? 0;
      for (const previous of restarts > 0 ? [false, true] : [false]) {
        const file = `${namespace}.${pod.metadata.name}.${container}${previous ? ".previous" : ""}.log`;
        const text = await core
          .readNamespacedPodLog({ name: pod.metadata.name, namespace, container, previous, timestamps: true })
          .catch((err: Error) => `(log not read: ${err.message})\n`);
        await writeFile(path.join(dir, file), text);
        written.push(file);
      }
    }
  }
  return written;
}

/**
 * Keeps the OpenFaaS pods' logs and the API server's log in a new directory under the system's temporary
 * directory and returns its path; `why` goes into a README there. Never throws: a failure to read a log is
 * written in its place.
 */
export async function keepOpenfaasLogs(cluster: LocalCluster, why: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-openfaas-logs-"));
  const files: string[] = [];
  for (const namespace of [cluster.openfaas?.namespace, cluster.openfaas?.functionNamespace]) {
    if (!namespace) continue;
    files.push(
      ...(await podLogs(cluster, namespace, dir).catch((err: Error) => [`${namespace}: ${err.message}`])),
    );
  }
  await copyFile(path.join(cluster.logDir, "kube-apiserver.log"), path.join(dir, "kube-apiserver.log")).catch(
    () => undefined,
  );
  await writeFile(
    path.join(dir, "README"),
    `${new Date().toISOString()}: ${why}\n\n${files.join("\n")}\nkube-apiserver.log\n`,
  );
  return dir;
}
