// The cluster replay's pure parts: what SimKube's driver applies for a traced object (namespace, labels, owner,
// pod templates of every workload kind), and how observed pods are judged against the trace's lifecycles.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  driverNamespace,
  driverObject,
  podTemplatePaths,
  truncateLabelValue,
  virtualNamespaceName,
} from "../../functions/cli/replay/driver.js";
import {
  type ExpectedLifecycle,
  expectedLifecycles,
  judgeLifecycle,
  type ObservedPod,
  ownerRows,
} from "../../functions/cli/replay/lifecycle-match.js";
import { observePod, tracedOwner } from "../../functions/cli/replay/pod-observer.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { buildTrace, finished, ownersTraceSpec, running } from "../support/trace-builder.js";

const root: KubeObject = {
  apiVersion: "simkube.io/v1",
  kind: "SimulationRoot",
  metadata: { name: "sk-test-sim-driver-root", uid: "root-uid" },
};
const ctx = { simName: "test-sim", virtualNsPrefix: "virtual", root };
const template = () => ({
  metadata: { labels: { app: "web" } },
  spec: {
    containers: [{ name: "c", image: "i", ports: [{ containerPort: 80 }] }],
    initContainers: [{ name: "init", image: "i", ports: [{ containerPort: 81 }] }],
    tolerations: [{ key: "other", operator: "Exists" }],
  },
});
// biome-ignore lint/suspicious/noExplicitAny: the tests read nested JSON the driver built
type Json = Record<string, any>;

test("driver: a Deployment moves to its virtual namespace, labelled, owned by the root, without status", () => {
  const traced = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "prod-uid",
      resourceVersion: "7",
      labels: { team: "a" },
    },
    spec: { replicas: 2, template: template() },
    status: { readyReplicas: 2 },
  };
  const out = driverObject(traced, ctx) as Json;
  assert.equal(out.metadata.namespace, "virtual-shop");
  assert.deepEqual(out.metadata.labels, {
    team: "a",
    "simkube.io/simulation": "test-sim",
    "app.kubernetes.io/name": "web",
    "simkube.io/virtual": "true",
  });
  assert.deepEqual(out.metadata.ownerReferences, [
    { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "sk-test-sim-driver-root", uid: "root-uid" },
  ]);
  assert.equal(out.status, undefined);
  assert.equal(out.metadata.uid, undefined, "a production uid cannot be applied");
  assert.equal(out.metadata.resourceVersion, undefined);
  const t = out.spec.template;
  assert.equal(t.metadata.annotations["static.simkube.io/original-namespace"], "shop");
  assert.deepEqual(t.spec.nodeSelector, { type: "virtual" });
  assert.deepEqual(t.spec.tolerations, [
    { key: "other", operator: "Exists" },
    { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
  ]);
  assert.equal(t.spec.containers[0].ports, undefined);
  assert.equal(t.spec.initContainers[0].ports, undefined);
  assert.equal((traced.spec.template.spec.containers[0] as Json).ports.length, 1, "the input is not changed");
});

test("driver: every workload kind's pod template is found (CronJob's inside its jobTemplate, a bare Pod itself)", () => {
  for (const kind of ["ReplicaSet", "StatefulSet", "DaemonSet", "Job"]) {
    const out = driverObject(
      {
        apiVersion: "apps/v1",
        kind,
        metadata: { name: "x", namespace: "n" },
        spec: { template: template() },
      },
      ctx,
    ) as Json;
    assert.deepEqual(out.spec.template.spec.nodeSelector, { type: "virtual" }, kind);
  }
  const cron = driverObject(
    {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "c", namespace: "default" },
      spec: { schedule: "* * * * *", jobTemplate: { spec: { template: template() } } },
    },
    ctx,
  ) as Json;
  const cronTemplate = cron.spec.jobTemplate.spec.template;
  assert.equal(cronTemplate.metadata.annotations["static.simkube.io/original-namespace"], "default");
  assert.equal(cronTemplate.spec.containers[0].ports, undefined);
  const pod = driverObject(
    { apiVersion: "v1", kind: "Pod", ...template(), metadata: { name: "p", namespace: "t" } },
    ctx,
  ) as Json;
  assert.equal(pod.metadata.annotations["static.simkube.io/original-namespace"], "t");
  assert.deepEqual(pod.spec.nodeSelector, { type: "virtual" });
});

