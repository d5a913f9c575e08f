// CREATE reviews as mutate-create sees them during a simulation: the driver creates bare pods in virtual
// namespaces, owned by the SimulationRoot. At admission time the pod has no uid, status or node yet (the API
// server fills those after mutating admission). Deterministic from the seed; a few distinct pod specs, so
// the sequence store sees a handful of hashes, as a trace with a few workloads does.

import type { LoadRequest } from "../../functions/cli/loadtest/load.js";
import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import { buildCreateReview, buildPod, rootOwnerRef } from "../support/builders.js";

export interface CreateReviewOptions {
  count: number;
  rootName: string;
  rootUid: string;
  namespaces: readonly string[];
  seed?: number;
}

const WORKLOADS = [
  { name: "nightly-report", image: "ghcr.io/acme/report:1.4.2", cpu: "500m", memory: "1Gi" },
  { name: "db-migrate", image: "ghcr.io/acme/migrate:7.0.1", cpu: "250m", memory: "256Mi" },
  { name: "warmup", image: "busybox:1.36", cpu: "100m", memory: "64Mi" },
  { name: "cache-prime", image: "redis:7.4", cpu: "250m", memory: "512Mi" },
  { name: "smoke-test", image: "python:3.12-slim", cpu: "200m", memory: "128Mi" },
];

function spec(workload: (typeof WORKLOADS)[number]): Record<string, unknown> {
  return {
    containers: [
      {
        name: "main",
        image: workload.image,
        args: ["--config", "/etc/app/config.yaml"],
        env: [
          { name: "LOG_FORMAT", value: "json" },
          { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
        ],
        resources: {
          requests: { cpu: workload.cpu, memory: workload.memory },
          limits: { memory: workload.memory },
        },
        volumeMounts: [{ name: "config", mountPath: "/etc/app" }],
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent",
      },
    ],
    volumes: [{ name: "config", configMap: { name: `${workload.name}-config`, defaultMode: 420 } }],
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: "default",
    schedulerName: "default-scheduler",
    securityContext: {},
    priority: 0,
    enableServiceLinks: true,
  };
}

export function buildCreateRequests(options: CreateReviewOptions): LoadRequest[] {
  const random = seededRandom(options.seed ?? 1);
  const requests: LoadRequest[] = [];
  for (let i = 0; i < options.count; i++) {
    const workload = WORKLOADS[Math.floor(random() * WORKLOADS.length)] as (typeof WORKLOADS)[number];
    const namespace = options.namespaces[Math.floor(random() * options.namespaces.length)] as string;
    const name = `${workload.name}-${Math.floor(random() * 0xffffffff).toString(36)}`;
    const pod = buildPod({
      name,
      namespace,
      phase: null,
      ownerReferences: [rootOwnerRef(options.rootName, options.rootUid)],
      labels: { app: workload.name },
      spec: spec(workload),
    });
    // Not set yet at mutating admission.
    delete pod.metadata?.uid;
    delete pod.metadata?.resourceVersion;
    delete pod.metadata?.creationTimestamp;
    delete pod.status;
    const uid = `bench-create-${options.seed ?? 1}-${i}`;
    const review = buildCreateReview({ pod, user: SIMKUBE_DRIVER_USER, uid });
    requests.push({ uid, body: Buffer.from(JSON.stringify(review)) });
  }
  return requests;
}
