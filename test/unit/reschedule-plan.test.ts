import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildClone,
  type Judgement,
  judgeDeletion,
  triageDelete,
} from "../../functions/reschedule-delete/plan.js";
import type { AdmissionRequest } from "../../shared/admission/review.js";
import {
  ADMIN_USER,
  CONTROLLER_MANAGER_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
  POD_GC_USER,
  SIMKUBE_DRIVER_USER,
} from "../../shared/base/identities.js";
import type { Pod } from "../../shared/kube/pod.js";
import { pinToVirtualNodes } from "../../shared/simulation/virtual-nodes.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  disruptionTarget,
  type PodOptions,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_DRIVER_ROOT_NAME,
} from "../support/builders.js";

const DRIVER_USERS = [SIMKUBE_DRIVER_USER];
const TERMINATING = { deletionTimestamp: "2024-01-01T00:05:00Z", deletionGracePeriodSeconds: 30 };

function judge(options: PodOptions, username: string | undefined): Judgement {
  return judgeDeletion({ pod: buildPod(options) as Pod, username, driverUsers: DRIVER_USERS });
}

function outcome(j: Judgement): string {
  return j.interrupted ? `interrupted:${j.cause}:${j.detail}` : `skip:${j.reason}`;
}

describe("judgeDeletion", () => {
  const cases: Array<[string, PodOptions, string | undefined, string]> = [
    ["a user deletes a Running pod", {}, ADMIN_USER, `interrupted:deleted-by-user:${ADMIN_USER}`],
    ["the driver replays production's delete", {}, SIMKUBE_DRIVER_USER, "skip:driver-delete"],
    ["the garbage collector cascades a teardown", {}, GARBAGE_COLLECTOR_USER, "skip:teardown-controller"],
    ["namespace deletion", {}, NAMESPACE_CONTROLLER_USER, "skip:teardown-controller"],
    [
      "controller-manager without SA credentials, no condition",
      {},
      CONTROLLER_MANAGER_USER,
      "skip:controller-manager",
    ],
    [
      "controller-manager without SA credentials, podgc with DisruptionTarget",
      { phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] },
      CONTROLLER_MANAGER_USER,
      "interrupted:disruption-target:DeletionByPodGC",
    ],
    ["a Pending pod", { phase: "Pending" }, ADMIN_USER, "skip:not-running"],
    ["a Failed pod without condition", { phase: "Failed" }, ADMIN_USER, "skip:not-running"],
    [
      "a Succeeded pod, even disrupted",
      { phase: "Succeeded", conditions: [disruptionTarget()] },
      KWOK_USER,
      "skip:succeeded",
    ],
    ["final phase without DisruptionTarget", TERMINATING, KWOK_USER, "skip:final-phase"],
    [
      "final phase of an eviction (KWOK's delete)",
      { ...TERMINATING, conditions: [disruptionTarget("EvictionByEvictionAPI")] },
      KWOK_USER,
      "interrupted:disruption-target:EvictionByEvictionAPI",
    ],
    [
      "taint manager's graceful delete",
      { conditions: [disruptionTarget("DeletionByTaintManager")] },
      NODE_CONTROLLER_USER,
      "interrupted:disruption-target:DeletionByTaintManager",
    ],
    [
      "pod GC force-deletes a Failed orphan",
      { phase: "Failed", conditions: [disruptionTarget("DeletionByPodGC")] },
      POD_GC_USER,
      "interrupted:disruption-target:DeletionByPodGC",
    ],
    [
      "a DisruptionTarget with status False does not count",
      { ...TERMINATING, conditions: [disruptionTarget("EvictionByEvictionAPI", "False")] },
      KWOK_USER,
      "skip:final-phase",
    ],
    [
      "a Pending pod with DisruptionTarget is not running",
      { phase: "Pending", conditions: [disruptionTarget("PreemptionByScheduler")] },
      "system:kube-scheduler",
      "skip:not-running",
    ],
    [
      "the driver's delete outranks a condition",
      { conditions: [disruptionTarget("TerminationByKubelet")] },
      SIMKUBE_DRIVER_USER,
      "skip:driver-delete",
    ],
    ["no user at all", {}, undefined, "skip:no-user"],
  ];
  for (const [name, pod, user, expected] of cases) {
    it(name, () => assert.equal(outcome(judge(pod, user)), expected));
  }

  it("judges the final phase by the condition alone, whoever sends it", () => {
    const pod = { ...TERMINATING, conditions: [disruptionTarget("DeletionByTaintManager")] };
    assert.equal(
      outcome(judge(pod, SIMKUBE_DRIVER_USER)),
      "interrupted:disruption-target:DeletionByTaintManager",
    );
  });
});

