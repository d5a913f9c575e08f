// Shared test builders: plain JSON objects as the API server and the admission webhook would send them.
// Names follow SimKube's fixtures (testutils/src/constants.rs) so tests in both codebases read alike.

import type { AdmissionReview, UserInfo } from "../../shared/admission/review.js";
import { ADMISSION_API_VERSION } from "../../shared/admission/review.js";
import { ADMIN_USER, SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import { SIMKUBE_API_VERSION, SIMULATION_KIND, SIMULATION_ROOT_KIND } from "../../shared/base/keys.js";
import type { KubeObject, OwnerReference } from "../../shared/kube/api.js";
import type { Pod, PodCondition } from "../../shared/kube/pod.js";
import type { Simulation, SimulationSpec } from "../../shared/simulation/simulation.js";

export const TEST_POD = "the-pod";
export const TEST_NAMESPACE = "test-namespace";
export const TEST_SIM_NAME = "test-sim";
export const TEST_SIM_UID = "1234-asdf";
export const TEST_DRIVER_NAME = "sk-test-driver-12345";
export const TEST_DRIVER_ROOT_NAME = "sk-test-driver-12345-root";
export const TEST_ROOT_UID = "qwerty-5678";
/**
 * The name SimKube's driver gives its root for TEST_SIM_NAME (`sk-<sim>-driver-root`). SimKube's own fixture
 * (TEST_DRIVER_ROOT_NAME) does not follow it; reschedule-delete finds the root by this name.
 */
export const TEST_SIM_ROOT_NAME = "sk-test-sim-driver-root";
export const TEST_REPLICASET = "the-replicaset";
export const TEST_DEPLOYMENT = "the-deployment";
export const TEST_POD_UID = "asdf1234";

export function rootOwnerRef(name = TEST_DRIVER_ROOT_NAME, uid = TEST_ROOT_UID): OwnerReference {
  return { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, name, uid };
}

export function replicaSetOwnerRef(name = TEST_REPLICASET, uid = "asdfasdf"): OwnerReference {
  return { apiVersion: "apps/v1", kind: "ReplicaSet", name, uid, controller: true, blockOwnerDeletion: true };
}

export function deploymentOwnerRef(name = TEST_DEPLOYMENT, uid = "yuioyoiuy"): OwnerReference {
  return { apiVersion: "apps/v1", kind: "Deployment", name, uid, controller: true, blockOwnerDeletion: true };
}

export function simulationOwnerRef(name = TEST_SIM_NAME, uid = TEST_SIM_UID): OwnerReference {
  return { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_KIND, name, uid };
}

/** The condition the eviction API, taint manager, preemption and pod GC add before deleting a pod. */
/**
 * A bare pod as SimKube's driver creates it in a virtual namespace: owned by the SimulationRoot, with the
 * traced namespace in its annotation (the e2e tests' sleeper).
 */
export function buildDriverBarePod(
  name: string,
  namespace: string,
  extraMetadata: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      ownerReferences: [rootOwnerRef()],
      annotations: { "static.simkube.io/original-namespace": "testing" },
      ...extraMetadata,
    },
    spec: { containers: [{ name: "sleeper", image: "busybox:latest", command: ["sleep", "30"] }] },
  };
}

export function disruptionTarget(reason = "EvictionByEvictionAPI", status = "True"): PodCondition {
  return {
    type: "DisruptionTarget",
    status,
    reason,
    message: "test disruption",
    lastTransitionTime: "2024-01-01T00:00:00Z",
  };
}

