// mutationPatch writes its operations directly instead of diffing a cloned pod. These tests hold it to the
// old way (fast-json-patch's compare of the pod against planMutation's pod) on many pod shapes.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fastJsonPatch, { type Operation } from "fast-json-patch";
import {
  type MutationInput,
  mutationPatch,
  planMutation,
  pointerToken,
} from "../../functions/mutate-create/plan.js";
import type { Pod } from "../../shared/kube/pod.js";
import { buildPod, TEST_SIM_NAME } from "../support/builders.js";

const KWOK_TOLERATION = { key: "kwok-provider", operator: "Exists", effect: "NoSchedule" };

function apply(pod: Pod, ops: Operation[]): Pod {
  return fastJsonPatch.applyPatch(structuredClone(pod), ops, true, false).newDocument as Pod;
}

/** Pod shapes: every combination of present/absent/empty maps and lists, plus keys that need escaping. */
function podShapes(): Array<[string, Pod]> {
  const shapes: Array<[string, Pod]> = [];
  const labelsChoices = [
    undefined,
    null,
    {},
    { app: "web" },
    { "a/b~c": "1", "simkube.io/simulation": "old" },
  ];
  const annotationChoices = [undefined, {}, { "x~/y": "2", "static.simkube.io/pod-spec-stable-hash": "7" }];
  const selectorChoices = [
    undefined,
    null,
    {},
    { zone: "a" },
    { type: "virtual" },
    { type: "real", "k/~": "v" },
  ];
  const tolerationChoices = [
    undefined,
    null,
    [],
    [{ key: "other" }],
    [{ key: "kwok-provider", operator: "Equal" }],
  ];
  for (const [li, labels] of labelsChoices.entries())
    for (const [ai, annotations] of annotationChoices.entries())
      for (const [si, nodeSelector] of selectorChoices.entries())
        for (const [ti, tolerations] of tolerationChoices.entries()) {
          const pod = buildPod({ phase: (li + si + ti) % 2 === 0 ? "Running" : "Pending" });
          const metadata = pod.metadata as Record<string, unknown>;
          metadata.labels = labels;
          metadata.annotations = annotations;
          if (labels === undefined) delete metadata.labels;
          if (annotations === undefined) delete metadata.annotations;
          const spec = pod.spec as Record<string, unknown>;
          if (nodeSelector !== undefined) spec.nodeSelector = structuredClone(nodeSelector);
          if (tolerations !== undefined) spec.tolerations = structuredClone(tolerations);
          shapes.push([`labels#${li} annotations#${ai} selector#${si} tolerations#${ti}`, pod]);
        }
  const noMetadata = buildPod({ phase: "Running" });
  delete noMetadata.metadata;
  shapes.push(["no metadata", noMetadata]);
  return shapes;
}

const INPUTS: Array<Omit<MutationInput, "pod">> = [
  {
    operation: "CREATE",
    simName: TEST_SIM_NAME,
    hash: "42",
    sequence: 3,
    lifecycleParams: { imagePullDelay: 5 },
  },
  { operation: "CREATE", simName: TEST_SIM_NAME, hash: "42", lifecycleParams: {} },
  { operation: "CREATE", simName: "s/~1", hash: "9", sequence: 0, lifecycleParams: {}, completionTime: "T" },
  { operation: "UPDATE", simName: TEST_SIM_NAME, hash: "42", sequence: 1, lifecycleParams: {} },
  {
    operation: "UPDATE",
    simName: TEST_SIM_NAME,
    hash: "42",
    sequence: 1,
    lifecycleParams: {},
    completionTime: "T",
  },
  {
    operation: "UPDATE",
    ...{ simName: "s", hash: "1", lifecycleParams: {}, completionTime: "T", labelsForbidden: true },
  },
];

