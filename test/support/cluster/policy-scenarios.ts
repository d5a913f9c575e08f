// Least privilege enforced by the cluster: the ValidatingAdmissionPolicy `simkube-fn manifests` renders, which
// `cluster up` installs in production mode. On the real API server, as reschedule-delete's own account, it
// refuses every way out of the fence (kube-system, a nodeName, node affinity to a real node, a blanket
// toleration, a powerful named ServiceAccount) that RBAC alone allows, and admits a clone-shaped pod.
// Every clone the deletion table makes (deletion-scenarios.ts) is created under the same policy.

import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { buildAllManifests, type DeploymentOptions, type Manifest } from "../../../knative/manifests.js";
import { podCreatePolicyName } from "../../../knative/pod-create-policy.js";
import { clientsFor } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import type { WorldRef } from "./world.js";

/**
 * The policy and its binding exactly as `simkube-fn manifests` renders them for this cluster's deployment
 * (knative/pod-create-policy.ts): the functions' own service accounts, virtual namespaces, virtual nodes.
 */
export function renderedPodPolicy(deployment: DeploymentOptions): Manifest[] {
  return buildAllManifests(deployment).filter(
    (o) => o.kind === "ValidatingAdmissionPolicy" || o.kind === "ValidatingAdmissionPolicyBinding",
  );
}

/** A pod as a clone looks: pinned by nodeSelector and SimKube's toleration. */
function pinned(name: string, spec: Partial<NonNullable<V1Pod["spec"]>> = {}): V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeSelector: { type: "virtual" },
      tolerations: [{ key: "kwok-provider", operator: "Exists", effect: "NoSchedule" }],
      containers: [{ name: "app", image: "registry.example/app:1" }],
      ...spec,
    },
  };
}

/** The privileged, unpinned pod a tricked function would clone into kube-system. */
function escalatedClone(): V1Pod {
  return {
    metadata: { name: "priv-debug-clone-1" },
    spec: {
      hostNetwork: true,
      hostPID: true,
      containers: [
        { name: "shell", image: "registry.example/debug:1", securityContext: { privileged: true } },
      ],
    },
  };
}

const REAL_NODE = "real-node-1";
const POWERFUL_ACCOUNT = "policy-admin-sa";

/** A Node without the virtual label (no kubelet behind it: the API object is what a pod would name). */
async function ensureRealNode(w: ReturnType<WorldRef["get"]>): Promise<void> {
  try {
    await w.admin.core.createNode({
      body: { metadata: { name: REAL_NODE, labels: { "kubernetes.io/hostname": REAL_NODE } } },
    });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/** A ServiceAccount in the virtual namespace bound to cluster-admin: what a clone must not run as. */
async function ensurePowerfulAccount(w: ReturnType<WorldRef["get"]>, namespace: string): Promise<void> {
  const create = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  };
  await create(() =>
    w.admin.core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: POWERFUL_ACCOUNT } },
    }),
  );
  await w.cluster.admin.ensure("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `${namespace}-${POWERFUL_ACCOUNT}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name: POWERFUL_ACCOUNT, namespace }],
  });
}

/** The pods RBAC lets reschedule-delete create in the virtual namespace and the policy must refuse. */
function outsideTheFence(): { what: string; pod: V1Pod; rule: RegExp }[] {
  const realNodeTerm = {
    matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [REAL_NODE] }],
  };
  return [
    {
      what: "nodeName of a non-virtual node",
      pod: pinned("by-node-name", { nodeName: REAL_NODE }),
      rule: /without spec.nodeName/,
    },
    {
      what: "required nodeAffinity to a real node",
      pod: pinned("by-affinity", {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [realNodeTerm] },
          },
        },
      }),
      rule: /every required nodeAffinity term requires type In \[virtual\]/,
    },
    {
      what: "a blanket operator: Exists toleration",
      pod: pinned("blanket", { tolerations: [{ operator: "Exists" }] }),
      rule: /tolerations each name a taint key/,
    },
    {
      what: "a cluster-admin serviceAccountName",
      pod: pinned("as-admin", { serviceAccountName: POWERFUL_ACCOUNT }),
      rule: /run as the default ServiceAccount, or as another one without its token/,
    },
  ];
}

