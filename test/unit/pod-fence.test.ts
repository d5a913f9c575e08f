// The pod-create policy's rules (knative/pod-create-policy.ts), evaluated as CEL with the variables the API
// server binds, and the clone reschedule-delete builds held to them: every clone passes every rule, including
// clones of pods with node affinity and of pods that run as a named account. The same rules on the real API
// server: test/cluster/production-security.test.ts.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluate } from "@marcbachmann/cel-js";
import {
  pinNodeAffinityTerms,
  withoutNamedAccountToken,
} from "../../functions/reschedule-delete/clone-fence.js";
import { buildClone } from "../../functions/reschedule-delete/plan.js";
import { podCreateValidations } from "../../knative/pod-create-policy.js";
import { buildPod, rootOwnerRef } from "../support/builders.js";

const VIRTUAL_NS = { metadata: { name: "virtual-a", labels: { "simkube.io/virtual": "true" } } };

/** The messages of the rules `object` breaks (empty: admitted). */
function broken(object: unknown): string[] {
  return podCreateValidations()
    .filter((v) => evaluate(v.expression, { object, namespaceObject: VIRTUAL_NS }) !== true)
    .map((v) => v.message);
}

function pod(spec: Record<string, unknown>) {
  return {
    metadata: { name: "p" },
    spec: {
      nodeSelector: { type: "virtual" },
      tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
      serviceAccountName: "default",
      containers: [{ name: "c", image: "i" }],
      ...spec,
    },
  };
}

const hostTerm = {
  matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["real-1"] }],
};
const required = (...terms: unknown[]) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
});
const tokenVolume = {
  name: "kube-api-access-abcde",
  projected: {
    sources: [{ serviceAccountToken: { path: "token" } }, { configMap: { name: "kube-root-ca.crt" } }],
  },
};

describe("pod-create policy rules", () => {
  it("admit a pinned pod", () => {
    assert.deepEqual(broken(pod({})), []);
  });

  it("refuse a nodeName (the scheduler, and so the node selector, is skipped)", () => {
    assert.deepEqual(broken(pod({ nodeName: "real-1" })).length, 1);
    assert.match(broken(pod({ nodeName: "real-1" }))[0] ?? "", /without spec.nodeName/);
  });

  it("refuse a required node affinity term that does not itself require type In [virtual]", () => {
    assert.match(broken(pod({ affinity: required(hostTerm) }))[0] ?? "", /nodeAffinity term/);
    const pinnedTerm = {
      matchExpressions: [...hostTerm.matchExpressions, { key: "type", operator: "In", values: ["virtual"] }],
    };
    assert.match(
      broken(pod({ affinity: required(pinnedTerm, hostTerm) }))[0] ?? "",
      /nodeAffinity term/,
      "terms are ORed",
    );
    assert.deepEqual(broken(pod({ affinity: required(pinnedTerm) })), []);
    assert.deepEqual(
      broken(pod({ affinity: { podAntiAffinity: {} } })),
      [],
      "no node affinity: nothing to check",
    );
  });

  it("refuse a toleration without a key (operator Exists and no key tolerates every taint)", () => {
    assert.match(broken(pod({ tolerations: [{ operator: "Exists" }] }))[0] ?? "", /tolerations each name/);
    assert.match(
      broken(pod({ tolerations: [{ key: "", operator: "Exists" }] }))[0] ?? "",
      /tolerations each name/,
    );
    const keyed = [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 30 },
    ];
    assert.deepEqual(broken(pod({ tolerations: keyed })), []);
  });

  it("refuse a named account with its token; admit it without", () => {
    const asAdmin = pod({ serviceAccountName: "admin-sa", volumes: [tokenVolume] });
    assert.match(broken(asAdmin)[0] ?? "", /default ServiceAccount/);
    assert.match(
      broken(pod({ serviceAccountName: "admin-sa" }))[0] ?? "",
      /default ServiceAccount/,
      "automount unset",
    );
    const noToken = pod({
      serviceAccountName: "admin-sa",
      automountServiceAccountToken: false,
      volumes: [tokenVolume],
    });
    assert.match(broken(noToken)[0] ?? "", /default ServiceAccount/, "automount off but a token volume");
    assert.deepEqual(
      broken(pod({ serviceAccountName: "admin-sa", automountServiceAccountToken: false })),
      [],
    );
    assert.deepEqual(broken(pod({ volumes: [tokenVolume] })), [], "default keeps its token");
  });
});

describe("the clone fits the fence", () => {
  const live = buildPod({ nodeName: "virtual-node-1", ownerReferences: [rootOwnerRef()] });

  it("a clone of a pod with required node affinity and a named account passes every rule, scheduling the same", () => {
    const spec = {
      ...live.spec,
      serviceAccountName: "app-sa",
      affinity: required(hostTerm, {
        matchFields: [{ key: "metadata.name", operator: "In", values: ["n"] }],
      }),
      volumes: [tokenVolume, { name: "data", emptyDir: {} }],
      containers: [
        {
          name: "c",
          image: "i",
          volumeMounts: [
            { name: "kube-api-access-abcde", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
            { name: "data", mountPath: "/data" },
          ],
        },
      ],
    };
    const clone = buildClone({ ...live, spec }, rootOwnerRef());
    assert.deepEqual(broken(clone), []);
    const terms = (clone.spec as { affinity: ReturnType<typeof required> }).affinity.nodeAffinity
      .requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms as { matchExpressions: unknown[] }[];
    assert.deepEqual(terms[0]?.matchExpressions, [
      ...hostTerm.matchExpressions,
      { key: "type", operator: "In", values: ["virtual"] },
    ]);
    const s = clone.spec as Record<string, unknown> & { containers: { volumeMounts: { name: string }[] }[] };
    assert.equal(s.serviceAccountName, "app-sa", "the traced pod's account is kept");
    assert.equal(s.automountServiceAccountToken, false);
    assert.deepEqual(s.volumes, [{ name: "data", emptyDir: {} }]);
    assert.deepEqual(
      s.containers[0]?.volumeMounts.map((m) => m.name),
      ["data"],
    );
  });

  it("a default-account clone keeps its token and spec; a pinned term is not pinned twice", () => {
    const spec = { ...live.spec, volumes: [tokenVolume] };
    assert.deepEqual(withoutNamedAccountToken(spec), spec);
    const pinned = pinNodeAffinityTerms({
      affinity: required({ matchExpressions: [{ key: "type", operator: "In", values: ["virtual"] }] }),
    });
    assert.deepEqual(pinNodeAffinityTerms(pinned), pinned);
    assert.deepEqual(broken(buildClone({ ...live, spec }, rootOwnerRef())), []);
  });
});
