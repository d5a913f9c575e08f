import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  isVirtualNamespace,
  otherSimulationRootOf,
  planScope,
  type ScopeFacts,
  triageReview,
} from "../../functions/mutate-create/triage.js";
import type { AdmissionRequest } from "../../shared/admission/review.js";
import type { OwnerLink } from "../../shared/kube/owners.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  deploymentOwnerRef,
  replicaSetOwnerRef,
  rootOwnerRef,
  simulationOwnerRef,
  TEST_SIM_NAME,
} from "../support/builders.js";

function requestOf(review: { request?: AdmissionRequest }): AdmissionRequest {
  assert.ok(review.request);
  return review.request;
}

// A chain as the owner resolver returns it: pod -> ReplicaSet -> Deployment -> SimulationRoot -> Simulation.
const RS: OwnerLink = { ref: replicaSetOwnerRef(), ownedBy: [deploymentOwnerRef()] };
const DEPLOYMENT: OwnerLink = { ref: deploymentOwnerRef(), ownedBy: [rootOwnerRef()] };
const ROOT: OwnerLink = { ref: rootOwnerRef(), ownedBy: [simulationOwnerRef()] };
const DEPLOYMENT_GONE: OwnerLink = { ref: deploymentOwnerRef(), ownedBy: [], gone: true };
const OTHER_ROOT: OwnerLink = { ref: rootOwnerRef("other-root"), ownedBy: [simulationOwnerRef("other-sim")] };

function facts(chain: OwnerLink[], overrides: Partial<ScopeFacts> = {}): ScopeFacts {
  return {
    operation: "CREATE",
    namespace: "virtual-testing",
    virtualNsPrefix: "virtual",
    chain,
    simName: TEST_SIM_NAME,
    ...overrides,
  };
}

describe("triageReview (no API call)", () => {
  it("skips what is not a pod CREATE or UPDATE", () => {
    assert.deepEqual(triageReview(requestOf(buildDeleteReview({ pod: buildPod() }))), {
      skip: "not-create-or-update",
    });
    const configMap = requestOf(buildCreateReview({ pod: buildPod() }));
    configMap.kind = { group: "", version: "v1", kind: "ConfigMap" };
    assert.deepEqual(triageReview(configMap), { skip: "not-a-pod" });
  });

  it("denies a review it cannot judge, saying why", () => {
    const noObject = requestOf(buildCreateReview({ pod: buildPod() }));
    noObject.object = null;
    assert.deepEqual(triageReview(noObject), { deny: "no-object", message: "CREATE review has no object" });
    const badMetadata = requestOf(buildCreateReview({ pod: buildPod() }));
    badMetadata.object = { metadata: "x" };
    assert.deepEqual(triageReview(badMetadata), {
      deny: "bad-metadata",
      message: "pod metadata is not an object",
    });
  });

  it("keeps a CREATE that carries a deletionTimestamp, and skips a terminating pod's UPDATE", () => {
    const pod = buildPod({ deletionTimestamp: "2026-12-02T11:00:00Z" });
    const create = triageReview(requestOf(buildCreateReview({ pod })));
    assert.ok("candidate" in create, JSON.stringify(create));
    assert.equal(create.candidate.operation, "CREATE");
    const update = triageReview(requestOf(buildCreateReview({ pod, operation: "UPDATE" })));
    assert.deepEqual(update, { skip: "terminating" });
  });

  it("fills the pod's namespace from the request and flags a node's own status write", () => {
    const pod = buildPod();
    delete pod.metadata?.namespace;
    const review = buildCreateReview({
      pod,
      operation: "UPDATE",
      subResource: "status",
      user: "system:node:kwok-node-1",
      dryRun: true,
    });
    (review.request as AdmissionRequest).namespace = "virtual-web";
    const triage = triageReview(requestOf(review));
    assert.ok("candidate" in triage);
    assert.equal(triage.candidate.namespace, "virtual-web");
    assert.equal(triage.candidate.pod.metadata?.namespace, "virtual-web");
    assert.equal(triage.candidate.labelsForbidden, true);
    assert.equal(triage.candidate.dryRun, true);
    assert.equal(pod.metadata?.namespace, undefined, "the review's pod is not changed");
  });
});