async function refusal(create: () => Promise<unknown>): Promise<{ code?: number; body?: string }> {
  try {
    await create();
  } catch (err) {
    return err as { code?: number; body?: string };
  }
  assert.fail("the API server admitted the pod");
}

export function policyCases(ref: WorldRef, virtualNamespace: string): ClusterCase[] {
  return [
    {
      name: "policy: cluster up installed the pod-create policy and binding exactly as manifests renders them",
      run: async () => {
        const w = ref.get();
        assert.equal(w.cluster.security, "production");
        const [policy, binding] = renderedPodPolicy(w.cluster.deployment) as [Manifest, Manifest];
        const name = podCreatePolicyName(resolveOptions(w.cluster.deployment));
        const live = await w.admin.admission.readValidatingAdmissionPolicy({ name });
        const liveBinding = await w.admin.admission.readValidatingAdmissionPolicyBinding({ name });
        const rendered = policy as unknown as {
          spec: { validations: unknown[]; matchConditions: unknown[] };
        };
        assert.deepEqual(
          live.spec?.validations?.map((v) => ({
            expression: v.expression,
            message: v.message,
            reason: v.reason,
          })),
          rendered.spec.validations,
        );
        assert.deepEqual(
          live.spec?.matchConditions?.map((c) => ({ name: c.name, expression: c.expression })),
          rendered.spec.matchConditions,
        );
        assert.deepEqual(
          liveBinding.spec?.validationActions,
          (binding as unknown as { spec: { validationActions: string[] } }).spec.validationActions,
        );
      },
    },
    {
      name: "policy: refuses reschedule-delete's account a pod in kube-system that RBAC allows",
      run: async () => {
        const w = ref.get();
        const fn = clientsFor(w.cluster.functionKubeconfigs["reschedule-delete"]).core;
        const name = podCreatePolicyName(resolveOptions(w.cluster.deployment));
        const refused = await refusal(() =>
          fn.createNamespacedPod({ namespace: "kube-system", body: escalatedClone(), dryRun: "All" }),
        );
        // The rendered validations give reason Forbidden, so the API server answers 403 (without a reason a
        // denying policy answers 422 Invalid).
        assert.equal(refused.code, 403);
        assert.match(
          String(refused.body),
          new RegExp(`ValidatingAdmissionPolicy .*${name}.* denied request`),
        );
        assert.match(String(refused.body), /only pods in namespaces labelled simkube.io\/virtual=true/);
      },
    },
    {
      name: "policy: refuses a nodeName, real-node affinity, a blanket toleration and a cluster-admin account, each by its rule; admits a clone",
      run: async () => {
        const w = ref.get();
        await ensureRealNode(w);
        await ensurePowerfulAccount(w, virtualNamespace);
        const fn = clientsFor(w.cluster.functionKubeconfigs["reschedule-delete"]).core;
        const create = (body: V1Pod) => () =>
          fn.createNamespacedPod({ namespace: virtualNamespace, body, dryRun: "All" });
        for (const { what, pod, rule } of outsideTheFence()) {
          const refused = await refusal(create(pod));
          assert.equal(refused.code, 403, `${what}: ${refused.body}`);
          assert.match(String(refused.body), rule, what);
        }
        // The same account still creates clone-shaped pods, a named account without its token included.
        const token = pinned("named-no-token", {
          serviceAccountName: POWERFUL_ACCOUNT,
          automountServiceAccountToken: false,
        });
        const virtualTerm = { matchExpressions: [{ key: "type", operator: "In", values: ["virtual"] }] };
        const affinity = pinned("pinned-affinity", {
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [virtualTerm] },
            },
          },
        });
        for (const body of [pinned("policy-allowed-clone"), token, affinity]) {
          const created = await create(body)();
          assert.equal(created.metadata?.name, body.metadata?.name);
        }
      },
    },
  ];
}