test("driver: the trace config's template paths win over the defaults; unknown kinds have none", () => {
  const config = {
    trackedObjects: {
      "apps/v1.Deployment": {
        trackLifecycle: false,
        skipOwned: false,
        podSpecTemplatePaths: ["/spec/other"],
      },
    },
  };
  assert.deepEqual(podTemplatePaths({ apiVersion: "apps/v1", kind: "Deployment" }, config), ["/spec/other"]);
  assert.deepEqual(podTemplatePaths({ apiVersion: "v1", kind: "ConfigMap" }, undefined), []);
});

test("driver: label values are cut to 63 characters ending alphanumeric; namespaces owned by the root", () => {
  assert.equal(truncateLabelValue(`${"a".repeat(62)}-b`), "a".repeat(62));
  assert.equal(truncateLabelValue("short"), "short");
  assert.equal(virtualNamespaceName("virtual", "shop"), "virtual-shop");
  const ns = driverNamespace("virtual-shop", ctx) as Json;
  assert.equal(ns.metadata.labels["simkube.io/virtual"], "true");
  assert.equal(ns.metadata.ownerReferences[0].uid, "root-uid");
});

const pod = (o: Partial<ObservedPod>): ObservedPod => ({
  name: "p",
  owner: "Pod t/p",
  clone: false,
  mutated: true,
  hash: "1",
  sequence: 0,
  ...o,
});

test("lifecycles: a Finished one matches when the pods completed (end - start) / speed after the first was Ready", () => {
  const e: ExpectedLifecycle = {
    owner: "Pod t/p",
    hash: "1",
    sequence: 0,
    lifecycle: finished(100, 130),
    onlyHash: false,
    count: 1,
  };
  assert.equal(judgeLifecycle(e, [pod({ runningAt: 1000, succeededAt: 1015 })], 2).matched, true);
  assert.equal(
    judgeLifecycle(e, [pod({ runningAt: 1000, succeededAt: 1030 })], 2).matched,
    false,
    "unscaled",
  );
  assert.equal(judgeLifecycle(e, [pod({ runningAt: 1000 })], 2).matched, false, "never completed");
  // The clone of an interrupted pod completes on the original's schedule.
  const chain = [
    pod({ runningAt: 1000, phase: "Failed" }),
    pod({ name: "p-clone-1", clone: true, runningAt: 1005, succeededAt: 1016 }),
  ];
  assert.equal(judgeLifecycle(e, chain, 2).matched, true);
  // Sequence numbers count per hash: the second pod of this hash takes lifecycle 1 mod 1 = 0.
  const second = [pod({ sequence: 1, runningAt: 1000, succeededAt: 1015 })];
  assert.equal(judgeLifecycle(e, second, 2).matched, true);
  assert.equal(judgeLifecycle({ ...e, count: 2 }, second, 2).detail, "no pod");
  const otherHash = [pod({ hash: "2", runningAt: 1000, succeededAt: 1015 })];
  assert.equal(judgeLifecycle(e, otherHash, 2).detail, "no pod");
  // An owner with one hash: mutate-create used its lifecycles whatever the pod's hash, and so does the judge.
  assert.equal(judgeLifecycle({ ...e, onlyHash: true }, otherHash, 2).matched, true);
});

test("lifecycles: a Running one matches while a pod still runs and none completed", () => {
  const e: ExpectedLifecycle = {
    owner: "Pod t/p",
    hash: "1",
    sequence: 0,
    lifecycle: running(100),
    onlyHash: true,
    count: 1,
  };
  assert.equal(judgeLifecycle(e, [pod({ phase: "Running", runningAt: 1 })], 1).matched, true);
  assert.equal(
    judgeLifecycle(e, [pod({ phase: "Succeeded", runningAt: 1, succeededAt: 2 })], 1).matched,
    false,
  );
});

