// mutate-create as the real API server calls it: pods made by a bare create, a Deployment, a Job and a
// CronJob (owned through the SimulationRoot, as SimKube's driver applies them) are mutated exactly as
// specified; pods outside the virtual namespaces or of another simulation are not; a simulation pod cannot be
// created while mutate-create is down (failurePolicy Fail); and KWOK completes a pod at the time mutate-create
// gave it from the trace.

import assert from "node:assert/strict";
import type { V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node";
import { ownerRefTo } from "../../../functions/local-cluster/cluster-objects.js";
import {
  KWOK_STAGE_COMPLETE_KEY,
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  ORIG_NAMESPACE_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMULATION_LABEL_KEY,
} from "../../../shared/base/keys.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import {
  barePod,
  createVirtualNamespace,
  eventually,
  readPod,
  runningBarePod,
  waitPodPhase,
} from "./kube.js";
import type { ClusterCase } from "./suite.js";
import { requestsTo, type World, type WorldRef } from "./world.js";

export const WORKLOAD_NAMESPACE = "virtual-workloads";
/** The pod the file's trace gives a Finished(0, COMPLETES_AFTER_S) lifecycle, under original namespace "default". */
export const FINISHING_POD = "finishes";
export const COMPLETES_AFTER_S = 4;

const KWOK_DELAY_ANNOTATIONS = [
  "simkube.io/kwok-stage-create-delay",
  "simkube.io/kwok-stage-create-delay-jitter",
  "simkube.io/kwok-stage-ready-delay",
  "simkube.io/kwok-stage-ready-delay-jitter",
];

/** What mutate-create's CREATE patch must have left on a simulation pod (docs/functions.md, "mutate-create"). */
export function assertMutated(pod: V1Pod, simName: string): void {
  const name = pod.metadata?.name;
  assert.equal(pod.metadata?.labels?.[SIMULATION_LABEL_KEY], simName, `${name}: simulation label`);
  assert.equal(pod.spec?.nodeSelector?.type, "virtual", `${name}: nodeSelector`);
  assert.ok(
    pod.spec?.tolerations?.some(
      (t) => t.key === "kwok-provider" && t.operator === "Exists" && t.effect === "NoSchedule",
    ),
    `${name}: kwok-provider toleration`,
  );
  const annotations = pod.metadata?.annotations ?? {};
  assert.match(annotations[POD_SPEC_STABLE_HASH_KEY] ?? "", /^\d+$/, `${name}: stable hash`);
  assert.match(annotations[POD_SEQUENCE_NUMBER_KEY] ?? "", /^\d+$/, `${name}: sequence number`);
  for (const key of KWOK_DELAY_ANNOTATIONS) assert.equal(annotations[key], "0ms", `${name}: ${key}`);
  assert.match(pod.spec?.nodeName ?? "", /^virtual-node-\d$/, `${name}: runs on a virtual node`);
}

export function assertUntouched(pod: V1Pod): void {
  assert.equal(pod.metadata?.labels?.[SIMULATION_LABEL_KEY], undefined);
  assert.equal(pod.spec?.nodeSelector, undefined);
  assert.equal(pod.metadata?.annotations?.[POD_SPEC_STABLE_HASH_KEY], undefined);
}

function template(app: string, restartPolicy: "Always" | "Never"): V1PodTemplateSpec {
  return {
    metadata: { labels: { app } },
    spec: { restartPolicy, containers: [{ name: "app", image: "registry.example/app:1" }] },
  };
}

/** The running pods whose labels carry app=<app>, once there are `count` of them. */
async function runningPodsOf(w: World, app: string, count: number, timeoutMs = 30_000): Promise<V1Pod[]> {
  return eventually(
    `${count} running pod(s) of ${app}`,
    async () => {
      const list = await w.admin.core.listNamespacedPod({
        namespace: WORKLOAD_NAMESPACE,
        labelSelector: `app=${app}`,
      });
      const running = list.items.filter((p) => p.status?.phase === "Running");
      return running.length >= count ? running : undefined;
    },
    timeoutMs,
  );
}

