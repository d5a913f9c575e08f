// One deployment serving every Simulation on a real control plane: the functions run without SIM_NAME and
// each simulation has only its own sk-<sim>-mutatepods, rendered by the project's builder. The cluster's
// Simulation (rescheduling on, no delays) and a second one created here (rescheduling off, its own delays
// and namespace prefix) are served at once, each pod with its own Simulation's label and settings.

import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import type { V1MutatingWebhookConfiguration } from "@kubernetes/client-node";
import {
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  collectionPath,
} from "../../../functions/local-cluster/cluster-objects.js";
import { FUNCTIONS_NAMESPACE } from "../../../functions/local-cluster/cluster-types.js";
import { buildSimulationWebhookConfiguration, simulationWebhookName } from "../../../knative/manifests.js";
import { SIMULATION_LABEL_KEY } from "../../../shared/base/keys.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { clonesOf, eventually, readPod, runningBarePod, waitPodGone } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import { requestsTo, type World, type WorldRef } from "./world.js";

const SECOND_SIM = "sim-two";
const SECOND_PREFIX = "two";
const SECOND_NAMESPACE = `${SECOND_PREFIX}-default`;
const CREATE_DELAY_KEY = "simkube.io/kwok-stage-create-delay";
const READY_DELAY_KEY = "simkube.io/kwok-stage-ready-delay";
const SEQ_KEY = "static.simkube.io/pod-sequence-number";

/** The second simulation's root, once created. */
let secondRoot: KubeObject | undefined;

async function readWebhookConfiguration(w: World, name: string): Promise<V1MutatingWebhookConfiguration> {
  return w.admin.admission.readMutatingWebhookConfiguration({ name });
}

function assertAdoptable(config: V1MutatingWebhookConfiguration, simName: string): void {
  assert.equal(config.metadata?.name, `sk-${simName}-mutatepods`);
  const first = config.webhooks?.[0];
  assert.ok(first, "a first webhook");
  assert.ok((first.clientConfig.caBundle ?? "").length > 0, "the first webhook has a non-empty caBundle");
}

/** Dry-run creates in `namespace` until mutate-create is called `perCreate` times for one create. */
async function waitForWebhooks(w: World, namespace: string, perCreate: number): Promise<void> {
  let attempt = 0;
  await eventually(
    `${perCreate} webhook configuration(s) calling mutate-create for ${namespace}`,
    async () => {
      const name = `probe-${attempt++}`;
      const from = w.cluster.reviews.length;
      await w.admin.core.createNamespacedPod({
        namespace,
        body: { metadata: { name }, spec: { containers: [{ name: "c", image: "probe" }] } },
        dryRun: "All",
      });
      const seen = requestsTo(w, "mutate-create", from).filter((r) => r.name === name).length;
      return seen === perCreate;
    },
  );
}

/** A Simulation with its own settings, its root and its virtual namespace, as SimKube would make them. */
async function createSecondSimulation(w: World): Promise<KubeObject> {
  const admin = w.cluster.admin;
  const body = buildSimulation({
    name: SECOND_SIM,
    reschedule: false,
    virtualNsPrefix: SECOND_PREFIX,
    driverNamespace: FUNCTIONS_NAMESPACE,
  }) as KubeObject & { spec: Record<string, unknown> };
  body.spec.speed = 2;
  body.spec.lifecycleParams = { imagePullDelay: 250, podStartupDelay: 500 };
  const sim = await admin.request<KubeObject>("POST", collectionPath(body), body);
  const root = buildSimulationRoot(sim);
  const createdRoot = await admin.request<KubeObject>("POST", collectionPath(root), root);
  await admin.ensure("/api/v1/namespaces", buildVirtualNamespace(SECOND_NAMESPACE, createdRoot, SECOND_SIM));
  await eventually(`ServiceAccount ${SECOND_NAMESPACE}/default`, async () =>
    w.admin.core.readNamespacedServiceAccount({ name: "default", namespace: SECOND_NAMESPACE }),
  );
  return createdRoot;
}

