import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GeneratedReview, TeardownOptions } from "../../functions/cli/loadtest/review-types.js";
import { buildTeardownReviews } from "../../functions/cli/loadtest/reviews.js";
import type { AdmissionRequest } from "../../shared/admission/review.js";
import {
  ADMIN_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
} from "../../shared/base/identities.js";

const NOW = new Date("2025-03-01T12:00:00Z");
const BASE: TeardownOptions = {
  count: 2000,
  simName: "test-sim",
  rootName: "sk-test-sim-driver-12345-root",
  rootUid: "qwerty-5678",
  now: NOW,
};

/** The generated oldObject, with the fields these tests read made required. */
interface GeneratedPod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string }[];
    labels: Record<string, string>;
  };
  status: { phase: string; conditions: { type: string }[] };
}

function requestOf(review: GeneratedReview): AdmissionRequest {
  return review.review.request as AdmissionRequest;
}

function podOf(review: GeneratedReview): GeneratedPod {
  return requestOf(review).oldObject as GeneratedPod;
}

function isBare(pod: GeneratedPod): boolean {
  return pod.metadata.ownerReferences.every((ref) => ref.apiVersion.startsWith("simkube.io"));
}

const TEARDOWN_USERS = new Set([NAMESPACE_CONTROLLER_USER, GARBAGE_COLLECTOR_USER, KWOK_USER]);

/**
 * An independent statement of what an interruption is (docs/functions.md, "reschedule-delete"): the first-phase delete
 * (no deletionTimestamp yet) of a Running bare pod by someone who is not tearing the simulation down.
 */
function looksLikeInterruption(review: GeneratedReview): boolean {
  const request = requestOf(review);
  const pod = podOf(review);
  return (
    isBare(pod) &&
    pod.status.phase === "Running" &&
    pod.metadata.deletionTimestamp === undefined &&
    !TEARDOWN_USERS.has(request.userInfo?.username ?? "")
  );
}

describe("buildTeardownReviews", () => {
  const teardown = buildTeardownReviews(BASE);

  it("makes exactly the requested number of DELETE reviews of pods, each with its own uid", () => {
    assert.equal(teardown.reviews.length, BASE.count);
    const uids = new Set(teardown.reviews.map((r) => r.uid));
    assert.equal(uids.size, BASE.count);
    for (const review of teardown.reviews) {
      const request = requestOf(review);
      assert.equal(review.review.apiVersion, "admission.k8s.io/v1");
      assert.equal(review.review.kind, "AdmissionReview");
      assert.equal(request.uid, review.uid);
      assert.equal(request.operation, "DELETE");
      assert.equal(request.object, null);
      assert.deepEqual(request.resource, { group: "", version: "v1", resource: "pods" });
      assert.equal(request.namespace, podOf(review).metadata.namespace);
      assert.equal(podOf(review).metadata.uid, review.podUid);
      assert.match(request.namespace ?? "", /^virtual-/);
      assert.equal(podOf(review).metadata.labels["simkube.io/simulation"], "test-sim");
    }
  });

  it("is a teardown: no interruption, no disruption condition, zero expected clones", () => {
    assert.equal(teardown.expectedClones, 0);
    assert.equal(teardown.byKind.interruption, 0);
    assert.equal(teardown.reviews.filter(looksLikeInterruption).length, 0);
    for (const review of teardown.reviews) {
      assert.ok(!podOf(review).status.conditions.some((c) => c.type === "DisruptionTarget"));
      assert.ok(TEARDOWN_USERS.has(requestOf(review).userInfo?.username ?? ""));
    }
  });

  it("mixes bare and ReplicaSet-owned pods, Running and finished", () => {
    const pods = new Map(teardown.reviews.map((r) => [r.podUid, podOf(r)]));
    const phases = new Set([...pods.values()].map((p) => p.status.phase));
    assert.deepEqual([...phases].sort(), ["Failed", "Running", "Succeeded"]);
    const bare = [...pods.values()].filter(isBare);
    assert.ok(bare.length > 0 && bare.length < pods.size);
    for (const pod of bare) {
      assert.deepEqual(
        pod.metadata.ownerReferences.map((r) => [r.apiVersion, r.kind, r.name, r.uid]),
        [["simkube.io/v1", "SimulationRoot", BASE.rootName, BASE.rootUid]],
      );
    }
    for (const pod of [...pods.values()].filter((p) => !isBare(p))) {
      assert.equal(pod.metadata.ownerReferences[0]?.kind, "ReplicaSet");
    }
    assert.ok(
      bare.some((p) => p.status.phase === "Running"),
      "the risky case is in the mix",
    );
  });

  it("sends DeleteCollection reviews with an empty name, and GC reviews with the name and a uid precondition", () => {
    const collection = teardown.reviews.filter((r) => r.kind === "namespace-controller");
    const gc = teardown.reviews.filter((r) => r.kind === "garbage-collector");
    assert.ok(collection.length > 0 && gc.length > 0);
    for (const review of collection) {
      assert.equal(requestOf(review).name, "");
      assert.equal(requestOf(review).userInfo?.username, NAMESPACE_CONTROLLER_USER);
      assert.equal(podOf(review).metadata.deletionTimestamp, undefined);
    }
    for (const review of gc) {
      const request = requestOf(review);
      assert.equal(request.name, podOf(review).metadata.name);
      assert.equal(request.userInfo?.username, GARBAGE_COLLECTOR_USER);
      assert.deepEqual((request.options as { preconditions?: unknown }).preconditions, {
        uid: review.podUid,
      });
    }
  });

  it("finishes each Running pod with KWOK's grace-0 delete, seen twice, after the initiator's review", () => {
    const byPod = new Map<string, GeneratedReview[]>();
    for (const review of teardown.reviews)
      byPod.set(review.podUid, [...(byPod.get(review.podUid) ?? []), review]);
    let checked = 0;
    for (const reviews of byPod.values()) {
      const first = reviews[0] as GeneratedReview;
      assert.ok(first.kind === "namespace-controller" || first.kind === "garbage-collector");
      if (reviews.length < 3 || podOf(first).status.phase !== "Running") continue;
      checked += 1;
      const finals = reviews.slice(1);
      assert.deepEqual(
        finals.map((r) => r.kind),
        ["kwok-final", "kwok-final"],
      );
      assert.deepEqual(
        finals.map((r) => podOf(r).metadata.deletionGracePeriodSeconds),
        [30, 0],
      );
      for (const review of finals) {
        const request = requestOf(review);
        assert.equal(request.userInfo?.username, KWOK_USER);
        assert.equal(request.name, podOf(review).metadata.name);
        assert.equal((request.options as { gracePeriodSeconds?: number }).gracePeriodSeconds, 0);
        assert.ok(podOf(review).metadata.deletionTimestamp);
      }
      assert.ok(teardown.reviews.indexOf(first) < teardown.reviews.indexOf(finals[0] as GeneratedReview));
    }
    assert.ok(checked > 100);
  });

  it("deletes finished pods at grace 0 at once: the initiator's second call, no KWOK", () => {
    const finals = teardown.reviews.filter((r) => r.kind === "finished-final");
    assert.ok(finals.length > 0);
    for (const review of finals) {
      const pod = podOf(review);
      assert.notEqual(pod.status.phase, "Running");
      assert.equal(pod.metadata.deletionGracePeriodSeconds, 0);
      assert.notEqual(requestOf(review).userInfo?.username, KWOK_USER);
    }
  });

  it("is reproducible from its seed", () => {
    const again = buildTeardownReviews(BASE);
    assert.deepEqual(
      again.reviews.map((r) => r.review),
      teardown.reviews.map((r) => r.review),
    );
    const other = buildTeardownReviews({ ...BASE, seed: 2 });
    assert.notDeepEqual(
      other.reviews.map((r) => r.uid),
      teardown.reviews.map((r) => r.uid),
    );
  });

  it("counts review kinds", () => {
    const counted: Record<string, number> = {};
    for (const review of teardown.reviews) counted[review.kind] = (counted[review.kind] ?? 0) + 1;
    for (const [kind, n] of Object.entries(teardown.byKind)) assert.equal(n, counted[kind] ?? 0, kind);
  });

  it("puts pods in the given namespaces under the virtual prefix", () => {
    const small = buildTeardownReviews({ ...BASE, count: 200, namespaces: ["web"], virtualNsPrefix: "sim" });
    assert.deepEqual(new Set(small.reviews.map((r) => requestOf(r).namespace)), new Set(["sim-web"]));
  });
});