export interface PodOptions {
  name?: string;
  namespace?: string;
  uid?: string;
  /** status.phase; "Running" by default. null leaves status.phase out. */
  phase?: string | null;
  /** Defaults to [rootOwnerRef()]: a bare pod of the simulation. Pass [] for no owners at all. */
  ownerReferences?: OwnerReference[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  conditions?: PodCondition[];
  nodeName?: string;
  /** Set: the pod is already being deleted (a final-phase DELETE review). */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  generateName?: string;
  /** Replaces the default single-container spec (nodeName is still applied). */
  spec?: Record<string, unknown>;
}

/** A pod as plain JSON (timestamps are RFC 3339 strings, as on the wire). */
export function buildPod(options: PodOptions = {}): Pod {
  const metadata: Record<string, unknown> = {
    name: options.name ?? TEST_POD,
    namespace: options.namespace ?? TEST_NAMESPACE,
    uid: options.uid ?? TEST_POD_UID,
    resourceVersion: options.resourceVersion ?? "1",
    creationTimestamp: options.creationTimestamp ?? "2024-01-01T00:00:00Z",
    labels: { foo: "bar", ...options.labels },
    ownerReferences: options.ownerReferences ?? [rootOwnerRef()],
  };
  if (options.annotations) metadata.annotations = { ...options.annotations };
  if (options.generateName) metadata.generateName = options.generateName;
  if (options.deletionTimestamp) metadata.deletionTimestamp = options.deletionTimestamp;
  if (options.deletionGracePeriodSeconds !== undefined) {
    metadata.deletionGracePeriodSeconds = options.deletionGracePeriodSeconds;
  }
  const spec: Record<string, unknown> = structuredClone(
    options.spec ?? { containers: [{ name: "container-0", image: "nginx:1.27" }] },
  );
  if (options.nodeName) spec.nodeName = options.nodeName;
  const status: Record<string, unknown> = {};
  const phase = options.phase === undefined ? "Running" : options.phase;
  if (phase !== null) status.phase = phase;
  if (options.conditions) status.conditions = structuredClone(options.conditions);
  return { apiVersion: "v1", kind: "Pod", metadata, spec, status } as Pod;
}

export interface SimulationOptions {
  name?: string;
  uid?: string;
  /** status.state: "Running" by default. */
  state?: string;
  rescheduleInterruptedBarePods?: boolean;
  speed?: number;
  deletionTimestamp?: string;
  spec?: SimulationSpec;
}

export function buildSimulation(options: SimulationOptions = {}): Simulation {
  const metadata: Record<string, unknown> = {
    name: options.name ?? TEST_SIM_NAME,
    uid: options.uid ?? TEST_SIM_UID,
    resourceVersion: "1",
  };
  if (options.deletionTimestamp) metadata.deletionTimestamp = options.deletionTimestamp;
  const spec: SimulationSpec = {
    driver: { namespace: "simkube", tracePath: "file:///foo/bar", virtualNsPrefix: "virtual" },
    ...options.spec,
  };
  if (options.speed !== undefined) spec.speed = options.speed;
  if (options.rescheduleInterruptedBarePods !== undefined) {
    spec.rescheduleInterruptedBarePods = options.rescheduleInterruptedBarePods;
  }
  return {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_KIND,
    metadata,
    spec,
    status: { state: options.state ?? "Running" },
  } as Simulation;
}

export interface SimulationRootOptions {
  name?: string;
  uid?: string;
  simName?: string;
  simUid?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
}

/** The driver's SimulationRoot (cluster-scoped), owned by the Simulation. */
export function buildSimulationRoot(options: SimulationRootOptions = {}): KubeObject {
  const metadata: Record<string, unknown> = {
    name: options.name ?? TEST_DRIVER_ROOT_NAME,
    uid: options.uid ?? TEST_ROOT_UID,
    resourceVersion: "1",
    ownerReferences: [simulationOwnerRef(options.simName, options.simUid)],
  };
  if (options.deletionTimestamp) metadata.deletionTimestamp = options.deletionTimestamp;
  if (options.finalizers) metadata.finalizers = [...options.finalizers];
  return { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, metadata, spec: {} } as KubeObject;
}

export interface NamespaceOptions {
  name?: string;
  uid?: string;
  /** "Active" by default; "Terminating" also sets a deletionTimestamp unless one is given. */
  phase?: "Active" | "Terminating";
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
  labels?: Record<string, string>;
}

export function buildNamespace(options: NamespaceOptions = {}): KubeObject {
  const phase = options.phase ?? "Active";
  const metadata: Record<string, unknown> = {
    name: options.name ?? TEST_NAMESPACE,
    uid: options.uid ?? "ns-uid-1",
    resourceVersion: "1",
  };
  const deletionTimestamp =
    options.deletionTimestamp ?? (phase === "Terminating" ? "2024-01-01T00:10:00Z" : undefined);
  if (deletionTimestamp) metadata.deletionTimestamp = deletionTimestamp;
  if (options.ownerReferences) metadata.ownerReferences = structuredClone(options.ownerReferences);
  if (options.labels) metadata.labels = { ...options.labels };
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata,
    spec: { finalizers: ["kubernetes"] },
    status: { phase },
  } as KubeObject;
}

const VIRTUAL = { "simkube.io/virtual": "true" };

