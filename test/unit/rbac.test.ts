// Least privilege, derived rather than declared: each function is built exactly as `simkube-fn serve` builds
// it (from the environment its rendered Knative Service sets), driven through the paths that call the API
// (every owner kind, the sequence store's first and later writes, a clone), and every call is recorded as
// the API server would authorize it. The rendered RBAC, followed from each function's ServiceAccount through
// its bindings, must grant exactly that set: nothing the code needs is missing, nothing it never asks for is
// granted.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import type { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import type { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import type { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { buildFunction } from "../../functions/runtime/registry.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildAllManifests, type Manifest } from "../../knative/manifests.js";
import type { DeploymentOptions } from "../../knative/options.js";
import { OWNER_KINDS, serviceAccountName } from "../../knative/rbac.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import type { FunctionName } from "../../shared/base/function-names.js";
import { ADMIN_USER } from "../../shared/base/identities.js";
import { type Env, loadConfig } from "../../shared/config/config.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  disruptionTarget,
  rootOwnerRef,
  TEST_SIM_NAME,
  TEST_SIM_ROOT_NAME,
} from "../support/builders.js";
import { silentLog } from "../support/logs.js";
import { type AuthorizedCall, createRecordingKube, type RecordingKube } from "../support/recording-kube.js";

const FUNCTIONS_NS = "fns";
const VIRTUAL_NS = "virtual-rbac";
const OPTIONS: DeploymentOptions = {
  simName: TEST_SIM_NAME,
  namespace: FUNCTIONS_NS,
  webhookUrlBase: "https://fn.example.com",
  rescheduleInterruptedBarePods: true,
  pathSecret: "rbac-test-secret-0123456789abcdef",
};
const MANIFESTS = buildAllManifests(OPTIONS);

const quiet = silentLog();

/** "<group>/<resource> <verb> <where>": where is "cluster-wide" or "in <namespace>". */
type Permission = string;
const permission = (group: string, resource: string, verb: string, namespace?: string): Permission =>
  `${group}/${resource} ${verb} ${namespace === undefined ? "cluster-wide" : `in ${namespace}`}`;

/** What a call needs: calls into the functions' own namespace may be granted there; all others cluster-wide. */
function neededBy(calls: readonly AuthorizedCall[]): Set<Permission> {
  return new Set(
    calls.map((c) =>
      permission(c.group, c.resource, c.verb, c.namespace === FUNCTIONS_NS ? FUNCTIONS_NS : undefined),
    ),
  );
}

/** What the rendered RBAC grants a function's ServiceAccount, found through the bindings naming it. */
function grantedTo(fn: FunctionName, manifests: readonly Manifest[] = MANIFESTS): Set<Permission> {
  const kindOf = <T>(kind: string): T[] => manifests.filter((m) => m.kind === kind) as unknown as T[];
  const sa = serviceAccountName(resolveOptions(OPTIONS), fn);
  const names = (subjects: { kind: string; name: string; namespace?: string }[] | undefined) =>
    (subjects ?? []).some(
      (s) => s.kind === "ServiceAccount" && s.name === sa && s.namespace === FUNCTIONS_NS,
    );
  const granted = new Set<Permission>();
  const add = (rules: ClusterRole["rules"], namespace?: string) => {
    for (const rule of rules ?? []) {
      for (const group of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) granted.add(permission(group, resource, verb, namespace));
    }
  };
  for (const binding of kindOf<ClusterRoleBinding>("ClusterRoleBinding").filter((b) => names(b.subjects))) {
    add(kindOf<ClusterRole>("ClusterRole").find((r) => r.metadata?.name === binding.roleRef.name)?.rules);
  }
  for (const binding of kindOf<RoleBinding>("RoleBinding").filter((b) => names(b.subjects))) {
    // A RoleBinding grants a Role's rules, or a ClusterRole's, in its own namespace only.
    const role =
      binding.roleRef.kind === "ClusterRole"
        ? kindOf<ClusterRole>("ClusterRole").find((r) => r.metadata?.name === binding.roleRef.name)
        : kindOf<Role>("Role").find(
            (r) =>
              r.metadata?.name === binding.roleRef.name &&
              r.metadata?.namespace === binding.metadata?.namespace,
          );
    add(role?.rules, binding.metadata?.namespace);
  }
  return granted;
}

