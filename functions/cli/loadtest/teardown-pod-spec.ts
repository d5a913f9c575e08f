// A generated pod's spec and status as the API server stores them after defaulting: what follows its metadata.

import {
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "../../../shared/base/index.js";
import { iso } from "./generated-values.js";
import type { Phase, PodContext, PodFacts } from "./review-types.js";

export const GRACE_PERIOD_SECONDS = 30;

function podConditions(facts: PodFacts, terminated: boolean, disrupted: boolean, now: Date) {
  const { created, started } = facts;
  const ready = terminated ? "False" : "True";
  const conditions: Record<string, unknown>[] = [
    { type: "PodReadyToStartContainers", status: ready, lastTransitionTime: iso(now, started) },
    { type: "Initialized", status: "True", lastTransitionTime: iso(now, created + 1) },
    { type: "Ready", status: ready, lastTransitionTime: iso(now, started) },
    { type: "ContainersReady", status: ready, lastTransitionTime: iso(now, started) },
    { type: "PodScheduled", status: "True", lastTransitionTime: iso(now, created + 1) },
  ];
  if (disrupted) {
    conditions.push({
      type: "DisruptionTarget",
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
      lastTransitionTime: iso(now, -1),
    });
  }
  return conditions;
}

function containerState(phase: Phase, started: number, now: Date) {
  if (phase === "Running") return { running: { startedAt: iso(now, started) } };
  return {
    terminated: {
      exitCode: phase === "Succeeded" ? 0 : 1,
      reason: phase === "Succeeded" ? "Completed" : "Error",
      startedAt: iso(now, started),
      finishedAt: iso(now, -30),
    },
  };
}

/** One container as the API server stores it after defaulting (service account volume included). */
function mainContainer(image: string) {
  return {
    name: "main",
    image,
    ports: [{ containerPort: 8080, protocol: "TCP" }],
    env: [
      { name: "LOG_FORMAT", value: "json" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    ],
    resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "512Mi" } },
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
    volumeMounts: [
      {
        name: "kube-api-access",
        readOnly: true,
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
      },
    ],
  };
}

/** The tolerations: SimKube's for the virtual nodes, then the two the API server adds by default. */
function podTolerations() {
  const notReady = (key: string) => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300,
  });
  return [
    { key: VIRTUAL_NODE_TOLERATION_KEY, operator: "Exists", effect: "NoSchedule" },
    notReady("node.kubernetes.io/not-ready"),
    notReady("node.kubernetes.io/unreachable"),
  ];
}

export function podSpec(facts: PodFacts, bare: boolean) {
  return {
    containers: [mainContainer(facts.image)],
    volumes: [
      {
        name: "kube-api-access",
        projected: {
          defaultMode: 420,
          sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }],
        },
      },
    ],
    restartPolicy: bare ? "Never" : "Always",
    terminationGracePeriodSeconds: GRACE_PERIOD_SECONDS,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: "default",
    nodeName: facts.node,
    nodeSelector: { [VIRTUAL_NODE_SELECTOR_KEY]: VIRTUAL_NODE_SELECTOR_VALUE },
    tolerations: podTolerations(),
    schedulerName: "default-scheduler",
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
  };
}

export function podStatus(ctx: PodContext, facts: PodFacts, phase: Phase, disrupted: boolean) {
  const { random, options } = ctx;
  const terminated = phase !== "Running";
  return {
    phase,
    conditions: podConditions(facts, terminated, disrupted, options.now),
    hostIP: `10.0.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}`,
    podIP: `10.244.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}`,
    startTime: iso(options.now, facts.created + 1),
    containerStatuses: [
      {
        name: "main",
        state: containerState(phase, facts.started, options.now),
        ready: !terminated,
        restartCount: 0,
        image: facts.image,
        imageID: "",
        started: !terminated,
      },
    ],
    qosClass: "Burstable",
  };
}
