// When Knative Serving on the real node can be used: every Deployment it needs rolled out, and Knative's own
// validating webhook answering (it refuses an invalid Service on a dry-run create).

import { waitUntil } from "../readiness.js";
import type { RestClient } from "../rest.js";
import { RestError } from "../rest.js";
import type { ManifestObject } from "./apply-yaml.js";
import { KNATIVE_NAMESPACE } from "./serving-build.js";

const READY_TIMEOUT_MS = 300_000;
const KSVC_PATH = "/apis/serving.knative.dev/v1/namespaces";

export interface DeploymentRef {
  namespace: string;
  name: string;
}

interface DeploymentStatus {
  metadata: { generation?: number };
  spec: { replicas?: number };
  status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number };
}

/** Rolled out: the newest generation seen, every replica updated and available. */
export function deploymentRolledOut(d: DeploymentStatus): boolean {
  const want = d.spec.replicas ?? 1;
  const s = d.status ?? {};
  return (
    (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
    (s.updatedReplicas ?? 0) >= want &&
    (s.availableReplicas ?? 0) >= want
  );
}

export async function waitForDeployments(admin: RestClient, deployments: DeploymentRef[]): Promise<void> {
  for (const { namespace, name } of deployments)
    await waitUntil(
      `${namespace}/${name} Deployment rolled out`,
      async () =>
        deploymentRolledOut(
          await admin.request<DeploymentStatus>(
            "GET",
            `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
          ),
        ),
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 1000 },
    );
}

/** A Service Knative's validation refuses (min-scale is not a number), for a dry-run create. */
export function invalidKnativeService(namespace: string, image: string): ManifestObject {
  return {
    apiVersion: "serving.knative.dev/v1",
    kind: "Service",
    metadata: { name: "admission-probe", namespace },
    spec: {
      template: {
        metadata: { annotations: { "autoscaling.knative.dev/min-scale": "not-a-number" } },
        spec: { containers: [{ image }] },
      },
    },
  };
}

/** Until Knative's own validating webhook answers: a dry-run create of an invalid Service is refused by it. */
export async function waitForKnativeAdmission(admin: RestClient, image: string): Promise<void> {
  const probe = invalidKnativeService(KNATIVE_NAMESPACE, image);
  await waitUntil(
    "Knative's admission webhook refusing an invalid Service",
    async () => {
      try {
        await admin.request("POST", `${KSVC_PATH}/${KNATIVE_NAMESPACE}/services?dryRun=All`, probe);
        return false;
      } catch (err) {
        if (err instanceof RestError && err.body.includes("validation.webhook.serving.knative.dev"))
          return true;
        throw err;
      }
    },
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: 1000 },
  );
}