function request(review: ReturnType<typeof buildDeleteReview>): AdmissionRequest {
  assert.ok(review.request);
  return review.request;
}

describe("triageDelete", () => {
  it("passes an interrupted bare simulation pod on, with names from oldObject", () => {
    const triage = triageDelete(
      request(buildDeleteReview({ pod: buildPod(), user: ADMIN_USER, name: "" })),
      DRIVER_USERS,
    );
    assert.ok("candidate" in triage);
    assert.equal(triage.candidate.name, "the-pod");
    assert.equal(triage.candidate.namespace, "test-namespace");
    assert.equal(triage.candidate.uid, "asdf1234");
    assert.equal(triage.candidate.directRoot?.name, TEST_DRIVER_ROOT_NAME);
  });

  const skips: Array<[string, AdmissionRequest, string]> = [
    ["a CREATE", request(buildCreateReview({ pod: buildPod() })), "not-delete"],
    ["a dry run", request(buildDeleteReview({ pod: buildPod(), dryRun: true })), "dry-run"],
    [
      "owned by a ReplicaSet",
      request(
        buildDeleteReview({ pod: buildPod({ ownerReferences: [rootOwnerRef(), replicaSetOwnerRef()] }) }),
      ),
      "not-bare",
    ],
    [
      "no owners at all",
      request(buildDeleteReview({ pod: buildPod({ ownerReferences: [] }) })),
      "not-in-simulation",
    ],
    ["not Running", request(buildDeleteReview({ pod: buildPod({ phase: "Succeeded" }) })), "succeeded"],
    [
      "the driver's delete",
      request(buildDeleteReview({ pod: buildPod(), user: SIMKUBE_DRIVER_USER })),
      "driver-delete",
    ],
    [
      "no oldObject",
      { ...request(buildDeleteReview({ pod: buildPod() })), oldObject: null },
      "no-old-object",
    ],
    [
      "not a pod",
      {
        ...request(buildDeleteReview({ pod: buildPod() })),
        kind: { group: "", version: "v1", kind: "ConfigMap" },
      },
      "not-a-pod",
    ],
    [
      "no uid",
      request(
        buildDeleteReview({
          pod: { ...buildPod(), metadata: { name: "the-pod", namespace: "test-namespace" } },
        }),
      ),
      "no-uid",
    ],
  ];
  for (const [name, req, reason] of skips) {
    it(`skips ${name}`, () => assert.deepEqual(triageDelete(req, DRIVER_USERS), { skip: reason }));
  }
});

