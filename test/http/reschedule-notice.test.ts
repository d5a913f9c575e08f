// A Simulation asks for rescheduling and the deployment has no DELETE webhook (RESCHEDULE_SERVED=false, what
// `manifests --no-reschedule` renders): `simkube-fn serve mutate-create` (the built bundle) against the API
// double, called by it as its webhook, logs a warning and records a Warning Event on the Simulation, once per
// Simulation however many pods; a Simulation that does not ask gets neither; and an Event the API refuses
// (here: no "default" namespace) is logged, the pods admitted as usual.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  buildDriverBarePod,
  buildNamespace,
  buildSimulation,
  buildSimulationRoot,
  TEST_SIM_NAME,
  TEST_SIM_UID,
} from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import { type Served, serveFunction } from "../support/serve-cli.js";

const VNS = "virtual-notice";
const WARNING =
  "spec.rescheduleInterruptedBarePods is true, but this simkube-fn deployment has no DELETE webhook";

const running: { api: FakeApiServer; served: Served }[] = [];

after(async () => {
  for (const { api, served } of running) {
    await stopChild(served.child);
    await api.close();
  }
  await removeAllKubeconfigs();
});

/** The double with the Simulation and its root, and mutate-create registered as its webhook. */
async function world(options: { reschedule: boolean; served: string; namespaces: string[] }) {
  const api = await startFakeApiServer({ namespaces: [VNS, ...options.namespaces] });
  api.store.put(buildSimulation({ rescheduleInterruptedBarePods: options.reschedule }));
  api.store.put(buildSimulationRoot());
  api.store.put(buildNamespace({ name: "simkube" }));
  const served = await serveFunction("mutate-create", {
    SIM_NAME: TEST_SIM_NAME,
    KUBECONFIG: await writeKubeconfig(api.url),
    SEQUENCE_STORE: "memory",
    RESCHEDULE_SERVED: options.served,
    LOG_LEVEL: "info",
  });
  running.push({ api, served });
  api.webhooks = [
    { name: "mutate-create.simkube.io", url: served.url, operations: ["CREATE"], resources: ["pods"] },
  ];
  const createPods = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const created = await api.request(
        "POST",
        `/api/v1/namespaces/${VNS}/pods`,
        buildDriverBarePod(`p-${i}`, VNS),
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const stored = api.store.get<KubeObject & { spec: { nodeSelector?: unknown } }>({
        kind: "Pod",
        namespace: VNS,
        name: `p-${i}`,
      });
      assert.deepEqual(stored?.spec.nodeSelector, { type: "virtual" }, "admitted and mutated as usual");
    }
  };
  return { api, served, createPods };
}

const warnings = (served: Served) =>
  served
    .output()
    .split("\n")
    .filter((line) => line.includes(WARNING));

/** Until the notice (never awaited by the review) has been written or given up on. */
async function settled(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("mutate-create tells a Simulation asking for rescheduling that the deployment cannot serve it", {
  timeout: 60_000,
}, () => {
  it("a warning in the log and one Warning Event on the Simulation, in default, for many pods", async () => {
    const { api, served, createPods } = await world({
      reschedule: true,
      served: "false",
      namespaces: ["default"],
    });
    await createPods(3);
    await settled(() => api.store.list("Event", "default").length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = api.store.list<KubeObject & Record<string, unknown>>("Event", "default");
    assert.equal(events.length, 1, "once per Simulation, not per pod");
    const [event] = events;
    assert.deepEqual(event?.involvedObject, {
      apiVersion: "simkube.io/v1",
      kind: "Simulation",
      name: TEST_SIM_NAME,
      uid: TEST_SIM_UID,
    });
    assert.equal(event?.type, "Warning");
    assert.equal(event?.reason, "ReschedulingNotServed");
    assert.match(String(event?.message), /--no-reschedule/);
    assert.equal(warnings(served).length, 1, served.output());
    assert.match(warnings(served)[0] ?? "", /"level":"warn"/);
  });

  it("nothing when the Simulation does not ask, or the deployment serves it (or does not say)", async () => {
    for (const [reschedule, servedSetting] of [
      [false, "false"],
      [true, "true"],
      [true, ""],
    ] as const) {
      const { api, served, createPods } = await world({
        reschedule,
        served: servedSetting,
        namespaces: ["default"],
      });
      await createPods(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const what = `reschedule ${reschedule}, RESCHEDULE_SERVED "${servedSetting}"`;
      assert.deepEqual(api.store.list("Event", "default"), [], what);
      assert.deepEqual(warnings(served), [], what);
    }
  });

  it("an Event the API refuses is logged and changes nothing for the pods", async () => {
    const { served, createPods } = await world({ reschedule: true, served: "false", namespaces: [] });
    await createPods(2);
    await settled(() => served.output().includes("could not record the Event on the Simulation"));
    assert.match(served.output(), /could not record the Event on the Simulation/);
    assert.equal(warnings(served).length, 1);
  });
});
