// KWOK (sigs.k8s.io/kwok) as a plain process: it keeps the nodes annotated kwok.x-k8s.io/node=fake Ready
// (status heartbeats and Leases in kube-node-lease) and moves their pods through the Stages in our own
// configuration, which has SimKube's semantics (per-pod delays from simkube.io/kwok-stage-* annotations,
// completion at simkube.io/kwok-stage-complete-time, and the final grace-0 delete once deletionTimestamp is set).

import { existsSync } from "node:fs";
import path from "node:path";
import type { ControlPlaneBinaries } from "./control-plane.js";
import { type ManagedProcess, startProcess } from "./processes.js";

export const KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node";
export const KWOK_NODE_ANNOTATION_VALUE = "fake";

export function startKwok(
  binaries: ControlPlaneBinaries,
  kubeconfig: string,
  logDir: string,
): ManagedProcess {
  const bin = path.join(binaries.binDir, "kwok");
  if (!existsSync(bin))
    throw new Error(`kwok is missing from ${binaries.binDir}: controlplane/build.sh builds it`);
  if (!existsSync(binaries.kwokStagesFile))
    throw new Error(`KWOK stage configuration not found: ${binaries.kwokStagesFile}`);
  return startProcess(
    "kwok",
    bin,
    [
      `--kubeconfig=${kubeconfig}`,
      `--config=${binaries.kwokStagesFile}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=${KWOK_NODE_ANNOTATION_VALUE}`,
      "--node-lease-duration-seconds=40",
      "--cidr=10.244.0.0/16",
      "--node-ip=10.1.0.1",
    ],
    path.join(logDir, "kwok.log"),
  );
}
