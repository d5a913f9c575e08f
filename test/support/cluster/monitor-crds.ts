// The Prometheus Operator's PodMonitor and ServiceMonitor CRDs (controlplane/prometheus-operator/crds.sh takes
// them from the operator's Go module), created on a local cluster and served before this resolves.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import {
  createManifestStream,
  parseManifestStream,
} from "../../../functions/local-cluster/knative/apply-yaml.js";
import { ROOT } from "../helm.js";
import { clientsFor, eventually } from "./kube.js";

const CRD_FILES = ["monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_servicemonitors.yaml"];

function monitorCrdDir(): string {
  const script = path.join(ROOT, "controlplane/prometheus-operator/crds.sh");
  const run = spawnSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const dir = run.stdout.trim().split("\n").at(-1);
  if (run.status !== 0 || !dir)
    throw new Error(`controlplane/prometheus-operator/crds.sh failed (exit ${run.status})`);
  return dir;
}

/** Creates both CRDs and waits until the API server serves PodMonitors and ServiceMonitors. */
export async function installMonitorCrds(c: LocalCluster, namespace: string): Promise<void> {
  const dir = monitorCrdDir();
  const objects = CRD_FILES.flatMap((file) =>
    parseManifestStream(readFileSync(path.join(dir, file), "utf8")),
  );
  await createManifestStream(c.admin, objects);
  const { custom } = clientsFor(c.kubeconfig);
  for (const plural of ["podmonitors", "servicemonitors"]) {
    await eventually(`${plural} served`, async () => {
      await custom.listNamespacedCustomObject({
        group: "monitoring.coreos.com",
        version: "v1",
        namespace,
        plural,
      });
      return true;
    });
  }
}
