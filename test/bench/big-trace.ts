// A big SimKube trace for the trace benchmark (test/bench/trace-bench.ts), written by the project's own
// writer. Shaped like SimKube's traces: bare pods (tracked with their lifecycles, as in SimKube's
// bare-pods example) and Deployments (as in its dsb-scaling example), every object in full in the events,
// so that the events are most of the bytes, as they are in a real trace.

import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { encodeTrace } from "../../functions/cli/trace/trace-writer.js";
import type { KubeObject } from "../../shared/kube/api.js";
import type { PodLifecycle, Trace, TraceEvent } from "../../shared/trace/model.js";
import { lifecycleKey } from "../../shared/trace/tables.js";

export interface BigTraceShape {
  barePods: number;
  deployments: number;
  /** Lifecycles recorded per Deployment (its pods over the trace). */
  podsPerDeployment: number;
  /** Deployment updates (scaling) after its creation, each a full object in the events. */
  updatesPerDeployment: number;
  seed: number;
}

/** ~50 MB with 200,000 pod lifecycles (20,000 bare pods + 1,800 Deployments x 100). */
export const DEFAULT_BIG_TRACE: BigTraceShape = {
  barePods: 20_000,
  deployments: 1_800,
  podsPerDeployment: 100,
  updatesPerDeployment: 2,
  seed: 10,
};

const START = 1_781_282_000;
const SPAN_SECONDS = 6 * 3600;

export function buildBigTraceBytes(shape: BigTraceShape = DEFAULT_BIG_TRACE): Uint8Array {
  return encodeTrace(buildBigTrace(shape));
}

export function buildBigTrace(shape: BigTraceShape): Trace {
  const random = seededRandom(shape.seed);
  const hash = () =>
    (BigInt(Math.floor(random() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(random() * 2 ** 32))).toString();
  const at = () => START + Math.floor(random() * SPAN_SECONDS);
  const events = new Map<number, TraceEvent>();
  const event = (ts: number) => {
    const known = events.get(ts);
    if (known) return known;
    const e: TraceEvent = { ts, appliedObjs: [], deletedObjs: [] };
    events.set(ts, e);
    return e;
  };
  const pods = new Map<string, string>();
  const deployments = new Map<string, string>();
  const podLifecycles: Trace["podLifecycles"] = new Map();
  for (let i = 0; i < shape.barePods; i++) {
    const pod = barePod(i, random);
    const nsName = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const created = at();
    event(created).appliedObjs.push(pod);
    pods.set(nsName, hash());
    const interrupted = random() < 0.25;
    if (interrupted) event(created + 60 + Math.floor(random() * 600)).deletedObjs.push(pod);
    const lifecycle: PodLifecycle = interrupted
      ? { kind: "Running", start: created + 1 }
      : { kind: "Finished", start: created + 1, end: created + 30 + Math.floor(random() * 3600) };
    podLifecycles.set(lifecycleKey("v1.Pod", nsName), new Map([[hash(), [lifecycle]]]));
  }
  for (let i = 0; i < shape.deployments; i++) {
    const created = at();
    const nsName = `team-${i % 40}/service-${i}`;
    for (let u = 0; u <= shape.updatesPerDeployment; u++) {
      event(created + u * 300).appliedObjs.push(deployment(i, 1 + ((i + u) % 5), random));
    }
    deployments.set(nsName, hash());
    const lifecycles: PodLifecycle[] = [];
    for (let p = 0; p < shape.podsPerDeployment; p++) {
      const start = created + p * 30;
      lifecycles.push({ kind: "Finished", start, end: start + 60 + Math.floor(random() * 1800) });
    }
    podLifecycles.set(lifecycleKey("apps/v1.Deployment", nsName), new Map([[hash(), lifecycles]]));
  }
  return {
    version: 2,
    config: {
      trackedObjects: {
        "v1.Pod": { podSpecTemplatePaths: [""], trackLifecycle: true, skipOwned: true },
        "apps/v1.Deployment": {
          podSpecTemplatePaths: ["/spec/template"],
          trackLifecycle: false,
          skipOwned: false,
        },
      },
    },
    events: [...events.values()].sort((a, b) => a.ts - b.ts),
    index: new Map([
      ["v1.Pod", pods],
      ["apps/v1.Deployment", deployments],
    ]),
    podLifecycles,
  };
}

interface Named extends KubeObject {
  metadata: { name: string; namespace: string; [field: string]: unknown };
}

function barePod(i: number, random: () => number): Named {
  const name = `batch-job-${i.toString(36)}-${Math.floor(random() * 1e6)}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      annotations: { "simkube.io/example": `run-${i % 97}` },
      labels: {
        app: `batch-${i % 50}`,
        team: `team-${i % 40}`,
        "app.kubernetes.io/managed-by": "job-runner",
      },
      name,
      namespace: `team-${i % 40}`,
    },
    spec: { ...podSpec(`batch-${i % 50}`, random), restartPolicy: "Never" },
  };
}

function deployment(i: number, replicas: number, random: () => number): Named {
  const service = `service-${i}`;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      annotations: {
        "meta.helm.sh/release-name": `release-${i % 40}`,
        "meta.helm.sh/release-namespace": `team-${i % 40}`,
      },
      labels: { "app.kubernetes.io/managed-by": "Helm", service },
      name: service,
      namespace: `team-${i % 40}`,
    },
    spec: {
      progressDeadlineSeconds: 600,
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: { service } },
      strategy: { rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" }, type: "RollingUpdate" },
      template: {
        metadata: { creationTimestamp: null, labels: { app: service, service } },
        spec: { ...podSpec(service, random), restartPolicy: "Always" },
      },
    },
  };
}

/** A pod spec as an API server returns it (defaults filled in), about 1 KB of msgpack. */
function podSpec(app: string, random: () => number): Record<string, unknown> {
  const token = `kube-api-access-${Math.floor(random() * 36 ** 5).toString(36)}`;
  return {
    containers: [
      {
        command: ["/bin/run", `--service=${app}`, "--config=/etc/app/config.yaml"],
        env: [
          { name: "LOG_LEVEL", value: "info" },
          { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
        ],
        image: `registry.example.com/${app}:v1.${Math.floor(random() * 40)}.0`,
        imagePullPolicy: "IfNotPresent",
        name: app,
        ports: [{ containerPort: 8080, protocol: "TCP" }],
        resources: { requests: { cpu: `${1 + Math.floor(random() * 4)}00m`, memory: "512Mi" } },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        volumeMounts: [
          { mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", name: token, readOnly: true },
        ],
      },
    ],
    dnsPolicy: "ClusterFirst",
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
    priority: 0,
    schedulerName: "default-scheduler",
    securityContext: {},
    terminationGracePeriodSeconds: 30,
    tolerations: [
      {
        effect: "NoExecute",
        key: "node.kubernetes.io/not-ready",
        operator: "Exists",
        tolerationSeconds: 300,
      },
      {
        effect: "NoExecute",
        key: "node.kubernetes.io/unreachable",
        operator: "Exists",
        tolerationSeconds: 300,
      },
    ],
    volumes: [
      {
        name: token,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
            { configMap: { items: [{ key: "ca.crt", path: "ca.crt" }], name: "kube-root-ca.crt" } },
          ],
        },
      },
    ],
  };
}