/** The environment the rendered Knative Service gives the function (literal values; secrets left out). */
function renderedEnv(fn: FunctionName, manifests: readonly Manifest[] = MANIFESTS): Env {
  const service = manifests.find(
    (m) => m.kind === "Service" && m.metadata?.name === `simkube-fn-${fn}`,
  ) as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  const env: Record<string, string> = {};
  for (const e of service.spec.template.spec.containers[0]?.env ?? [])
    if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function seedSimulation(kube: RecordingKube): void {
  kube.memory.seed(buildSimulation({ rescheduleInterruptedBarePods: true }));
  kube.memory.seed(buildSimulationRoot());
  // The driver's own root (sk-<sim>-driver-root): it owns the virtual namespaces and the bare pods.
  kube.memory.seed(buildSimulationRoot({ name: TEST_SIM_ROOT_NAME }));
  kube.memory.seed(buildVirtualNamespace(rootOwnerRef(TEST_SIM_ROOT_NAME), { name: VIRTUAL_NS }));
}

function assertPatched(review: AdmissionReview, what: string): void {
  assert.equal(review.response?.allowed, true, `${what}: ${review.response?.status?.message}`);
  assert.ok(review.response?.patch, `${what}: patched`);
}

async function driveMutateCreate(kube: RecordingKube, manifests = MANIFESTS): Promise<void> {
  const config = loadConfig(renderedEnv("mutate-create", manifests));
  assert.equal(config.storeNamespace, FUNCTIONS_NS, "the sequence store lives in the functions' namespace");
  const { handle } = await buildFunction("mutate-create", config, kube, quiet);
  for (const { apiVersion, kind } of OWNER_KINDS) {
    const owner: KubeObject = {
      apiVersion,
      kind,
      metadata: {
        name: `the-${kind.toLowerCase()}`,
        namespace: VIRTUAL_NS,
        uid: `uid-${kind}`,
        ownerReferences: [rootOwnerRef()],
      },
    };
    kube.memory.seed(owner);
    const ref = { apiVersion, kind, name: `the-${kind.toLowerCase()}`, uid: `uid-${kind}`, controller: true };
    const pod = buildPod({
      name: `pod-of-${kind.toLowerCase()}`,
      namespace: VIRTUAL_NS,
      phase: null,
      ownerReferences: [ref],
    });
    assertPatched(await handle(buildCreateReview({ pod })), `pod owned by a ${kind}`);
  }
  // An ownerless pod in a virtual namespace is pinned (without SIM_NAME its namespace says for which Simulation).
  assertPatched(
    await handle(
      buildCreateReview({ pod: buildPod({ name: "stray", namespace: VIRTUAL_NS, ownerReferences: [] }) }),
    ),
    "ownerless pod",
  );
  // A bare pod twice: the sequence store's first write of the run was above; these are later ones.
  for (const name of ["bare-1", "bare-2"]) {
    assertPatched(
      await handle(buildCreateReview({ pod: buildPod({ name, namespace: VIRTUAL_NS, phase: null }) })),
      name,
    );
  }
  const running = buildPod({ name: "bare-1", namespace: VIRTUAL_NS, nodeName: "kwok-node-1" });
  const update = await handle(
    buildCreateReview({ pod: running, operation: "UPDATE", subResource: "status" }),
  );
  assert.equal(update.response?.allowed, true);
}

function compare(needed: Set<Permission>, granted: Set<Permission>) {
  return {
    missing: [...needed].filter((p) => !granted.has(p)).sort(),
    unused: [...granted].filter((p) => !needed.has(p)).sort(),
  };
}

async function driveRescheduleDelete(kube: RecordingKube, manifests = MANIFESTS): Promise<void> {
  const { handle, settle } = await buildFunction(
    "reschedule-delete",
    loadConfig(renderedEnv("reschedule-delete", manifests)),
    kube,
    quiet,
  );
  const live = kube.memory.seed(
    buildPod({
      namespace: VIRTUAL_NS,
      nodeName: "kwok-node-1",
      conditions: [disruptionTarget()],
      ownerReferences: [rootOwnerRef(TEST_SIM_ROOT_NAME)],
    }),
  );
  const review = await handle(buildDeleteReview({ pod: live, user: ADMIN_USER }));
  assert.equal(review.response?.allowed, true);
  // The API server stores the deletion after the answer; the clone waits for it (its reads included).
  kube.memory.seed({ ...live, metadata: { ...live.metadata, deletionTimestamp: "2024-01-01T00:00:30Z" } });
  assert.equal(await settle(), true);
  const clone = kube.memory.get({
    apiVersion: "v1",
    kind: "Pod",
    name: "the-pod-clone-1",
    namespace: VIRTUAL_NS,
  });
  assert.ok(clone, "the interruption was cloned, so the create path was exercised");
}

/** The resources a function reads, split by what it asks for: the whole object, or the metadata only. */
function readShapes(calls: readonly AuthorizedCall[]): { whole: string[]; metadataOnly: string[] } {
  const reads = calls.filter((c) => c.verb === "get");
  const names = (metadataOnly: boolean) =>
    [
      ...new Set(
        reads
          .filter((c) => (c.metadataOnly === true) === metadataOnly)
          .map((c) => `${c.group}/${c.resource}`),
      ),
    ].sort();
  return { whole: names(false), metadataOnly: names(true) };
}

/**
 * Only what a function copies or interprets beyond metadata is read whole: the Simulation (its spec), the
 * sequence store's ConfigMaps (their data) and the interrupted pod (the clone is made from its spec); an
 * existing clone is read for its metadata (clone-record.ts).
 * Owners, SimulationRoots and Namespaces are judged by uid, labels, ownerReferences and deletion only.
 */
const EXPECTED_READS: Record<FunctionName, { whole: string[]; metadataOnly: string[] }> = {
  "mutate-create": {
    whole: ["/configmaps", "simkube.io/simulations"],
    metadataOnly: [
      "apps/daemonsets",
      "apps/deployments",
      "apps/replicasets",
      "apps/statefulsets",
      "batch/cronjobs",
      "batch/jobs",
      "simkube.io/simulationroots",
      // The top of an owner chain: followed like any owner (metadata), then read whole for its settings.
      "simkube.io/simulations",
    ],
  },
  "reschedule-delete": {
    whole: ["/pods", "simkube.io/simulations"],
    // Pods by metadata too: the clone's name and the next one, read for the record of this pod's clone.
    metadataOnly: ["/namespaces", "/pods", "simkube.io/simulationroots"],
  },
};

const DRIVERS: Record<FunctionName, (kube: RecordingKube) => Promise<void>> = {
  "mutate-create": driveMutateCreate,
  "reschedule-delete": driveRescheduleDelete,
};

describe("RBAC derived from the API calls each function makes", () => {
  for (const fn of Object.keys(DRIVERS) as FunctionName[]) {
    it(`${fn}: the rendered roles grant exactly what its calls need`, async () => {
      const kube = createRecordingKube();
      seedSimulation(kube);
      await DRIVERS[fn](kube);
      const needed = neededBy(kube.calls);
      const granted = grantedTo(fn);
      assert.deepEqual(compare(needed, granted), { missing: [], unused: [] });
    });
  }

  for (const fn of Object.keys(DRIVERS) as FunctionName[]) {
    it(`${fn}: reads whole only what it needs whole, everything else metadata-only`, async () => {
      const kube = createRecordingKube();
      seedSimulation(kube);
      await DRIVERS[fn](kube);
      assert.deepEqual(readShapes(kube.calls), EXPECTED_READS[fn]);
    });
  }

  it("mutate-create for every Simulation reads namespaces metadata-only", async () => {
    const { simName: _sim, ...every } = OPTIONS;
    const manifests = buildAllManifests(every);
    const kube = createRecordingKube();
    seedSimulation(kube);
    kube.memory.seed(buildSimulation({ rescheduleInterruptedBarePods: true, spec: { driver: {} } }));
    await driveMutateCreate(kube, manifests);
    const shapes = readShapes(kube.calls);
    assert.ok(shapes.metadataOnly.includes("/namespaces"));
    assert.ok(!shapes.whole.includes("/namespaces"));
  });

  it("reschedule-delete with --pod-reads virtual-namespaces: no pod reads but those its own binding grants in the virtual namespace", async () => {
    const manifests = buildAllManifests({ ...OPTIONS, podReads: "virtual-namespaces" });
    const kube = createRecordingKube();
    seedSimulation(kube);
    await driveRescheduleDelete(kube, manifests);
    const created = kube.memory.get({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      name: "simkube-fn-virtual-pod-reads",
      namespace: VIRTUAL_NS,
    });
    assert.ok(created, "the function bound the pod-read role in the virtual namespace");
    // Pod reads happen in the virtual namespace only; RBAC's escalation check asks `bind` on the role a binding names.
    const calls = kube.calls.map((c) =>
      c.resource === "pods" && c.verb === "get"
        ? c
        : { ...c, namespace: c.namespace === FUNCTIONS_NS ? FUNCTIONS_NS : undefined },
    );
    const needed = new Set(calls.map((c) => permission(c.group, c.resource, c.verb, c.namespace)));
    needed.add(permission("rbac.authorization.k8s.io", "clusterroles", "bind"));
    const granted = grantedTo("reschedule-delete", [...manifests, created as unknown as Manifest]);
    assert.deepEqual(compare(needed, granted), { missing: [], unused: [] });
    assert.ok(needed.has(`/pods get in ${VIRTUAL_NS}`));
    assert.ok(
      !grantedTo("reschedule-delete", manifests).has("/pods get cluster-wide"),
      "no cluster-wide pod reads",
    );
    const bind = (
      manifests.find(
        (m) => m.kind === "ClusterRole" && m.metadata?.name === "simkube-fn-reschedule-delete",
      ) as unknown as ClusterRole
    ).rules?.find((r) => r.verbs.includes("bind"));
    assert.deepEqual(
      bind?.resourceNames,
      ["simkube-fn-virtual-pod-reads"],
      "bind is limited to the one role",
    );
  });

  it("the comparison can fail: a verb the code never uses, or a missing grant, is reported", async () => {
    const kube = createRecordingKube();
    seedSimulation(kube);
    await driveMutateCreate(kube);
    const needed = neededBy(kube.calls);
    // What the single shared ClusterRole used to grant: list on owner kinds, every pod spec in the cluster.
    const extra = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] };
    const loose = buildAllManifests({ ...OPTIONS, extraRules: [extra] });
    assert.deepEqual(compare(needed, grantedTo("mutate-create", loose)).unused, [
      "/pods get cluster-wide",
      "/pods list cluster-wide",
    ]);
    const memoryStore = buildAllManifests({ ...OPTIONS, sequenceStore: "memory" });
    assert.deepEqual(compare(needed, grantedTo("mutate-create", memoryStore)).missing, [
      "/configmaps create in fns",
      "/configmaps get in fns",
      "/configmaps update in fns",
    ]);
  });

  it("mutate-create for every Simulation (no simName): the rendered roles grant exactly what its calls need, namespaces included", async () => {
    const { simName: _sim, ...every } = OPTIONS;
    const manifests = buildAllManifests(every);
    assert.equal(renderedEnv("mutate-create", manifests).SIM_NAME, undefined);
    const kube = createRecordingKube();
    seedSimulation(kube);
    // No trace to load: the Simulation names none (spec.driver.tracePath).
    kube.memory.seed(buildSimulation({ rescheduleInterruptedBarePods: true, spec: { driver: {} } }));
    await driveMutateCreate(kube, manifests);
    const needed = neededBy(kube.calls);
    assert.ok(needed.has("/namespaces get cluster-wide"), "the ownerless pod's namespace was read");
    assert.deepEqual(compare(needed, grantedTo("mutate-create", manifests)), { missing: [], unused: [] });
  });

  it("mutate-create with --no-reschedule: the rendered roles grant exactly what its calls need, the Event on a Simulation asking for rescheduling included", async () => {
    const manifests = buildAllManifests({ ...OPTIONS, rescheduleInterruptedBarePods: false });
    assert.equal(renderedEnv("mutate-create", manifests).RESCHEDULE_SERVED, "false");
    const kube = createRecordingKube();
    seedSimulation(kube);
    await driveMutateCreate(kube, manifests);
    // The notice is not awaited by the review: let it write.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const events = kube.calls.filter((c) => c.resource === "events");
    assert.deepEqual(events, [{ group: "", resource: "events", verb: "create", namespace: "default" }]);
    const needed = new Set(
      kube.calls.map((c) =>
        permission(
          c.group,
          c.resource,
          c.verb,
          c.namespace === FUNCTIONS_NS || c.resource === "events" ? c.namespace : undefined,
        ),
      ),
    );
    assert.deepEqual(compare(needed, grantedTo("mutate-create", manifests)), { missing: [], unused: [] });
  });

  it("the derivation sees what it should: mutate-create writes ConfigMaps only in its own namespace", async () => {
    const kube = createRecordingKube();
    seedSimulation(kube);
    await driveMutateCreate(kube);
    const configMapCalls = kube.calls.filter((c) => c.resource === "configmaps");
    assert.deepEqual([...new Set(configMapCalls.map((c) => c.verb))].sort(), ["create", "get", "update"]);
    assert.ok(configMapCalls.every((c) => c.namespace === FUNCTIONS_NS));
    assert.ok(!kube.calls.some((c) => c.resource === "pods"), "mutate-create never calls the pods API");
  });
});