test("lifecycles: expected from the trace, one row per owner with its pods, clones and interruptions", () => {
  const trace = buildTrace(
    ownersTraceSpec([
      { gvk: "v1.Pod", nsName: "t/a", lifecycles: [finished(0, 10)] },
      { gvk: "batch/v1.CronJob", nsName: "default/c", lifecycles: [finished(0, 5), finished(60, 65)] },
    ]),
  );
  const expected = expectedLifecycles(trace);
  assert.deepEqual(
    expected.map((e) => [e.owner, e.sequence]),
    [
      ["Pod t/a", 0],
      ["CronJob default/c", 0],
      ["CronJob default/c", 1],
    ],
  );
  const pods = [
    pod({ name: "a", owner: "Pod t/a", hash: expected[0]?.hash, runningAt: 0, succeededAt: 10 }),
    pod({ name: "a-clone-1", owner: "Pod t/a", clone: true, mutated: false }),
  ];
  const verdicts = expected.map((e) => judgeLifecycle(e, pods, 1));
  assert.deepEqual(ownerRows(pods, verdicts, ["a"]), [
    {
      owner: "Pod t/a",
      podsCreated: 2,
      podsMutated: 1,
      lifecyclesExpected: 1,
      lifecyclesMatched: 1,
      interruptions: 1,
      clones: 1,
    },
    {
      owner: "CronJob default/c",
      podsCreated: 0,
      podsMutated: 0,
      lifecyclesExpected: 2,
      lifecyclesMatched: 0,
      interruptions: 0,
      clones: 0,
    },
  ]);
});

test("observer: a pod's traced owner is found up its controllers to the object the root owns", () => {
  const rootRef = { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "r", uid: "root-uid" };
  const job = {
    kind: "Job",
    metadata: {
      name: "c-123",
      uid: "job",
      ownerReferences: [
        { apiVersion: "batch/v1", kind: "CronJob", name: "c", uid: "cron", controller: true },
      ],
    },
  };
  const cron = { kind: "CronJob", metadata: { name: "c", uid: "cron", ownerReferences: [rootRef] } };
  const controllers = new Map<string, KubeObject>([
    ["job", job as KubeObject],
    ["cron", cron as KubeObject],
  ]);
  const annotations = { "static.simkube.io/original-namespace": "default" };
  const jobPod = {
    metadata: {
      name: "c-123-x",
      annotations,
      ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: "c-123", uid: "job", controller: true }],
    },
  };
  assert.equal(tracedOwner(jobPod as KubeObject, "root-uid", controllers), "CronJob default/c");
  const bare = { metadata: { name: "b", annotations, ownerReferences: [rootRef] } };
  assert.equal(tracedOwner(bare as KubeObject, "root-uid", controllers), "Pod default/b");
  const clone = {
    metadata: { name: "b-clone-2", annotations: { ...annotations, "static.simkube.io/original-owner": "b" } },
  };
  assert.equal(tracedOwner(clone as KubeObject, "root-uid", controllers), "Pod default/b");

  // A poll that lists the pod but not its Job (created after the Jobs were listed, or deleted by the
  // CronJob's history limit) keeps the owner an earlier poll found, and only then.
  const withoutJob = new Map<string, KubeObject>([["cron", cron as KubeObject]]);
  const earlier = observePod(jobPod as never, "root-uid", controllers);
  assert.equal(earlier.owner, "CronJob default/c");
  assert.equal(observePod(jobPod as never, "root-uid", withoutJob, earlier).owner, "CronJob default/c");
  assert.equal(observePod(jobPod as never, "root-uid", withoutJob).owner, "Job default/c-123");
  // A CronJob is never listed: a chain ending there is complete, and wins over an earlier cut-short one.
  const cutShort = { ...earlier, owner: "Job default/c-123" };
  assert.equal(observePod(jobPod as never, "root-uid", controllers, cutShort).owner, "CronJob default/c");
});
