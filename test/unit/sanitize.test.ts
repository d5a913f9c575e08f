import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KubeObject } from "../../shared/kube/api.js";
import { isSimkubeKey, sanitizeObject, stripSimkubeMetadata } from "../../shared/kube/sanitize.js";
import { buildPod, buildReplicaSet, rootOwnerRef } from "../support/builders.js";

function withServerFields<T extends KubeObject>(obj: T): T {
  const copy = structuredClone(obj);
  Object.assign(copy.metadata ?? {}, {
    creationTimestamp: "2024-01-01T00:00:00Z",
    deletionTimestamp: "2024-01-01T00:05:00Z",
    deletionGracePeriodSeconds: 30,
    generation: 3,
    managedFields: [{ manager: "kubectl", operation: "Apply" }],
    resourceVersion: "12345",
    uid: "asdf1234",
    annotations: {
      "kubectl.kubernetes.io/last-applied-configuration": "{}",
      "deployment.kubernetes.io/revision": "2",
      "some.kubernetes.io/thing": "baz",
    },
  });
  return copy;
}

describe("sanitizeObject", () => {
  it("removes server-managed metadata and history annotations from a pod", () => {
    const pod = withServerFields(buildPod());
    const clean = sanitizeObject(pod);
    assert.deepEqual(clean.metadata, {
      name: "the-pod",
      namespace: "test-namespace",
      labels: { foo: "bar" },
      ownerReferences: [rootOwnerRef()],
      annotations: { "some.kubernetes.io/thing": "baz" },
    });
    assert.deepEqual(clean.spec, pod.spec);
    assert.deepEqual(clean.status, pod.status);
  });

  it("works on any kind, keeping ownerReferences", () => {
    const rs = withServerFields(buildReplicaSet());
    const clean = sanitizeObject(rs);
    assert.equal(clean.kind, "ReplicaSet");
    assert.deepEqual(clean.metadata?.ownerReferences, rs.metadata?.ownerReferences);
    assert.equal(clean.metadata?.uid, undefined);
    assert.equal(clean.metadata?.resourceVersion, undefined);
    assert.deepEqual(clean.spec, { replicas: 1 });
  });

  it("does not mutate its input", () => {
    const pod = withServerFields(buildPod());
    const before = structuredClone(pod);
    const clean = sanitizeObject(pod);
    assert.deepEqual(pod, before);
    assert.notEqual(clean.metadata, pod.metadata);
  });

  it("leaves absent annotations absent and tolerates missing metadata", () => {
    const clean = sanitizeObject(buildPod());
    assert.equal(clean.metadata?.annotations, undefined);
    assert.deepEqual(sanitizeObject({ apiVersion: "v1", kind: "ConfigMap" }), {
      apiVersion: "v1",
      kind: "ConfigMap",
    });
  });
});

describe("stripSimkubeMetadata", () => {
  it("removes simkube.io labels and annotations but keeps static.simkube.io ones", () => {
    const pod = buildPod({
      labels: { "simkube.io/kwok-whatever": "1234", "some.kubernetes.io/stuff": "baz" },
      annotations: {
        "simkube.io/foo": "bar",
        "simkube.io/kwok-stage-complete-time": "2024-01-01T00:00:00Z",
        "static.simkube.io/original-owner": "the-pod",
        "static.simkube.io/pod-spec-stable-hash": "42",
        "some.kubernetes.io/thing": "baz",
      },
    });
    const clean = stripSimkubeMetadata(pod);
    assert.deepEqual(clean.metadata?.labels, { foo: "bar", "some.kubernetes.io/stuff": "baz" });
    assert.deepEqual(clean.metadata?.annotations, {
      "static.simkube.io/original-owner": "the-pod",
      "static.simkube.io/pod-spec-stable-hash": "42",
      "some.kubernetes.io/thing": "baz",
    });
    assert.equal(pod.metadata?.labels?.["simkube.io/kwok-whatever"], "1234", "input untouched");
  });

  it("matches keys by prefix, as SimKube does", () => {
    assert.equal(isSimkubeKey("simkube.io/simulation"), true);
    assert.equal(isSimkubeKey("simkube.io-other/x"), true);
    assert.equal(isSimkubeKey("static.simkube.io/original-owner"), false);
    assert.equal(isSimkubeKey("app.kubernetes.io/name"), false);
  });
});