export function multiSimulationCases(ref: WorldRef): ClusterCase[] {
  return [
    {
      name: "every simulation: the cluster's sk-<sim>-mutatepods from the builder has its name and a caBundle, and alone patches a pod",
      run: async () => {
        const w = ref.get();
        const sim = w.cluster.simName;
        const config = await readWebhookConfiguration(w, simulationWebhookName(sim));
        assertAdoptable(config, sim);
        const list = await w.admin.admission.listMutatingWebhookConfiguration();
        assert.deepEqual(
          list.items.map((c) => c.metadata?.name),
          [`sk-${sim}-mutatepods`],
          "no other configuration calls the functions",
        );
        const namespace = `${w.cluster.virtualNamespacePrefix}-default`;
        const pod = await runningBarePod(w.cluster, w.admin.core, namespace, "first-sim-pod");
        assert.equal(pod.metadata?.labels?.[SIMULATION_LABEL_KEY], sim);
        assert.equal(pod.spec?.nodeSelector?.type, "virtual");
        assert.equal(pod.metadata?.annotations?.[CREATE_DELAY_KEY], "0ms");
        assert.equal(pod.metadata?.annotations?.[SEQ_KEY], "0");
      },
    },
    {
      name: "every simulation: a second Simulation's sk-sim-two-mutatepods, applied to the API server, is adoptable and live",
      run: async () => {
        const w = ref.get();
        secondRoot = await createSecondSimulation(w);
        // Its own namespace prefix, as `manifests webhook --sim-name sim-two --virtual-ns-prefix two` renders it.
        const rendered = buildSimulationWebhookConfiguration({
          ...w.cluster.deployment,
          simName: SECOND_SIM,
          virtualNsPrefix: SECOND_PREFIX,
        });
        await w.admin.admission.createMutatingWebhookConfiguration({ body: rendered as never });
        assertAdoptable(await readWebhookConfiguration(w, `sk-${SECOND_SIM}-mutatepods`), SECOND_SIM);
        // Its match conditions select its own prefix: a create there is reviewed once, through it alone.
        await waitForWebhooks(w, SECOND_NAMESPACE, 1);
      },
    },
    {
      name: "every simulation: one deployment mutates each simulation's pods with its own label, delays and sequence",
      run: async () => {
        const w = ref.get();
        assert.ok(secondRoot, "the second simulation exists");
        const core = w.admin.core;
        const first = await runningBarePod(
          w.cluster,
          core,
          `${w.cluster.virtualNamespacePrefix}-default`,
          "a-1",
        );
        const twoA = await runningBarePod(w.cluster, core, SECOND_NAMESPACE, "b-1", { root: secondRoot });
        const twoB = await runningBarePod(w.cluster, core, SECOND_NAMESPACE, "b-2", { root: secondRoot });
        assert.equal(first.metadata?.labels?.[SIMULATION_LABEL_KEY], w.cluster.simName);
        assert.equal(first.metadata?.annotations?.[CREATE_DELAY_KEY], "0ms");
        for (const pod of [twoA, twoB]) {
          assert.equal(pod.metadata?.labels?.[SIMULATION_LABEL_KEY], SECOND_SIM, pod.metadata?.name);
          assert.equal(pod.metadata?.annotations?.[CREATE_DELAY_KEY], "250ms", pod.metadata?.name);
          assert.equal(pod.metadata?.annotations?.[READY_DELAY_KEY], "500ms", pod.metadata?.name);
          assert.equal(pod.spec?.nodeSelector?.type, "virtual");
        }
        // The second simulation's own sequence (its root), not continuing the first's.
        assert.deepEqual(
          [twoA, twoB].map((p) => p.metadata?.annotations?.[SEQ_KEY]),
          ["0", "1"],
        );
        // An ownerless pod in the second simulation's namespace is pinned for it (the namespace's label and owner).
        await core.createNamespacedPod({
          namespace: SECOND_NAMESPACE,
          body: {
            metadata: { name: "stray" },
            spec: { containers: [{ name: "c", image: "registry.example/app:1" }] },
          },
        });
        const stray = await readPod(core, SECOND_NAMESPACE, "stray");
        assert.equal(stray?.metadata?.labels?.[SIMULATION_LABEL_KEY], SECOND_SIM);
        assert.equal(stray?.spec?.nodeSelector?.type, "virtual");
        assert.equal(stray?.metadata?.annotations?.[SEQ_KEY], undefined);
      },
    },
    {
      name: "every simulation: reschedule-delete clones for the Simulation that reschedules, not for the one that does not",
      run: async () => {
        const w = ref.get();
        assert.ok(secondRoot, "the second simulation exists");
        const core = w.admin.core;
        const firstNs = `${w.cluster.virtualNamespacePrefix}-default`;
        await runningBarePod(w.cluster, core, firstNs, "victim-a");
        await runningBarePod(w.cluster, core, SECOND_NAMESPACE, "victim-b", { root: secondRoot });
        const from = w.cluster.reviews.length;
        await core.deleteNamespacedPod({ namespace: firstNs, name: "victim-a" });
        await core.deleteNamespacedPod({ namespace: SECOND_NAMESPACE, name: "victim-b" });
        await waitPodGone(core, firstNs, "victim-a", 30_000);
        await waitPodGone(core, SECOND_NAMESPACE, "victim-b", 30_000);
        const deletes = requestsTo(w, "reschedule-delete", from).filter((r) => r.operation === "DELETE");
        assert.ok(
          deletes.some((r) => r.name === "victim-b"),
          "reschedule-delete reviewed the second's delete",
        );
        // The clone is made once the pod shows its deletion, after the answer: it may come after the pod is gone.
        await eventually(
          "victim-a's clone",
          async () => (await clonesOf(core, firstNs, "victim-a")).length > 0,
        );
        await sleep(700); // reviews still in flight when the pods disappeared
        assert.equal(
          (await clonesOf(core, firstNs, "victim-a")).length,
          1,
          "rescheduleInterruptedBarePods: true",
        );
        assert.equal((await clonesOf(core, SECOND_NAMESPACE, "victim-b")).length, 0, "rescheduling off");
      },
    },
  ];
}