async function createOtherSimulationRoot(w: World): Promise<KubeObject> {
  const custom = w.admin.custom;
  const sim = (await custom.createClusterCustomObject({
    group: "simkube.io",
    version: "v1",
    plural: "simulations",
    body: {
      apiVersion: "simkube.io/v1",
      kind: "Simulation",
      metadata: { name: "other-sim" },
      spec: { driver: { virtualNsPrefix: "virtual" } },
    },
  })) as KubeObject;
  return (await custom.createClusterCustomObject({
    group: "simkube.io",
    version: "v1",
    plural: "simulationroots",
    body: {
      apiVersion: "simkube.io/v1",
      kind: "SimulationRoot",
      metadata: { name: "sk-other-sim-driver-root", ownerReferences: [ownerRefTo(sim)] },
      spec: {},
    },
  })) as KubeObject;
}

export function mutationCases(ref: WorldRef): ClusterCase[] {
  const owner = () => [ownerRefTo(ref.get().cluster.root)];
  return [
    {
      name: "mutation: a bare simulation pod is mutated and runs on a virtual node",
      run: async () => {
        const w = ref.get();
        await createVirtualNamespace(w.cluster, w.admin.core, WORKLOAD_NAMESPACE);
        // Its first run is at the next minute: created now, checked by cronJobCase.
        await w.admin.batch.createNamespacedCronJob({
          namespace: WORKLOAD_NAMESPACE,
          body: {
            metadata: { name: "every-minute", ownerReferences: owner() },
            spec: { schedule: "* * * * *", jobTemplate: { spec: { template: template("cron", "Never") } } },
          },
        });
        assertMutated(
          await runningBarePod(w.cluster, w.admin.core, WORKLOAD_NAMESPACE, "bare"),
          w.cluster.simName,
        );
      },
    },
    {
      name: "mutation: the pods of a Deployment owned by the SimulationRoot are mutated",
      run: async () => {
        const w = ref.get();
        await w.admin.apps.createNamespacedDeployment({
          namespace: WORKLOAD_NAMESPACE,
          body: {
            metadata: { name: "web", ownerReferences: owner() },
            spec: {
              replicas: 2,
              selector: { matchLabels: { app: "web" } },
              template: template("web", "Always"),
            },
          },
        });
        const pods = await runningPodsOf(w, "web", 2);
        for (const pod of pods) assertMutated(pod, w.cluster.simName);
        assert.notEqual(
          pods[0]?.metadata?.annotations?.[POD_SEQUENCE_NUMBER_KEY],
          pods[1]?.metadata?.annotations?.[POD_SEQUENCE_NUMBER_KEY],
        );
      },
    },
    {
      name: "mutation: the pod of a Job owned by the SimulationRoot is mutated",
      run: async () => {
        const w = ref.get();
        await w.admin.batch.createNamespacedJob({
          namespace: WORKLOAD_NAMESPACE,
          body: {
            metadata: { name: "batch", ownerReferences: owner() },
            spec: { template: template("batch", "Never") },
          },
        });
        for (const pod of await runningPodsOf(w, "batch", 1)) assertMutated(pod, w.cluster.simName);
      },
    },
    {
      name: "mutation: a pod outside the virtual namespaces is never sent to mutate-create and stays untouched",
      run: async () => {
        const w = ref.get();
        const from = w.cluster.reviews.length;
        await w.admin.core.createNamespacedPod({ namespace: "default", body: barePod(w.cluster, "outside") });
        const pod = await readPod(w.admin.core, "default", "outside");
        assert.ok(pod);
        assertUntouched(pod);
        assert.equal(requestsTo(w, "mutate-create", from).filter((r) => r.name === "outside").length, 0);
        await w.admin.core.deleteNamespacedPod({
          name: "outside",
          namespace: "default",
          gracePeriodSeconds: 0,
        });
      },
    },
    {
      name: "mutation: a pod of another simulation in this simulation's virtual namespace is pinned, without a sequence number",
      run: async () => {
        const w = ref.get();
        const otherRoot = await createOtherSimulationRoot(w);
        const from = w.cluster.reviews.length;
        await w.admin.core.createNamespacedPod({
          namespace: WORKLOAD_NAMESPACE,
          body: barePod(w.cluster, "other-sims", { root: otherRoot }),
        });
        const pod = await readPod(w.admin.core, WORKLOAD_NAMESPACE, "other-sims");
        assert.ok(pod);
        assert.deepEqual(pod.spec?.nodeSelector, { type: "virtual" });
        assert.ok(pod.spec?.tolerations?.some((t) => t.key === "kwok-provider" && t.operator === "Exists"));
        assert.equal(pod.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);
        const answers = w.cluster.reviews
          .slice(from)
          .filter((r) => r.function === "mutate-create" && r.request.name === "other-sims");
        assert.ok(answers.length >= 1 && answers.every((r) => r.response?.allowed === true));
        assert.ok(answers[0]?.response?.patch, "the CREATE was patched");
        const running = await waitPodPhase(w.admin.core, WORKLOAD_NAMESPACE, "other-sims", "Running");
        assert.match(running.spec?.nodeName ?? "", /^virtual-node-/, "it runs on a virtual node");
      },
    },
    {
      name: "mutation: a simulation pod cannot be created while mutate-create is down (failurePolicy Fail)",
      run: async () => {
        const w = ref.get();
        const fn = w.cluster.functions["mutate-create"];
        await fn.stop();
        try {
          await assert.rejects(
            w.admin.core.createNamespacedPod({
              namespace: WORKLOAD_NAMESPACE,
              body: barePod(w.cluster, "while-down"),
            }),
            (err: { code?: number; body?: string }) =>
              err.code === 500 && /failed calling webhook/.test(String(err.body)),
          );
        } finally {
          await fn.start();
        }
        assert.equal(await readPod(w.admin.core, WORKLOAD_NAMESPACE, "while-down"), undefined);
      },
    },
    {
      name: "mutation: KWOK's Running status gets the completion label and time from the trace, and KWOK completes the pod then",
      run: async () => {
        const w = ref.get();
        const annotations = { [ORIG_NAMESPACE_ANNOTATION_KEY]: "default" };
        const running = await runningBarePod(w.cluster, w.admin.core, WORKLOAD_NAMESPACE, FINISHING_POD, {
          annotations,
        });
        const labelled = await eventually("the completion label", async () => {
          const pod = await readPod(w.admin.core, WORKLOAD_NAMESPACE, FINISHING_POD);
          return pod?.metadata?.labels?.[KWOK_STAGE_COMPLETE_KEY] !== undefined ? pod : undefined;
        });
        const completeAt = Date.parse(
          labelled.metadata?.annotations?.[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY] ?? "",
        );
        const startedAt = new Date(running.status?.startTime ?? 0).getTime();
        assert.ok(
          Math.abs(completeAt - startedAt - COMPLETES_AFTER_S * 1000) <= 2_000,
          `complete-time ${completeAt - startedAt} ms after start`,
        );
        const done = await waitPodPhase(w.admin.core, WORKLOAD_NAMESPACE, FINISHING_POD, "Succeeded", 20_000);
        const finishedAt = new Date(
          done.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt ?? 0,
        ).getTime();
        assert.ok(
          Math.abs(finishedAt - completeAt) <= 2_000,
          `completed ${finishedAt - completeAt} ms from the complete-time`,
        );
      },
    },
  ];
}

/** Checked late: the CronJob's first run is at the next minute, so this wait overlaps other scenarios. */
export function cronJobCase(ref: WorldRef): ClusterCase {
  return {
    name: "mutation: the pod of a CronJob's Job is mutated",
    timeoutMs: 150_000,
    run: async () => {
      const w = ref.get();
      for (const pod of await runningPodsOf(w, "cron", 1, 120_000)) assertMutated(pod, w.cluster.simName);
    },
  };
}
