import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  checkDeletionClaim,
  checkOwnedByRoot,
  checkSimulationRoot,
  checkVirtualNamespace,
  confirmLivePod,
  type RootRef,
} from "../../functions/reschedule-delete/live-checks.js";
import { type Candidate, triageDelete } from "../../functions/reschedule-delete/plan.js";
import { ADMIN_USER, SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import type { KubeObject, OwnerReference } from "../../shared/kube/api.js";
import type { Pod } from "../../shared/kube/pod.js";
import {
  buildDeleteReview,
  buildNamespace,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  disruptionTarget,
  type PodOptions,
  replicaSetOwnerRef,
  rootOwnerRef,
  TEST_ROOT_UID,
  TEST_SIM_ROOT_NAME,
} from "../support/builders.js";

const ROOT: RootRef = {
  apiVersion: "simkube.io/v1",
  kind: "SimulationRoot",
  name: TEST_SIM_ROOT_NAME,
  uid: TEST_ROOT_UID,
};
const SIM_ROOT_REF = rootOwnerRef(TEST_SIM_ROOT_NAME);
const OTHER_ROOT_REF = rootOwnerRef("sk-other-sim-driver-root", "other-root-uid");

describe("checkSimulationRoot", () => {
  const sim = buildSimulation();
  const cases: Array<[string, KubeObject | undefined, string]> = [
    ["the driver's root of this Simulation", buildSimulationRoot({ name: TEST_SIM_ROOT_NAME }), "root"],
    ["no root (the simulation ended, or never started)", undefined, "root-gone"],
    ["owned by another Simulation", buildSimulationRoot({ simName: "other-sim" }), "not-in-simulation"],
    [
      "owned by an earlier Simulation of the same name (another uid)",
      buildSimulationRoot({ simUid: "deleted-and-recreated" }),
      "not-in-simulation",
    ],
  ];
  for (const [name, root, expected] of cases) {
    it(name, () => {
      const result = checkSimulationRoot(root, sim);
      assert.equal("skip" in result ? result.skip : "root", expected);
    });
  }

  it("returns the reference to match, with the root's own name and uid", () => {
    assert.deepEqual(checkSimulationRoot(buildSimulationRoot({ name: TEST_SIM_ROOT_NAME }), sim), {
      root: ROOT,
    });
  });

  it("owned by nothing is not the simulation's", () => {
    const root = buildSimulationRoot();
    delete root.metadata?.ownerReferences;
    assert.deepEqual(checkSimulationRoot(root, sim), { skip: "not-in-simulation" });
  });
});

describe("checkVirtualNamespace", () => {
  const cases: Array<[string, KubeObject | undefined, string | undefined]> = [
    ["owned by the root and labelled virtual", buildVirtualNamespace(SIM_ROOT_REF), undefined],
    ["kube-system", buildNamespace({ name: "kube-system" }), "namespace-not-virtual"],
    [
      "owned by the root, not labelled",
      buildNamespace({ ownerReferences: [SIM_ROOT_REF] }),
      "namespace-not-virtual",
    ],
    [
      "labelled simkube.io/virtual=false",
      buildVirtualNamespace(SIM_ROOT_REF, { labels: { "simkube.io/virtual": "false" } }),
      "namespace-not-virtual",
    ],
    [
      "labelled, owned by nothing",
      buildVirtualNamespace(SIM_ROOT_REF, { ownerReferences: [] }),
      "namespace-not-virtual",
    ],
    [
      "labelled, owned by another simulation's root",
      buildVirtualNamespace(OTHER_ROOT_REF),
      "namespace-not-virtual",
    ],
    [
      "labelled, owned by an earlier root of the same name (another run)",
      buildVirtualNamespace(rootOwnerRef(TEST_SIM_ROOT_NAME, "earlier-run")),
      "namespace-not-virtual",
    ],
    ["not found", undefined, "namespace-not-virtual"],
  ];
  for (const [name, namespace, expected] of cases) {
    it(name, () => {
      assert.equal(checkVirtualNamespace(namespace, ROOT), expected);
    });
  }
});

describe("confirmLivePod", () => {
  function candidateOf(options: PodOptions = {}, user = ADMIN_USER): Candidate {
    const triage = triageDelete(
      buildDeleteReview({ pod: buildPod({ ownerReferences: [SIM_ROOT_REF], ...options }), user }).request ?? {
        uid: "",
        operation: "DELETE",
      },
      [SIMKUBE_DRIVER_USER],
    );
    assert.ok("candidate" in triage);
    return triage.candidate;
  }
  const live = (options: PodOptions = {}) => buildPod({ ownerReferences: [SIM_ROOT_REF], ...options }) as Pod;

  it("the same pod, still Running after a user's delete", () => {
    assert.equal(confirmLivePod(live(), candidateOf()), undefined);
  });
  it("gone", () => {
    assert.equal(confirmLivePod(undefined, candidateOf()), "pod-gone");
  });
  it("another pod of the same name", () => {
    assert.equal(confirmLivePod(live({ uid: "another" }), candidateOf()), "uid-mismatch");
  });
  it("the review's namespace differs from the pod's", () => {
    assert.equal(confirmLivePod(live({ namespace: "elsewhere" }), candidateOf()), "uid-mismatch");
  });
  it("a disruption the live pod does not show", () => {
    const candidate = candidateOf({ conditions: [disruptionTarget()] });
    assert.equal(confirmLivePod(live(), candidate), "live-pod-not-interrupted");
    assert.equal(confirmLivePod(live({ conditions: [disruptionTarget()] }), candidate), undefined);
  });
});

describe("checkOwnedByRoot", () => {
  const cases: Array<[string, OwnerReference[], string]> = [
    ["owned by the root alone: a bare pod of this simulation", [SIM_ROOT_REF], "owned"],
    ["no owners at all", [], "not-owned-by-root"],
    ["another simulation's root", [OTHER_ROOT_REF], "not-owned-by-root"],
    [
      "a root of the same name from an earlier run",
      [rootOwnerRef(TEST_SIM_ROOT_NAME, "earlier")],
      "not-owned-by-root",
    ],
    ["the root and a ReplicaSet", [SIM_ROOT_REF, replicaSetOwnerRef()], "not-bare"],
    [
      "the root and another simkube.io object",
      [SIM_ROOT_REF, rootOwnerRef("sk-x-metaroot", "m")],
      "not-owned-by-root",
    ],
    ["a malformed reference", [null as unknown as OwnerReference], "not-owned-by-root"],
  ];
  for (const [name, ownerReferences, expected] of cases) {
    it(name, () => {
      const result = checkOwnedByRoot(buildPod({ ownerReferences }) as Pod, ROOT);
      assert.equal("skip" in result ? result.skip : "owned", expected);
    });
  }

  it("hands back the pod's own reference (with its flags) for the clone to keep", () => {
    const ref = { ...SIM_ROOT_REF, blockOwnerDeletion: true };
    assert.deepEqual(checkOwnedByRoot(buildPod({ ownerReferences: [ref] }) as Pod, ROOT), { owner: ref });
  });
});

describe("checkDeletionClaim: the deletion shown is the one the review describes", () => {
  const candidate = (options: PodOptions = {}, user = ADMIN_USER): Candidate => {
    const request = buildDeleteReview({
      pod: buildPod({ ownerReferences: [SIM_ROOT_REF], ...options }),
      user,
    }).request ?? { uid: "", operation: "DELETE" };
    const triage = triageDelete(request, [SIMKUBE_DRIVER_USER]);
    assert.ok("candidate" in triage);
    return triage.candidate;
  };
  const live = (options: PodOptions = {}) => buildPod({ ownerReferences: [SIM_ROOT_REF], ...options }) as Pod;
  const deleting = { deletionTimestamp: "2024-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 };
  const NOT = "deletion-not-this-reviews";

  it("no deletion shown yet: nothing to judge", () => {
    assert.equal(checkDeletionClaim(live(), candidate(), true), undefined);
  });
  it("a user's delete: shown at the review, before it could be stored, is someone else's", () => {
    assert.equal(checkDeletionClaim(live(deleting), candidate(), true), NOT);
  });
  it("a user's delete: shown after the answer, without a disruption, is the user's", () => {
    assert.equal(checkDeletionClaim(live(deleting), candidate(), false), undefined);
  });
  it("a user's delete: shown with DisruptionTarget, is an eviction's", () => {
    const evicted = live({ ...deleting, conditions: [disruptionTarget()] });
    assert.equal(checkDeletionClaim(evicted, candidate(), false), NOT);
  });
  it("a disruption set before (or with) the deletion is the one claimed", () => {
    const claimed = { ...deleting, conditions: [disruptionTarget()] };
    assert.equal(checkDeletionClaim(live(claimed), candidate(claimed, "kwok"), true), undefined);
  });
  it("a disruption set after the deletion was made belongs to no deletion the pod shows", () => {
    const late = {
      ...deleting,
      conditions: [{ ...disruptionTarget(), lastTransitionTime: "2024-01-01T00:00:02Z" }],
    };
    assert.equal(checkDeletionClaim(live(late), candidate(late, "kwok"), true), NOT);
  });
});
