import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fastJsonPatch from "fast-json-patch";
import {
  addDelayAnnotations,
  addEmptyLabelsAnnotations,
  addLifecycleFields,
  addNodeSelectorTolerations,
  addPodHashAnnotations,
  isRunning,
  lifecycleCandidates,
  mutationPatch,
  needsLifecycle,
  planMutation,
  recordedHash,
  recordedSequence,
  specOf,
} from "../../functions/mutate-create/plan.js";
import type { Pod } from "../../shared/kube/pod.js";
import { buildPod, replicaSetOwnerRef, TEST_SIM_NAME } from "../support/builders.js";

const HASH = "2151974655102796215";
const PARAMS = { imagePullDelay: 1500, imagePullJitter: 250, podStartupDelay: 3000 };

function applied(pod: Pod, input: Omit<Parameters<typeof planMutation>[0], "pod">): Pod {
  const ops = mutationPatch({ ...input, pod });
  return fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument as Pod;
}

describe("planMutation on CREATE", () => {
  const base = {
    operation: "CREATE" as const,
    simName: TEST_SIM_NAME,
    hash: HASH,
    sequence: 3,
    lifecycleParams: PARAMS,
  };

  it("pins a bare pod to virtual nodes and records hash, sequence and KWOK delays", () => {
    const pod = buildPod({ phase: "Pending" });
    delete pod.metadata?.annotations;
    const out = applied(pod, base);
    assert.equal(out.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.equal(out.metadata?.labels?.foo, "bar");
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [
      { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
    ]);
    assert.deepEqual(out.metadata?.annotations, {
      "static.simkube.io/pod-spec-stable-hash": HASH,
      "static.simkube.io/pod-sequence-number": "3",
      "simkube.io/kwok-stage-create-delay": "1500ms",
      "simkube.io/kwok-stage-create-delay-jitter": "250ms",
      "simkube.io/kwok-stage-ready-delay": "3000ms",
      "simkube.io/kwok-stage-ready-delay-jitter": "0ms",
    });
    // Pending pods get no lifecycle, even with a completion time at hand.
    assert.equal(out.metadata?.labels?.["simkube.io/kwok-stage-complete"], undefined);
  });

  it("creates empty labels and annotations when absent (SimKube adds {} first)", () => {
    const pod = buildPod({ phase: "Pending" });
    delete pod.metadata?.labels;
    const out = applied(pod, base);
    assert.deepEqual(out.metadata?.labels, { "simkube.io/simulation": TEST_SIM_NAME });
  });

  it("keeps existing tolerations, overrides a conflicting type selector, adds no second kwok toleration", () => {
    const pod = buildPod({
      phase: "Pending",
      spec: {
        containers: [{ name: "c" }],
        nodeSelector: { type: "real", zone: "a" },
        tolerations: [{ key: "kwok-provider", operator: "Equal", value: "x" }, { key: "other" }],
      },
    });
    const out = applied(pod, base);
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual", zone: "a" });
    assert.deepEqual(out.spec?.tolerations, [
      { key: "kwok-provider", operator: "Equal", value: "x" },
      { key: "other" },
    ]);
  });

  it("appends the toleration after existing ones", () => {
    const pod = buildPod({ phase: "Pending", spec: { containers: [], tolerations: [{ key: "a" }] } });
    const out = applied(pod, base);
    assert.deepEqual(out.spec?.tolerations, [
      { key: "a" },
      { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
    ]);
  });

  it("adds the completion label and time to a Running pod", () => {
    const out = applied(buildPod(), { ...base, completionTime: "2026-12-02T12:00:30+00:00" });
    assert.equal(out.metadata?.labels?.["simkube.io/kwok-stage-complete"], "true");
    assert.equal(
      out.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"],
      "2026-12-02T12:00:30+00:00",
    );
  });

  it("pins a pod with no sequence number (its chain does not reach the root): hash and delays, no sequence", () => {
    const pod = buildPod({ phase: "Pending" });
    const out = applied(pod, { ...base, sequence: undefined });
    assert.deepEqual(out.spec?.nodeSelector, { type: "virtual" });
    assert.deepEqual(out.spec?.tolerations, [
      { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" },
    ]);
    assert.equal(out.metadata?.labels?.["simkube.io/simulation"], TEST_SIM_NAME);
    assert.equal(out.metadata?.annotations?.["static.simkube.io/pod-spec-stable-hash"], HASH);
    assert.equal(out.metadata?.annotations?.["static.simkube.io/pod-sequence-number"], undefined);
    assert.equal(out.metadata?.annotations?.["simkube.io/kwok-stage-create-delay"], "1500ms");
  });

  it("refuses a pod without a spec", () => {
    const pod = buildPod();
    delete pod.spec;
    assert.throws(() => planMutation({ ...base, pod }), /pod has no spec/);
  });

  it("does not mutate its input", () => {
    const pod = buildPod();
    const before = structuredClone(pod);
    planMutation({ ...base, pod, completionTime: "2026-12-02T12:00:30+00:00" });
    assert.deepEqual(pod, before);
  });
});

describe("planMutation on UPDATE", () => {
  const base = {
    operation: "UPDATE" as const,
    simName: TEST_SIM_NAME,
    hash: HASH,
    sequence: 0,
    lifecycleParams: {},
  };

  it("changes nothing but empty maps when there is no lifecycle to add", () => {
    const pod = buildPod({ annotations: { a: "b" } });
    assert.deepEqual(mutationPatch({ ...base, pod }), []);
  });

  it("adds the lifecycle to a Running pod, and nothing else", () => {
    const pod = buildPod({ annotations: { a: "b" } });
    const out = applied(pod, { ...base, completionTime: "2026-12-02T12:00:30+00:00" });
    const expected = structuredClone(pod);
    (expected.metadata?.labels as Record<string, string>)["simkube.io/kwok-stage-complete"] = "true";
    (expected.metadata?.annotations as Record<string, string>)["simkube.io/kwok-stage-complete-time"] =
      "2026-12-02T12:00:30+00:00";
    assert.deepEqual(out, expected);
  });

  it("leaves a pod that is already complete alone", () => {
    const pod = buildPod({ labels: { "simkube.io/kwok-stage-complete": "true" }, annotations: {} });
    assert.deepEqual(mutationPatch({ ...base, pod, completionTime: "2030-01-01T00:00:00+00:00" }), []);
  });

  it("adds no label when labels may not change (node status writes)", () => {
    const pod = buildPod({ annotations: {} });
    assert.deepEqual(mutationPatch({ ...base, pod, completionTime: "x", labelsForbidden: true }), []);
  });
});

describe("pod facts", () => {
  it("reads recorded hash and sequence, normalizing the hash", () => {
    const pod = buildPod({
      annotations: {
        "static.simkube.io/pod-spec-stable-hash": "0042",
        "static.simkube.io/pod-sequence-number": "7",
      },
    });
    assert.equal(recordedHash(pod), "42");
    assert.equal(recordedSequence(pod), 7);
    assert.equal(recordedHash(buildPod()), undefined);
    assert.equal(recordedSequence(buildPod()), undefined);
  });

  it("rejects annotations that are not numbers or overflow u64", () => {
    const bad = (hash: string) =>
      buildPod({ annotations: { "static.simkube.io/pod-spec-stable-hash": hash } });
    assert.throws(() => recordedHash(bad("abc")), /not a 64-bit unsigned integer/);
    assert.throws(() => recordedHash(bad("18446744073709551616")), /not a 64-bit unsigned integer/);
    assert.equal(recordedHash(bad("18446744073709551615")), "18446744073709551615");
    const badSeq = buildPod({ annotations: { "static.simkube.io/pod-sequence-number": "-1" } });
    assert.throws(() => recordedSequence(badSeq), /not a non-negative integer/);
  });

  it("knows Running and lifecycle need", () => {
    assert.equal(isRunning(buildPod()), true);
    assert.equal(isRunning(buildPod({ phase: "Pending" })), false);
    assert.equal(needsLifecycle(buildPod({ labels: { "simkube.io/kwok-stage-complete": "true" } })), false);
  });

  it("lists lifecycle candidates: workload owners, then the pod under its original owner's name", () => {
    const pod = buildPod({
      name: "bare-clone-2",
      annotations: {
        "static.simkube.io/original-namespace": "testing",
        "static.simkube.io/original-owner": "bare",
      },
    });
    assert.deepEqual(lifecycleCandidates(pod, [replicaSetOwnerRef()]), [
      { apiVersion: "apps/v1", kind: "ReplicaSet", nsName: "testing/the-replicaset" },
      { apiVersion: "v1", kind: "Pod", nsName: "testing/bare" },
    ]);
    const own = buildPod({ annotations: { "static.simkube.io/original-namespace": "testing" } });
    assert.deepEqual(lifecycleCandidates(own, []), [
      { apiVersion: "v1", kind: "Pod", nsName: "testing/the-pod" },
    ]);
    assert.deepEqual(lifecycleCandidates(buildPod(), []), []);
  });
});

describe("SimKube's named steps, each on its own", () => {
  it("addEmptyLabelsAnnotations adds {} only where missing and hands back the maps", () => {
    const pod: Pod = { metadata: { labels: { a: "b" } } };
    const { labels, annotations } = addEmptyLabelsAnnotations(pod);
    assert.deepEqual(pod.metadata, { labels: { a: "b" }, annotations: {} });
    labels.x = "1";
    annotations.y = "2";
    assert.deepEqual(pod.metadata, { labels: { a: "b", x: "1" }, annotations: { y: "2" } });
    const bare: Pod = {};
    addEmptyLabelsAnnotations(bare);
    assert.deepEqual(bare.metadata, { labels: {}, annotations: {} });
  });

  it("specOf refuses a pod without a spec object", () => {
    assert.throws(() => specOf({}), /pod has no spec/);
    assert.throws(() => specOf({ spec: "x" as unknown as Record<string, unknown> }), /pod has no spec/);
    const spec = { containers: [] };
    assert.equal(specOf({ spec }), spec);
  });

  it("addNodeSelectorTolerations pins to virtual nodes once, and refuses tolerations that are not a list", () => {
    const spec: Record<string, unknown> = { nodeSelector: { type: "gpu", zone: "a" } };
    addNodeSelectorTolerations(spec);
    addNodeSelectorTolerations(spec);
    assert.deepEqual(spec, {
      nodeSelector: { type: "virtual", zone: "a" },
      tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
    });
    assert.throws(() => addNodeSelectorTolerations({ tolerations: { key: "x" } }), /not a list/);
  });

  it("addPodHashAnnotations records the hash, and the sequence only when there is one", () => {
    const annotations: Record<string, string> = {};
    addPodHashAnnotations(annotations, HASH);
    assert.deepEqual(Object.entries(annotations), [["static.simkube.io/pod-spec-stable-hash", HASH]]);
    addPodHashAnnotations(annotations, HASH, 0);
    assert.equal(annotations["static.simkube.io/pod-sequence-number"], "0");
  });

  it("addDelayAnnotations writes the four KWOK delays, 0ms when unset, and refuses a bad delay", () => {
    const annotations: Record<string, string> = {};
    addDelayAnnotations(annotations, { podStartupJitter: 20 });
    assert.deepEqual(annotations, {
      "simkube.io/kwok-stage-create-delay": "0ms",
      "simkube.io/kwok-stage-create-delay-jitter": "0ms",
      "simkube.io/kwok-stage-ready-delay": "0ms",
      "simkube.io/kwok-stage-ready-delay-jitter": "20ms",
    });
    assert.throws(() => addDelayAnnotations({}, { imagePullDelay: -1 }), /whole number of ms/);
  });

  it("addLifecycleFields sets what KWOK's pod-complete stage selects on", () => {
    const labels: Record<string, string> = {};
    const annotations: Record<string, string> = {};
    addLifecycleFields(labels, annotations, "2026-12-02T12:00:30+00:00");
    assert.deepEqual(labels, { "simkube.io/kwok-stage-complete": "true" });
    assert.deepEqual(annotations, { "simkube.io/kwok-stage-complete-time": "2026-12-02T12:00:30+00:00" });
  });
});
