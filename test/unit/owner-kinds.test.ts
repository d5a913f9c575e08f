// Owners of any kind the trace tracks (issue 36): rules derived from a trace's tracked kinds, the resource
// names the API server gives a CRD by default, and a refused owner read that names the kind and the flag.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { runManifests } from "../../functions/cli/manifests/command.js";
import { ownerRulesForTrackedKinds } from "../../knative/owner-rules.js";
import { type KubeApi, KubeError } from "../../shared/kube/api.js";
import { createOwnerResolver, OwnerReadForbidden } from "../../shared/kube/owners.js";
import { guessResourceOfKind } from "../../shared/kube/resource-names.js";
import { buildPod } from "../support/builders.js";
import { silentLog } from "../support/logs.js";
import { buildTraceBytes } from "../support/trace-builder.js";

const ROLLOUT_REF = {
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Rollout",
  name: "web",
  uid: "rollout-uid",
  controller: true,
};

describe("owner kinds beyond SimKube's built-in workloads", () => {
  it("guesses resources as the API server names a CRD's plural by default", () => {
    assert.deepEqual(["Rollout", "Ingress", "NetworkPolicy", "Deployment"].map(guessResourceOfKind), [
      "rollouts",
      "ingresses",
      "networkpolicies",
      "deployments",
    ]);
  });

  it("derives one get rule per group for the tracked kinds the rendering does not read yet", () => {
    const rules = ownerRulesForTrackedKinds([
      "apps/v1.Deployment",
      "v1.Pod",
      "batch/v1.Job",
      "argoproj.io/v1alpha1.Rollout",
      "example.com/v1.Policy",
      "example.com/v1.Widget",
    ]);
    assert.deepEqual(rules, [
      { apiGroups: ["argoproj.io"], resources: ["rollouts"], verbs: ["get"] },
      { apiGroups: ["example.com"], resources: ["policies", "widgets"], verbs: ["get"] },
    ]);
  });

  it("manifests --owner-kinds-from-trace renders those rules into mutate-create's ClusterRole", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-owner-kinds-"));
    try {
      const trace = path.join(dir, "rollouts.sktrace");
      const trackedObjects = { "argoproj.io/v1alpha1.Rollout": { trackLifecycle: true } };
      await writeFile(trace, buildTraceBytes({ config: { trackedObjects } }));
      let yaml = "";
      const args = ["--platform", "kind", "--sim-name", "s1", "--owner-kinds-from-trace", trace];
      args.push("--path-secret", "0123456789abcdef".repeat(4));
      const request = parseManifestsArgs(args);
      assert.notEqual(request.kind, "help");
      if (request.kind === "help") return;
      await runManifests(request, (text) => {
        yaml += text;
      });
      assert.match(yaml, /- argoproj\.io\n\s+resources:\n\s+- rollouts\n\s+verbs:\n\s+- get/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a refused owner read names the kind and the flag that grants it", async () => {
    const kube: KubeApi = {
      read: async () => {
        throw new KubeError(403, "Forbidden", 'rollouts.argoproj.io "web" is forbidden');
      },
      create: async (o) => o,
      replace: async (o) => o,
    };
    const owners = createOwnerResolver(kube, silentLog());
    const pod = buildPod({ ownerReferences: [ROLLOUT_REF] });
    await assert.rejects(owners.ownerChain(pod), (err: unknown) => {
      assert.ok(err instanceof OwnerReadForbidden, String(err));
      assert.match(err.message, /Rollout web \(argoproj\.io\/v1alpha1\)/);
      assert.match(err.message, /--owner-resource rollouts\.argoproj\.io/);
      return true;
    });
  });
});
