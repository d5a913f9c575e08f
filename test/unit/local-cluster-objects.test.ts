// The local cluster's pure parts: the objects it starts with (as SimKube shapes them), the URLs they are
// POSTed to, its kubeconfigs, and how it finds the control-plane build.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import { findControlPlaneDir, missingBinaries } from "../../functions/local-cluster/binaries.js";
import {
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  buildVirtualNode,
  collectionPath,
  driverRootName,
  objectPath,
  simkubeCrds,
} from "../../functions/local-cluster/cluster-objects.js";
import { renderKubeconfig } from "../../functions/local-cluster/kubeconfig.js";
import type { KubeObject } from "../../shared/kube/api.js";

const simulation = {
  ...buildSimulation({
    name: "local-sim",
    reschedule: true,
    virtualNsPrefix: "virtual",
    driverNamespace: "simkube",
  }),
  metadata: { name: "local-sim", uid: "sim-uid" },
} as KubeObject;

test("the Simulation carries the flag, the prefix and the trace; its driver's root is owned by it", () => {
  const sim = buildSimulation({
    name: "s",
    reschedule: false,
    virtualNsPrefix: "v",
    driverNamespace: "simkube",
    tracePath: "/t.sktrace",
  });
  assert.deepEqual(sim.spec, {
    speed: 1,
    rescheduleInterruptedBarePods: false,
    driver: { namespace: "simkube", virtualNsPrefix: "v", tracePath: "/t.sktrace" },
  });
  const root = buildSimulationRoot(simulation);
  assert.equal(root.metadata?.name, driverRootName("local-sim"));
  assert.equal(driverRootName("local-sim"), "sk-local-sim-driver-root");
  assert.deepEqual(root.metadata?.ownerReferences, [
    { apiVersion: "simkube.io/v1", kind: "Simulation", name: "local-sim", uid: "sim-uid" },
  ]);
});

test("virtual namespaces and nodes are labelled, owned and tainted as SimKube's", () => {
  const root = {
    ...buildSimulationRoot(simulation),
    metadata: { name: "sk-local-sim-driver-root", uid: "root-uid" },
  } as KubeObject;
  const ns = buildVirtualNamespace("virtual-default", root, "local-sim");
  assert.deepEqual(ns.metadata?.labels, {
    "simkube.io/virtual": "true",
    "simkube.io/simulation": "local-sim",
  });
  assert.equal(ns.metadata?.ownerReferences?.[0]?.uid, "root-uid");
  const node = buildVirtualNode("virtual-node-1") as KubeObject & { spec: { taints: unknown[] } };
  assert.equal(node.metadata?.labels?.type, "virtual");
  assert.equal(node.metadata?.annotations?.["kwok.x-k8s.io/node"], "fake");
  assert.deepEqual(node.spec.taints, [{ key: "kwok-provider", value: "true", effect: "NoSchedule" }]);
});

test("the CRDs are cluster-scoped simkube.io/v1 with a status subresource", () => {
  const crds = simkubeCrds() as {
    metadata: { name: string };
    spec: { scope: string; versions: { name: string; subresources: unknown }[] };
  }[];
  assert.deepEqual(
    crds.map((c) => c.metadata.name),
    ["simulations.simkube.io", "simulationroots.simkube.io"],
  );
  for (const crd of crds) {
    assert.equal(crd.spec.scope, "Cluster");
    assert.deepEqual(
      crd.spec.versions.map((v) => [v.name, v.subresources]),
      [["v1", { status: {} }]],
    );
  }
});

test("objects are POSTed to their collection: core or group, namespaced or not, -y plurals", () => {
  const at = (apiVersion: string, kind: string, namespace?: string) =>
    collectionPath({
      apiVersion,
      kind,
      metadata: { name: "x", ...(namespace ? { namespace } : {}) },
    } as KubeObject);
  assert.equal(at("v1", "Pod", "ns"), "/api/v1/namespaces/ns/pods");
  assert.equal(at("v1", "ServiceAccount", "simkube"), "/api/v1/namespaces/simkube/serviceaccounts");
  assert.equal(
    at("rbac.authorization.k8s.io/v1", "ClusterRole"),
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
  );
  assert.equal(
    at("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
  );
  assert.equal(objectPath(simulation), "/apis/simkube.io/v1/simulations/local-sim");
});

test("a kubeconfig names the server, the CA file and the token", () => {
  const config = parse(
    renderKubeconfig({
      server: "https://127.0.0.1:6443",
      caFile: "/tmp/ca.crt",
      token: "t0k",
      user: "admin",
    }),
  );
  assert.equal(config.clusters[0].cluster.server, "https://127.0.0.1:6443");
  assert.equal(config.clusters[0].cluster["certificate-authority"], "/tmp/ca.crt");
  assert.deepEqual(config.users[0], { name: "admin", user: { token: "t0k" } });
  assert.equal(config["current-context"], config.contexts[0].name);
});

test("the control-plane build is found from any folder below the project, and missing binaries are named", () => {
  const root = mkdtempSync(path.join(tmpdir(), "simkube-fn-cp-"));
  try {
    mkdirSync(path.join(root, "controlplane"));
    mkdirSync(path.join(root, "dist/test/cluster"), { recursive: true });
    writeFileSync(path.join(root, "controlplane/build.sh"), "");
    assert.equal(
      findControlPlaneDir([path.join(root, "dist/test/cluster")]),
      path.join(root, "controlplane"),
    );
    assert.equal(findControlPlaneDir([tmpdir()]), undefined);
    writeFileSync(path.join(root, "etcd"), "");
    assert.deepEqual(missingBinaries(root), [
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "kwok",
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