describe("isVirtualNamespace", () => {
  it("is `<prefix>-<something>`, nothing else", () => {
    assert.equal(isVirtualNamespace("virtual-default", "virtual"), true);
    assert.equal(isVirtualNamespace("sim-default", "sim"), true);
    assert.equal(isVirtualNamespace("virtual-", "virtual"), false);
    assert.equal(isVirtualNamespace("virtual", "virtual"), false);
    assert.equal(isVirtualNamespace("virtualdefault", "virtual"), false);
    assert.equal(isVirtualNamespace("kube-system", "virtual"), false);
    assert.equal(isVirtualNamespace("default", "sim"), false);
  });
});

describe("planScope", () => {
  it("mutates in full when the chain reaches our SimulationRoot, in any namespace", () => {
    assert.deepEqual(planScope(facts([RS, DEPLOYMENT, ROOT])), { mutate: "full", root: rootOwnerRef() });
    assert.deepEqual(planScope(facts([ROOT], { namespace: "default" })), {
      mutate: "full",
      root: rootOwnerRef(),
    });
  });

  it("pins a virtual-namespace pod whose Deployment was deleted, without the root (owner-gone)", () => {
    assert.deepEqual(planScope(facts([RS, DEPLOYMENT_GONE])), { mutate: "pin", reason: "owner-gone" });
  });

  it("pins a virtual-namespace pod with no SimulationRoot at all (no-simulation-root)", () => {
    assert.deepEqual(planScope(facts([])), { mutate: "pin", reason: "no-simulation-root" });
    const rootOfNoSimulation: OwnerLink = { ref: rootOwnerRef(), ownedBy: [] };
    assert.deepEqual(planScope(facts([rootOfNoSimulation])), { mutate: "pin", reason: "no-simulation-root" });
  });

  it("leaves pods outside the virtual namespaces alone when the chain does not reach the root", () => {
    assert.deepEqual(planScope(facts([RS, DEPLOYMENT_GONE], { namespace: "default" })), {
      skip: "not-in-simulation",
    });
    assert.deepEqual(planScope(facts([], { namespace: "sim-default" })), { skip: "not-in-simulation" });
    assert.deepEqual(planScope(facts([], { namespace: "sim-default", virtualNsPrefix: "sim" })), {
      mutate: "pin",
      reason: "no-simulation-root",
    });
  });

  it("pins another Simulation's pod in our virtual namespace; elsewhere leaves it to its own webhook", () => {
    assert.deepEqual(planScope(facts([OTHER_ROOT])), { mutate: "pin", reason: "other-simulation-root" });
    assert.deepEqual(planScope(facts([OTHER_ROOT], { namespace: "other-default" })), {
      skip: "other-simulation",
    });
    assert.deepEqual(planScope(facts([OTHER_ROOT], { operation: "UPDATE" })), { skip: "other-simulation" });
    assert.deepEqual(planScope(facts([{ ...OTHER_ROOT, ownedBy: [], gone: true }])), {
      mutate: "pin",
      reason: "owner-gone",
    });
    assert.equal(otherSimulationRootOf([ROOT], TEST_SIM_NAME), undefined);
  });

  it("never pins on UPDATE (a nodeSelector cannot change after creation)", () => {
    assert.deepEqual(planScope(facts([RS, DEPLOYMENT_GONE], { operation: "UPDATE" })), {
      skip: "update-without-root",
    });
    assert.deepEqual(planScope(facts([ROOT], { operation: "UPDATE" })), {
      mutate: "full",
      root: rootOwnerRef(),
    });
  });
});