describe("mutationPatch against the clone-and-diff patch", () => {
  it("produces exactly planMutation's pod, as the old compare() patch did, for every shape and input", () => {
    let compared = 0;
    for (const [shape, pod] of podShapes()) {
      for (const input of INPUTS) {
        const full = { ...input, pod };
        const before = structuredClone(pod);
        const expected = planMutation(full);
        const viaDiff = apply(pod, fastJsonPatch.compare(pod, expected));
        const direct = apply(pod, mutationPatch(full));
        assert.deepEqual(direct, viaDiff, `${shape}, ${input.operation} ${JSON.stringify(input)}`);
        assert.deepEqual(direct, expected, shape);
        assert.deepEqual(pod, before, `${shape}: the input pod was changed`);
        compared++;
      }
    }
    assert.equal(compared, 5 * 3 * 6 * 5 * 6 + 6);
  });

  it("writes adds with RFC 6901 escaped keys, creating missing maps whole and appending the toleration", () => {
    const pod = buildPod({ phase: "Pending", labels: { app: "web" } });
    delete pod.metadata?.annotations;
    (pod.spec as Record<string, unknown>).tolerations = [{ key: "other" }];
    const ops = mutationPatch({ ...INPUTS[1], pod } as MutationInput);
    assert.deepEqual(ops, [
      { op: "add", path: "/metadata/labels/simkube.io~1simulation", value: TEST_SIM_NAME },
      {
        op: "add",
        path: "/metadata/annotations",
        value: {
          "static.simkube.io/pod-spec-stable-hash": "42",
          "simkube.io/kwok-stage-create-delay": "0ms",
          "simkube.io/kwok-stage-create-delay-jitter": "0ms",
          "simkube.io/kwok-stage-ready-delay": "0ms",
          "simkube.io/kwok-stage-ready-delay-jitter": "0ms",
        },
      },
      { op: "add", path: "/spec/nodeSelector", value: { type: "virtual" } },
      { op: "add", path: "/spec/tolerations/-", value: KWOK_TOLERATION },
    ]);
  });

  it("adds no second kwok-provider toleration and leaves a virtual selector alone", () => {
    const pod = buildPod({
      phase: "Pending",
      spec: { containers: [], nodeSelector: { type: "virtual" }, tolerations: [{ key: "kwok-provider" }] },
    });
    const paths = mutationPatch({ ...INPUTS[0], pod } as MutationInput).map((op) => op.path);
    assert.ok(
      paths.every((path) => path.startsWith("/metadata/")),
      paths.join(", "),
    );
  });

  it("refuses what SimKube refuses: no spec on CREATE, tolerations that are not a list", () => {
    const noSpec = buildPod();
    delete noSpec.spec;
    assert.throws(() => mutationPatch({ ...INPUTS[0], pod: noSpec } as MutationInput), /pod has no spec/);
    const badTolerations = buildPod({ spec: { containers: [], tolerations: { key: "x" } } });
    assert.throws(() => mutationPatch({ ...INPUTS[0], pod: badTolerations } as MutationInput), /not a list/);
    const badLabels = buildPod();
    (badLabels.metadata as Record<string, unknown>).labels = "x";
    assert.throws(() => mutationPatch({ ...INPUTS[0], pod: badLabels } as MutationInput), /not a map/);
  });
});

describe("pointerToken", () => {
  it("escapes ~ before / (RFC 6901 section 3), so ~1 in a key stays a literal ~1", () => {
    assert.equal(pointerToken("plain"), "plain");
    assert.equal(pointerToken("simkube.io/simulation"), "simkube.io~1simulation");
    assert.equal(pointerToken("a~b"), "a~0b");
    assert.equal(pointerToken("~1/"), "~01~1");
    assert.equal(fastJsonPatch.getValueByPointer({ "~1/": 5 }, `/${pointerToken("~1/")}`), 5);
  });

  it("gives the same token for a key asked again, also past the keys it remembers", () => {
    const keys = Array.from({ length: 200 }, (_, i) => `example.com/k~${i}`);
    const first = keys.map(pointerToken);
    assert.deepEqual(
      first,
      keys.map((_, i) => `example.com~1k~0${i}`),
    );
    assert.deepEqual(keys.map(pointerToken), first);
  });
});