describe("buildTeardownReviews with interruptions", () => {
  const mixed = buildTeardownReviews({ ...BASE, interruptions: 0.2 });

  it("expects one clone per interrupted pod, and only those reviews look like interruptions", () => {
    const interruptions = mixed.reviews.filter((r) => r.kind === "interruption");
    assert.ok(interruptions.length > 0);
    assert.equal(mixed.expectedClones, interruptions.length);
    assert.equal(new Set(interruptions.map((r) => r.podUid)).size, interruptions.length);
    assert.deepEqual(mixed.reviews.filter(looksLikeInterruption), interruptions);
  });

  it("interrupts Running bare pods, by a user's delete or a taint eviction marked DisruptionTarget", () => {
    const users = new Set<string>();
    for (const review of mixed.reviews.filter((r) => r.kind === "interruption")) {
      const pod = podOf(review);
      const user = requestOf(review).userInfo?.username ?? "";
      users.add(user);
      assert.equal(pod.status.phase, "Running");
      assert.ok(isBare(pod));
      const disrupted = pod.status.conditions.some((c) => c.type === "DisruptionTarget");
      assert.equal(disrupted, user === NODE_CONTROLLER_USER);
    }
    assert.deepEqual([...users].sort(), [ADMIN_USER, NODE_CONTROLLER_USER].sort());
  });

  it("refuses nonsense options", () => {
    assert.throws(() => buildTeardownReviews({ ...BASE, count: 0 }), RangeError);
    assert.throws(() => buildTeardownReviews({ ...BASE, count: 1.5 }), RangeError);
    assert.throws(() => buildTeardownReviews({ ...BASE, interruptions: 1.5 }), RangeError);
    assert.throws(() => buildTeardownReviews({ ...BASE, now: new Date("nope") }), RangeError);
  });

  it("is all interruptions at fraction 1, and none at 0", () => {
    const all = buildTeardownReviews({ ...BASE, count: 300, interruptions: 1 });
    assert.equal(all.byKind["namespace-controller"] + all.byKind["garbage-collector"], 0);
    assert.equal(all.expectedClones, all.byKind.interruption);
    assert.equal(all.pods, all.byKind.interruption);
  });
});
