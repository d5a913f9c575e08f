// A Simulation that asks for rescheduling, on a deployment rendered without reschedule-delete (`manifests
// --no-reschedule`: no DELETE webhook, RESCHEDULE_SERVED=false, mutate-create's Events role in "default"), on
// the real kube-apiserver:
// - the registered configuration has no DELETE webhook;
// - pods of that Simulation are admitted and mutated as usual, and mutate-create, as its own account (the
//   rendered RBAC), records one Warning Event on the Simulation, which `kubectl describe simulation` finds by
//   its involvedObject;
// - that account may create Events in "default" only;
// - the API double answers the same Event the way the real API server does: created in "default", refused
//   in another namespace, naming involvedObject.namespace.

import assert from "node:assert/strict";
import { after, type TestContext } from "node:test";
import { startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { RestError } from "../../functions/local-cluster/rest.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { buildReschedulingNotServedEvent } from "../../shared/simulation/index.js";
import {
  barePod,
  clientsFor,
  createVirtualNamespace,
  eventually,
  waitPodPhase,
} from "../support/cluster/kube.js";
import { assertMutated } from "../support/cluster/mutation-scenarios.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";

const NS = "virtual-notice";
const suite = await openClusterSuite({ reschedule: true, serveReschedule: false });

function cluster(): LocalCluster {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

interface EventList {
  items: (KubeObject & { reason?: string; type?: string; involvedObject?: Record<string, string> })[];
}

/** The Events about the cluster's Simulation, as `kubectl describe` looks them up (every namespace). */
async function simulationEvents(): Promise<EventList["items"]> {
  const c = cluster();
  const selector = `involvedObject.kind=Simulation,involvedObject.name=${c.simName}`;
  const list = await c.admin.request<EventList>(
    "GET",
    `/api/v1/events?fieldSelector=${encodeURIComponent(selector)}`,
  );
  return list.items;
}

const noDeleteWebhook: ClusterCase = {
  name: "--no-reschedule: the registered configuration has no DELETE webhook",
  run: async () => {
    const list = await cluster().admin.request<{
      items: { webhooks?: { rules?: { operations: string[] }[] }[] }[];
    }>("GET", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations");
    const operations = list.items
      .flatMap((c) => (c.webhooks ?? []).flatMap((w) => w.rules ?? []))
      .flatMap((r) => r.operations);
    assert.ok(operations.includes("CREATE"));
    assert.ok(!operations.includes("DELETE"), operations.join(","));
  },
};

const eventOnSimulation: ClusterCase = {
  name: "a Simulation asking for rescheduling: its pods admitted as usual, one Warning Event on it from mutate-create's account",
  run: async (t: TestContext) => {
    const c = cluster();
    const { core } = clientsFor(c.kubeconfig);
    assert.equal(
      (c.simulation.spec as { rescheduleInterruptedBarePods?: boolean }).rescheduleInterruptedBarePods,
      true,
    );
    await createVirtualNamespace(c, core, NS);
    for (const name of ["first", "second"]) {
      await core.createNamespacedPod({ namespace: NS, body: barePod(c, name) });
      assertMutated(await waitPodPhase(core, NS, name, "Running"), c.simName);
    }
    const events = await eventually(
      "the Event on the Simulation",
      async () => {
        const found = await simulationEvents();
        return found.length > 0 ? found : undefined;
      },
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const all = await simulationEvents();
    assert.equal(all.length, 1, "once per Simulation, not per pod");
    const [event] = events;
    assert.equal(event?.metadata?.namespace, "default");
    assert.equal(event?.type, "Warning");
    assert.equal(event?.reason, "ReschedulingNotServed");
    assert.equal(event?.involvedObject?.uid, c.simulation.metadata?.uid);
    assert.equal(event?.involvedObject?.apiVersion, "simkube.io/v1");
    t.diagnostic(`Event ${event?.metadata?.name}: ${(event as { message?: string } | undefined)?.message}`);
  },
};

/** Status code and causes of a create, from the real API server (admin) or the double. */
interface Outcome {
  status: number;
  causes: { reason?: string; field?: string; message?: string }[];
}

async function onReal(namespace: string, event: KubeObject): Promise<Outcome> {
  try {
    await cluster().admin.request("POST", `/api/v1/namespaces/${namespace}/events`, event);
    return { status: 201, causes: [] };
  } catch (err) {
    if (!(err instanceof RestError)) throw err;
    const body = JSON.parse(err.body) as { details?: { causes?: Outcome["causes"] } };
    return { status: err.status, causes: body.details?.causes ?? [] };
  }
}

const doubleAgrees: ClusterCase = {
  name: "the API double answers mutate-create's Event as the real API server does: created in default, refused elsewhere",
  run: async () => {
    const c = cluster();
    const event = buildReschedulingNotServedEvent(c.simulation, new Date());
    const double = await startFakeApiServer({ namespaces: ["default", "simkube"] });
    const statuses: number[] = [];
    try {
      for (const namespace of ["default", "simkube"]) {
        const body = { ...event, metadata: { ...event.metadata, namespace } };
        const real = await onReal(namespace, body);
        const answer = await double.request<{ details?: { causes?: Outcome["causes"] } }>(
          "POST",
          `/api/v1/namespaces/${namespace}/events`,
          body,
        );
        const fake: Outcome = { status: answer.status, causes: answer.body?.details?.causes ?? [] };
        assert.deepEqual(fake, real, `an Event about the Simulation in ${namespace}`);
        statuses.push(real.status);
      }
      assert.deepEqual(statuses, [201, 422], "the real API server took one and refused the other");
    } finally {
      await double.close();
    }
  },
};

const eventsOnlyInDefault: ClusterCase = {
  name: "mutate-create's account may create that Event in default and nowhere else",
  run: async () => {
    const c = cluster();
    const { core } = clientsFor(c.functionKubeconfigs["mutate-create"]);
    const event = buildReschedulingNotServedEvent(c.simulation, new Date());
    await core.createNamespacedEvent({ namespace: "default", body: event as never });
    const elsewhere = {
      ...event,
      involvedObject: { ...(event.involvedObject as object), namespace: "simkube" },
    };
    await assert.rejects(
      core.createNamespacedEvent({
        namespace: "simkube",
        body: { ...elsewhere, metadata: { ...event.metadata, namespace: "simkube" } } as never,
      }),
      (err: { code?: number }) => err.code === 403,
    );
  },
};

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});

registerClusterCases("test/cluster/reschedule-notice.test.ts", suite, [
  noDeleteWebhook,
  eventOnSimulation,
  eventsOnlyInDefault,
  doubleAgrees,
]);
