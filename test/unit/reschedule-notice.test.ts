// mutate-create's notice on a Simulation asking for rescheduling its deployment cannot serve
// (functions/mutate-create/reschedule-notice.ts): once per Simulation (name and uid) per process, a warning
// and a Warning Event in "default" about it; nothing for a Simulation that does not ask; a failed Event
// logged, never thrown.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRescheduleNotice } from "../../functions/mutate-create/reschedule-notice.js";
import { KubeError, type KubeObject } from "../../shared/kube/api.js";
import { buildSimulation, TEST_SIM_NAME, TEST_SIM_UID } from "../support/builders.js";
import { capturingLog } from "../support/logs.js";
import { createMemoryKube } from "../support/memory-kube.js";

const AT = new Date("2026-12-06T10:11:12.345Z");

function recording() {
  const created: KubeObject[] = [];
  const kube = createMemoryKube();
  const create = kube.create.bind(kube);
  kube.create = async (object) => {
    created.push(object);
    return create(object);
  };
  return { kube, created };
}

describe("createRescheduleNotice", () => {
  it("once per Simulation: a warning and an Event about it, in default, whole-second timestamps", async () => {
    const { kube, created } = recording();
    const { log, lines } = capturingLog();
    const notice = createRescheduleNotice(kube, log, () => AT);
    const asking = buildSimulation({ rescheduleInterruptedBarePods: true });
    await notice(asking);
    await notice(asking);
    await notice(buildSimulation({ rescheduleInterruptedBarePods: true }));
    assert.equal(created.length, 1);
    assert.deepEqual(created[0], {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${TEST_SIM_NAME}.`, namespace: "default" },
      involvedObject: {
        apiVersion: "simkube.io/v1",
        kind: "Simulation",
        name: TEST_SIM_NAME,
        uid: TEST_SIM_UID,
      },
      reason: "ReschedulingNotServed",
      message: created[0]?.message,
      type: "Warning",
      source: { component: "simkube-fn-mutate-create" },
      firstTimestamp: "2026-12-06T10:11:12Z",
      lastTimestamp: "2026-12-06T10:11:12Z",
      count: 1,
    });
    assert.match(String(created[0]?.message), /rescheduleInterruptedBarePods is true.*--no-reschedule/);
    const warnings = lines.filter((l) => l.level === "warn");
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]?.sim, TEST_SIM_NAME);
    // The same name made again is another Simulation: it is told too.
    await notice(buildSimulation({ rescheduleInterruptedBarePods: true, uid: "another-uid" }));
    assert.equal(created.length, 2);
  });

  it("nothing for a Simulation that does not ask", async () => {
    const { kube, created } = recording();
    const { log, lines } = capturingLog();
    const notice = createRescheduleNotice(kube, log);
    await notice(buildSimulation({ rescheduleInterruptedBarePods: false }));
    await notice(buildSimulation());
    assert.deepEqual(created, []);
    assert.deepEqual(lines, []);
  });

  it("an Event the API refuses is logged, never thrown, and not tried again for that Simulation", async () => {
    const kube = createMemoryKube();
    let calls = 0;
    kube.create = async () => {
      calls++;
      throw new KubeError(403, "Forbidden", "events is forbidden");
    };
    const { log, lines } = capturingLog();
    const notice = createRescheduleNotice(kube, log);
    const asking = buildSimulation({ rescheduleInterruptedBarePods: true });
    await notice(asking);
    await notice(asking);
    assert.equal(calls, 1);
    const failed = lines.find((l) => l.msg === "could not record the Event on the Simulation");
    assert.match(String(failed?.err), /forbidden/);
  });
});