describe("buildClone", () => {
  function interruptedPod(name = "the-pod", extraAnnotations: Record<string, string> = {}): Pod {
    const pod = buildPod({
      name,
      ownerReferences: [],
      labels: { "simkube.io/kwok-whatever": "1234", "some.kubernetes.io/stuff": "baz" },
      annotations: {
        "simkube.io/foo": "bar",
        "some.kubernetes.io/thing": "baz",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        ...extraAnnotations,
      },
      nodeName: "1-2-3-4.internal",
    }) as Pod;
    Object.assign(pod.metadata ?? {}, { generation: 2, managedFields: [{ manager: "kwok" }] });
    return pod;
  }

  it("first reschedule: SimKube's clone, owned by the root, pinned to virtual nodes", () => {
    const pod = interruptedPod();
    const clone = buildClone(pod, rootOwnerRef());
    assert.deepEqual(clone, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "the-pod-clone-1",
        namespace: "test-namespace",
        labels: { foo: "bar", "some.kubernetes.io/stuff": "baz" },
        ownerReferences: [rootOwnerRef()],
        annotations: {
          "some.kubernetes.io/thing": "baz",
          "static.simkube.io/original-owner": "the-pod",
          "reschedule.simkube-fn/clone-of": JSON.stringify([pod.metadata?.uid]),
        },
      },
      spec: {
        containers: [{ name: "container-0", image: "nginx:1.27" }],
        nodeSelector: { type: "virtual" },
        tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
      },
    });
    assert.equal(pod.metadata?.name, "the-pod", "input untouched");
    assert.equal(pod.spec?.nodeName, "1-2-3-4.internal");
    assert.equal(pod.spec?.nodeSelector, undefined, "input untouched");
  });

  it("subsequent reschedule keeps the original owner and the static annotations", () => {
    const pod = interruptedPod("the-pod-clone-42", {
      "static.simkube.io/original-owner": "the-pod",
      "static.simkube.io/pod-spec-stable-hash": "17506812802394981455",
      "static.simkube.io/pod-sequence-number": "3",
      "reschedule.simkube-fn/clone-of": JSON.stringify(["uid-of-the-pod"]),
    });
    const clone = buildClone(pod, rootOwnerRef());
    assert.equal(clone.metadata?.name, "the-pod-clone-43");
    assert.deepEqual(clone.metadata?.annotations, {
      "some.kubernetes.io/thing": "baz",
      "static.simkube.io/original-owner": "the-pod",
      "static.simkube.io/pod-spec-stable-hash": "17506812802394981455",
      "static.simkube.io/pod-sequence-number": "3",
      // Its line: the pod it replaces, then the pod that one replaced.
      "reschedule.simkube-fn/clone-of": JSON.stringify([pod.metadata?.uid, "uid-of-the-pod"]),
    });
  });

  it("keeps the SimulationRoot owner reference and drops ephemeral containers", () => {
    const pod = buildPod({
      spec: {
        containers: [{ name: "c", image: "i" }],
        ephemeralContainers: [{ name: "debug", image: "busybox" }],
        nodeName: "n",
      },
    }) as Pod;
    const clone = buildClone(pod, rootOwnerRef());
    assert.deepEqual(clone.metadata?.ownerReferences, [rootOwnerRef()]);
    assert.deepEqual(clone.spec?.containers, [{ name: "c", image: "i" }]);
    assert.equal(clone.spec?.ephemeralContainers, undefined);
    assert.equal(clone.spec?.nodeName, undefined);
    assert.equal(clone.metadata?.uid, undefined);
    assert.equal(clone.metadata?.resourceVersion, undefined);
    assert.equal(clone.status, undefined);
  });

  it("owns the clone by the root it is given and by nothing the pod carried", () => {
    const pod = buildPod({
      ownerReferences: [rootOwnerRef("someone-elses-root", "x"), replicaSetOwnerRef()],
    });
    const clone = buildClone(pod as Pod, rootOwnerRef());
    assert.deepEqual(clone.metadata?.ownerReferences, [rootOwnerRef()]);
    assert.equal(clone.metadata?.namespace, pod.metadata?.namespace, "the pod's own namespace");
  });
});

describe("pinToVirtualNodes", () => {
  const KWOK = { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "adds both when the pod has neither",
      { containers: [] },
      { containers: [], nodeSelector: { type: "virtual" }, tolerations: [KWOK] },
    ],
    [
      "overrides a nodeSelector aimed at real nodes, keeps the other keys",
      { nodeSelector: { type: "real", zone: "a" } },
      { nodeSelector: { type: "virtual", zone: "a" }, tolerations: [KWOK] },
    ],
    [
      "replaces a wider kwok-provider toleration, keeps the others",
      {
        tolerations: [
          { key: "kwok-provider", operator: "Exists" },
          { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" },
        ],
      },
      {
        nodeSelector: { type: "virtual" },
        tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }, KWOK],
      },
    ],
    [
      "leaves SimKube's own pinning as it was",
      { nodeSelector: { type: "virtual" }, tolerations: [KWOK] },
      { nodeSelector: { type: "virtual" }, tolerations: [KWOK] },
    ],
    [
      "repairs malformed fields instead of keeping them",
      { nodeSelector: "x", tolerations: { key: "kwok-provider" } },
      { nodeSelector: { type: "virtual" }, tolerations: [KWOK] },
    ],
  ];
  for (const [name, spec, expected] of cases) {
    it(name, () => {
      assert.deepEqual(pinToVirtualNodes(spec, "only"), expected);
    });
  }
});
