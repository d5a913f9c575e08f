// The functions' one container, shared by the Knative Services (knative/manifests.ts) and the plain
// Deployments (knative/workloads.ts): `serve <function>` configured by environment, locked down, and the
// path secret read from its Secret. Pure builders.

import { createHash } from "node:crypto";
import type { DeployedFunction, ResolvedOptions } from "./options.js";
import { checksPathSecret, PATH_SECRET_KEY, pathSecretName } from "./path-secret-options.js";
import { podReadEnvironment } from "./pod-reads.js";
import { functionEnvironment, rescheduleServedEnvironment } from "./webhook-endpoints.js";

/** The container port `simkube-fn serve` listens on ($PORT, which Knative sets to it). */
export const CONTAINER_PORT = 8080;

/** `serve`'s probes: ready once it can read the API, live while the process answers. */
export const READINESS_PATH = "/readyz";
export const LIVENESS_PATH = "/healthz";
/**
 * A restart only for a process that stopped answering: three missed probes 10 s apart, each given 5 s (an
 * event loop busy with a teardown burst may answer late, which is no reason to kill it).
 */
export const LIVENESS_TIMING = { periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 };

function pathSecretEnv(o: ResolvedOptions) {
  if (!checksPathSecret(o)) return [];
  const secretKeyRef = { name: pathSecretName(o), key: PATH_SECRET_KEY };
  return [{ name: "WEBHOOK_PATH_SECRET", valueFrom: { secretKeyRef } }];
}

/**
 * A new secret must reach running pods: env from a Secret is read at pod start, and a changed Secret alone
 * makes no new revision (or rollout). A digest of it in the template does (and tells nothing about the secret).
 * Only when the value is known: an existing Secret given without it (pathSecretFrom) gets no digest.
 */
export function pathSecretRevisionAnnotation(o: ResolvedOptions): Record<string, string> {
  if (o.pathSecret === undefined) return {};
  return { "simkube.io/webhook-path-secret-sha256": pathSecretDigest(o.pathSecret) };
}

/** The annotation's value: the first 16 hex digits of the secret's sha256 (the chart computes the same). */
export function pathSecretDigest(pathSecret: string): string {
  return createHash("sha256").update(pathSecret).digest("hex").slice(0, 16);
}

/** The one container: `serve <function>`, configured by environment, locked down. */
export function functionContainer(o: ResolvedOptions, fn: DeployedFunction) {
  const env = [
    ...Object.entries({
      ...functionEnvironment(o),
      ...podReadEnvironment(o, fn),
      ...rescheduleServedEnvironment(o, fn),
    }).map(([envName, value]) => ({ name: envName, value })),
    ...pathSecretEnv(o),
  ];
  return {
    name: "function",
    image: o.image,
    args: ["serve", fn],
    ports: [{ name: "http1", containerPort: CONTAINER_PORT }],
    env,
    // No periodSeconds: Knative then probes aggressively until ready, which shortens cold starts. `serve`
    // loads everything before it listens, and /readyz is ok once it has read the API (api-readiness.ts).
    // No port either: Knative allows only the container's own, and fills it in.
    readinessProbe: { httpGet: { path: READINESS_PATH } },
    livenessProbe: { httpGet: { path: LIVENESS_PATH }, ...LIVENESS_TIMING },
    resources: o.resources,
    securityContext: {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" as const },
    },
  };
}