/** A virtual namespace as SimKube's driver creates it: owned by `root`, labelled `simkube.io/virtual: "true"`. */
export function buildVirtualNamespace(root: OwnerReference, options: NamespaceOptions = {}): KubeObject {
  return buildNamespace({
    ownerReferences: [root],
    ...options,
    labels: { "kubernetes.io/metadata.name": options.name ?? TEST_NAMESPACE, ...VIRTUAL, ...options.labels },
  });
}

export interface ReplicaSetOptions {
  name?: string;
  namespace?: string;
  uid?: string;
  /** Defaults to [rootOwnerRef()]: a ReplicaSet the driver created for the simulation. */
  ownerReferences?: OwnerReference[];
}

export function buildReplicaSet(options: ReplicaSetOptions = {}): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: options.name ?? TEST_REPLICASET,
      namespace: options.namespace ?? TEST_NAMESPACE,
      uid: options.uid ?? "asdfasdf",
      resourceVersion: "1",
      ownerReferences: structuredClone(options.ownerReferences ?? [rootOwnerRef()]),
    },
    spec: { replicas: 1 },
  } as KubeObject;
}

function userInfoOf(user: string | UserInfo | undefined, fallback: string): UserInfo {
  if (user === undefined) return { username: fallback };
  return typeof user === "string" ? { username: user } : structuredClone(user);
}

let reviewCounter = 0;
function nextReviewUid(): string {
  reviewCounter += 1;
  return `12345-12345-${reviewCounter}`;
}

const POD_RESOURCE = { group: "", version: "v1", resource: "pods" };
const POD_KIND = { group: "", version: "v1", kind: "Pod" };

export interface DeleteReviewOptions {
  pod: KubeObject;
  /** userInfo.username (or a whole UserInfo); an admin user by default. */
  user?: string | UserInfo;
  dryRun?: boolean;
  /** request.name; the pod's name by default. "" is what namespace deletion sends (DeleteCollection). */
  name?: string;
  /** request.uid; a fresh one per review by default. */
  uid?: string;
  /** request.options (DeleteOptions), e.g. { gracePeriodSeconds: 0 }. */
  options?: Record<string, unknown>;
}

/** A DELETE review: object null, oldObject the pod (k8s.io/apiserver pkg/registry/rest/delete.go). */
export function buildDeleteReview(options: DeleteReviewOptions): AdmissionReview {
  const pod = options.pod;
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: "AdmissionReview",
    request: {
      uid: options.uid ?? nextReviewUid(),
      kind: POD_KIND,
      resource: POD_RESOURCE,
      name: options.name ?? pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? TEST_NAMESPACE,
      operation: "DELETE",
      userInfo: userInfoOf(options.user, ADMIN_USER),
      object: null,
      oldObject: structuredClone(pod),
      dryRun: options.dryRun ?? false,
      options: {
        apiVersion: "meta.k8s.io/v1",
        kind: "DeleteOptions",
        ...options.options,
      },
    },
  };
}

export interface CreateReviewOptions {
  pod: KubeObject;
  user?: string | UserInfo;
  dryRun?: boolean;
  /** "CREATE" by default; "UPDATE" needs oldObject (the pod itself by default). */
  operation?: "CREATE" | "UPDATE";
  oldObject?: KubeObject;
  /** e.g. "status" for the kubelet's or KWOK's status writes. */
  subResource?: string;
  uid?: string;
  /** request.name; for a CREATE with generateName the API server sends "". */
  name?: string;
}

/** A CREATE (or UPDATE) review: object the pod, oldObject null for CREATE. */
export function buildCreateReview(options: CreateReviewOptions): AdmissionReview {
  const pod = options.pod;
  const operation = options.operation ?? "CREATE";
  const request: NonNullable<AdmissionReview["request"]> = {
    uid: options.uid ?? nextReviewUid(),
    kind: POD_KIND,
    resource: POD_RESOURCE,
    name: options.name ?? pod.metadata?.name ?? "",
    namespace: pod.metadata?.namespace ?? TEST_NAMESPACE,
    operation,
    userInfo: userInfoOf(options.user, SIMKUBE_DRIVER_USER),
    object: structuredClone(pod),
    oldObject: operation === "UPDATE" ? structuredClone(options.oldObject ?? pod) : null,
    dryRun: options.dryRun ?? false,
    options: {
      apiVersion: "meta.k8s.io/v1",
      kind: operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
    },
  };
  if (options.subResource) request.subResource = options.subResource;
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", request };
}
