// Realistic pod DELETE reviews for a simulation teardown, as the API server sends them to reschedule-delete.
// Pure and deterministic: a seed and a clock value in, the same reviews out. No I/O, no Date.now().
//
// What a teardown looks like (kubernetes/kubernetes pkg/controller/namespace/deletion/
// namespaced_resources_deleter.go, pkg/controller/garbagecollector/operations.go, pkg/registry/core/pod/
// strategy.go CheckGracefulDelete; kubernetes-sigs/kwok pkg/kwok/controllers/pod_controller.go):
// - The namespace controller deletes every pod of a deleted virtual namespace through DeleteCollection: one
//   review per pod, request.name "" (read the pod from oldObject), graceful, no deletionTimestamp yet.
// - The garbage collector deletes each dependent of a deleted owner (bare pods of the SimulationRoot, pods of
//   a ReplicaSet): request.name set, DeleteOptions with a UID precondition and a propagation policy.
// - A Running pod deleted gracefully is then finished off by KWOK's final grace-0 DELETE; the API server
//   calls the webhook twice for it (shortening update, then the storage delete): deletionTimestamp set, first
//   with the pod's grace period, then with deletionGracePeriodSeconds 0.
// - A finished pod (Succeeded/Failed) gets grace 0 from the API server right away: the initiator's DELETE
//   itself produces the same update-then-delete pair, and KWOK sends nothing.
// None of these is an interruption, so a correct reschedule-delete creates no clone for any of them.
// Interruptions (a user's delete of a Running bare pod, a taint eviction marked DisruptionTarget) are only
// generated when asked for, and each one should create exactly one clone.

import {
  ADMISSION_API_VERSION,
  type AdmissionReview,
  type UserInfo,
} from "../../../shared/admission/index.js";
import {
  ADMIN_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_STAGE_COMPLETE_KEY,
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
  ORIG_NAMESPACE_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMKUBE_API_VERSION,
  SIMULATION_LABEL_KEY,
  SIMULATION_ROOT_KIND,
  VIRTUAL_NODE_SELECTOR_KEY,
  VIRTUAL_NODE_SELECTOR_VALUE,
  VIRTUAL_NODE_TOLERATION_KEY,
} from "../../../shared/base/index.js";
import { seededRandom } from "./seeded-random.js";

const SERVICE_ACCOUNT_GROUPS = [
  "system:serviceaccounts",
  "system:serviceaccounts:kube-system",
  "system:authenticated",
];

/** Who sent a review, and in which phase of the pod's deletion. */
export type ReviewKind =
  | "namespace-controller"
  | "garbage-collector"
  | "kwok-final"
  /** The initiator's own second call for a finished pod (grace 0 from the start). */
  | "finished-final"
  /** Only with an interruption fraction: a delete that should create one clone. */
  | "interruption";

export const REVIEW_KINDS: readonly ReviewKind[] = [
  "namespace-controller",
  "garbage-collector",
  "kwok-final",
  "finished-final",
  "interruption",
];

export interface TeardownOptions {
  /** How many reviews to generate (the last pod's deletion may be cut short). */
  count: number;
  /** The Simulation's name; pods carry it in their simulation label. */
  simName: string;
  /** The SimulationRoot that owns bare pods and the workloads, e.g. sk-<sim>-driver-xxxxx-root. */
  rootName: string;
  rootUid: string;
  /** Traced namespaces; pods live in `<virtualNsPrefix>-<namespace>`. */
  namespaces?: readonly string[];
  virtualNsPrefix?: string;
  /** Fraction of pods (0..1) whose deletion starts as an interruption of a Running bare pod; default 0. */
  interruptions?: number;
  /** Share of pods that are bare (owned only by the SimulationRoot); default 0.4. */
  bareShare?: number;
  /** Share of pods that have finished (Succeeded or Failed); default 0.3. */
  finishedShare?: number;
  seed?: number;
  /** The teardown's wall clock: deletion timestamps are computed from it. */
  now: Date;
}

export interface GeneratedReview {
  kind: ReviewKind;
  /** request.uid, which the answer must echo. */
  uid: string;
  podUid: string;
  review: AdmissionReview;
}

export interface TeardownReviews {
  reviews: GeneratedReview[];
  /** How many clones a correct reschedule-delete creates for these reviews (one per interrupted pod). */
  expectedClones: number;
  byKind: Record<ReviewKind, number>;
  pods: number;
}

export const DEFAULT_NAMESPACES = ["default", "shop", "batch", "monitoring"];
const WORKLOADS = [
  "frontend",
  "cart",
  "checkout",
  "payments",
  "search",
  "recommendation",
  "ad-service",
  "email",
];
const BARE_PODS = ["nightly-report", "db-migrate", "warmup", "cache-prime", "smoke-test", "backfill"];
const IMAGES = [
  "nginx:1.27",
  "redis:7.4",
  "busybox:1.36",
  "ghcr.io/acme/shop-api:2.14.1",
  "python:3.12-slim",
];
const GRACE_PERIOD_SECONDS = 30;
// Deletions are emitted in waves: the namespace controller or GC deletes a batch of pods, then KWOK finishes
// them off. Within a burst this puts the three reviews of one pod apart, as in a cluster.
const WAVE = 32;

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function hex(random: () => number, length: number): string {
  let out = "";
  while (out.length < length)
    out += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, "0");
  return out.slice(0, length);
}

function uuid(random: () => number): string {
  const h = hex(random, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

// Kubernetes' generateName suffix alphabet (no vowels, no ambiguous characters).
const SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const SUFFIX_CHARS = SUFFIX_ALPHABET.split("");
function nameSuffix(random: () => number, length = 5): string {
  let out = "";
  for (let i = 0; i < length; i++) out += pick(random, SUFFIX_CHARS);
  return out;
}

function iso(date: Date, offsetSeconds: number): string {
  return new Date(date.getTime() + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

type Phase = "Running" | "Succeeded" | "Failed";

interface PodShape {
  pod: Record<string, unknown> & { metadata: Record<string, unknown>; status: Record<string, unknown> };
  uid: string;
  name: string;
  namespace: string;
  phase: Phase;
  bare: boolean;
}

interface PodContext {
  random: () => number;
  options: TeardownOptions;
  namespaces: readonly string[];
  prefix: string;
}

/** The pod's randomly drawn facts. The draw order is fixed: a seed must always make the same pods. */
interface PodFacts {
  original: string;
  namespace: string;
  uid: string;
  /** Seconds relative to options.now. */
  created: number;
  started: number;
  node: string;
  image: string;
  hash: string;
  sequence: number;
}

function drawPodFacts(ctx: PodContext): PodFacts {
  const { random } = ctx;
  const original = pick(random, ctx.namespaces);
  const namespace = `${ctx.prefix}-${original}`;
  const uid = uuid(random);
  const created = -60 * (5 + Math.floor(random() * 120));
  const started = created + 2 + Math.floor(random() * 10);
  const node = `kwok-node-${Math.floor(random() * 50)}`;
  const image = pick(random, IMAGES);
  const hash = hex(random, 16);
  const sequence = Math.floor(random() * 20);
  return { original, namespace, uid, created, started, node, image, hash, sequence };
}

interface PodOwnership {
  name: string;
  labels: Record<string, string>;
  ownerReferences: Record<string, unknown>[];
}

/** A bare pod is owned by the SimulationRoot (as the driver makes it); others by a Deployment's ReplicaSet. */
function drawOwnership(ctx: PodContext, bare: boolean): PodOwnership {
  const { random, options } = ctx;
  const labels: Record<string, string> = { [SIMULATION_LABEL_KEY]: options.simName };
  if (bare) {
    const base = pick(random, BARE_PODS);
    const name = `${base}-${nameSuffix(random)}`;
    labels.app = base;
    const root = { apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_ROOT_KIND, name: options.rootName };
    return { name, labels, ownerReferences: [{ ...root, uid: options.rootUid }] };
  }
  const workload = pick(random, WORKLOADS);
  const templateHash = hex(random, 10).replace(/[0-9a-f]/g, (c) => SUFFIX_ALPHABET[parseInt(c, 16)] ?? c);
  const replicaSet = `${workload}-${templateHash}`;
  const name = `${replicaSet}-${nameSuffix(random)}`;
  labels.app = workload;
  labels["pod-template-hash"] = templateHash;
  const ownerReferences = [
    {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: replicaSet,
      uid: uuid(random),
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  return { name, labels, ownerReferences };
}

/** SimKube's annotations, and the completion time KWOK set on a pod that finished. */
function podAnnotations(facts: PodFacts, phase: Phase, now: Date): Record<string, string> {
  const annotations: Record<string, string> = {
    [ORIG_NAMESPACE_ANNOTATION_KEY]: facts.original,
    [POD_SPEC_STABLE_HASH_KEY]: facts.hash,
    [POD_SEQUENCE_NUMBER_KEY]: String(facts.sequence),
  };
  if (phase !== "Running") annotations[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY] = iso(now, -30);
  return annotations;
}

function podConditions(facts: PodFacts, terminated: boolean, disrupted: boolean, now: Date) {
  const { created, started } = facts;
  const ready = terminated ? "False" : "True";
  const conditions: Record<string, unknown>[] = [
    { type: "PodReadyToStartContainers", status: ready, lastTransitionTime: iso(now, started) },
    { type: "Initialized", status: "True", lastTransitionTime: iso(now, created + 1) },
    { type: "Ready", status: ready, lastTransitionTime: iso(now, started) },
    { type: "ContainersReady", status: ready, lastTransitionTime: iso(now, started) },
    { type: "PodScheduled", status: "True", lastTransitionTime: iso(now, created + 1) },
  ];
  if (disrupted) {
    conditions.push({
      type: "DisruptionTarget",
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
      lastTransitionTime: iso(now, -1),
    });
  }
  return conditions;
}

function containerState(phase: Phase, started: number, now: Date) {
  if (phase === "Running") return { running: { startedAt: iso(now, started) } };
  return {
    terminated: {
      exitCode: phase === "Succeeded" ? 0 : 1,
      reason: phase === "Succeeded" ? "Completed" : "Error",
      startedAt: iso(now, started),
      finishedAt: iso(now, -30),
    },
  };
}

/** Who wrote the pod: its creator (the driver or the ReplicaSet controller), then KWOK's status. */
function managedFields(bare: boolean, facts: PodFacts, now: Date) {
  return [
    {
      manager: bare ? "sk-driver" : "kube-controller-manager",
      operation: "Update",
      apiVersion: "v1",
      time: iso(now, facts.created),
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:labels": { ".": {}, "f:app": {} }, "f:ownerReferences": { ".": {} } },
        "f:spec": { "f:containers": {}, "f:nodeSelector": {}, "f:tolerations": {} },
      },
    },
    {
      manager: "kwok",
      operation: "Update",
      apiVersion: "v1",
      time: iso(now, facts.started),
      fieldsType: "FieldsV1",
      fieldsV1: { "f:status": { "f:conditions": {}, "f:containerStatuses": {}, "f:phase": {} } },
      subresource: "status",
    },
  ];
}

function podMetadata(ctx: PodContext, facts: PodFacts, owner: PodOwnership, phase: Phase, bare: boolean) {
  const { random, options } = ctx;
  if (phase !== "Running") owner.labels[KWOK_STAGE_COMPLETE_KEY] = "true";
  return {
    name: owner.name,
    namespace: facts.namespace,
    uid: facts.uid,
    resourceVersion: String(100000 + Math.floor(random() * 900000)),
    creationTimestamp: iso(options.now, facts.created),
    labels: owner.labels,
    annotations: podAnnotations(facts, phase, options.now),
    ownerReferences: owner.ownerReferences,
    managedFields: managedFields(bare, facts, options.now),
  };
}

/** One container as the API server stores it after defaulting (service account volume included). */
function mainContainer(image: string) {
  return {
    name: "main",
    image,
    ports: [{ containerPort: 8080, protocol: "TCP" }],
    env: [
      { name: "LOG_FORMAT", value: "json" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    ],
    resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { memory: "512Mi" } },
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
    volumeMounts: [
      {
        name: "kube-api-access",
        readOnly: true,
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
      },
    ],
  };
}

/** The tolerations: SimKube's for the virtual nodes, then the two the API server adds by default. */
function podTolerations() {
  const notReady = (key: string) => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: 300,
  });
  return [
    { key: VIRTUAL_NODE_TOLERATION_KEY, operator: "Exists", effect: "NoSchedule" },
    notReady("node.kubernetes.io/not-ready"),
    notReady("node.kubernetes.io/unreachable"),
  ];
}

function podSpec(facts: PodFacts, bare: boolean) {
  return {
    containers: [mainContainer(facts.image)],
    volumes: [
      {
        name: "kube-api-access",
        projected: {
          defaultMode: 420,
          sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }],
        },
      },
    ],
    restartPolicy: bare ? "Never" : "Always",
    terminationGracePeriodSeconds: GRACE_PERIOD_SECONDS,
    dnsPolicy: "ClusterFirst",
    serviceAccountName: "default",
    nodeName: facts.node,
    nodeSelector: { [VIRTUAL_NODE_SELECTOR_KEY]: VIRTUAL_NODE_SELECTOR_VALUE },
    tolerations: podTolerations(),
    schedulerName: "default-scheduler",
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
  };
}

function podStatus(ctx: PodContext, facts: PodFacts, phase: Phase, disrupted: boolean) {
  const { random, options } = ctx;
  const terminated = phase !== "Running";
  return {
    phase,
    conditions: podConditions(facts, terminated, disrupted, options.now),
    hostIP: `10.0.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}`,
    podIP: `10.244.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}`,
    startTime: iso(options.now, facts.created + 1),
    containerStatuses: [
      {
        name: "main",
        state: containerState(phase, facts.started, options.now),
        ready: !terminated,
        restartCount: 0,
        image: facts.image,
        imageID: "",
        started: !terminated,
      },
    ],
    qosClass: "Burstable",
  };
}

function buildPod(ctx: PodContext, bare: boolean, phase: Phase, disrupted: boolean): PodShape {
  // The calls below draw from ctx.random in this order; reordering them changes every generated pod.
  const facts = drawPodFacts(ctx);
  const owner = drawOwnership(ctx, bare);
  const metadata = podMetadata(ctx, facts, owner, phase, bare);
  const spec = podSpec(facts, bare);
  const status = podStatus(ctx, facts, phase, disrupted);
  const pod = { apiVersion: "v1", kind: "Pod", metadata, spec, status };
  return { pod, uid: facts.uid, name: owner.name, namespace: facts.namespace, phase, bare };
}

function withDeletion(
  pod: PodShape["pod"],
  deletionTimestamp: string,
  graceSeconds: number,
): PodShape["pod"] {
  const next = structuredClone(pod);
  next.metadata.deletionTimestamp = deletionTimestamp;
  next.metadata.deletionGracePeriodSeconds = graceSeconds;
  return next;
}

interface ReviewSpec {
  kind: ReviewKind;
  user: UserInfo;
  /** request.name: "" for DeleteCollection. */
  name: string;
  oldObject: PodShape["pod"];
  options: Record<string, unknown>;
}

function buildReview(random: () => number, shape: PodShape, spec: ReviewSpec): GeneratedReview {
  const uid = uuid(random);
  const review: AdmissionReview = {
    apiVersion: ADMISSION_API_VERSION,
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      name: spec.name,
      namespace: shape.namespace,
      operation: "DELETE",
      userInfo: spec.user,
      object: null,
      oldObject: spec.oldObject,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions", ...spec.options },
    },
  };
  // requestKind/requestResource are part of every real review; the AdmissionRequest type does not list them.
  Object.assign(review.request as object, {
    requestKind: { group: "", version: "v1", kind: "Pod" },
    requestResource: { group: "", version: "v1", resource: "pods" },
  });
  return { kind: spec.kind, uid, podUid: shape.uid, review };
}

function serviceAccount(username: string, random: () => number): UserInfo {
  return { username, uid: uuid(random), groups: SERVICE_ACCOUNT_GROUPS };
}

type Initiator = "namespace-controller" | "garbage-collector" | "interruption";

/** Who asks for the deletion first, and how: its user, request.name, DeleteOptions and review kind. */
function initiatorRequest(random: () => number, initiator: Initiator, shape: PodShape) {
  if (initiator === "namespace-controller") {
    return {
      user: serviceAccount(NAMESPACE_CONTROLLER_USER, random),
      name: "", // DeleteCollection: the per-pod reviews carry the collection's empty name
      deleteOptions: { propagationPolicy: "Background" } as Record<string, unknown>,
      kind: "namespace-controller" as ReviewKind,
    };
  }
  if (initiator === "garbage-collector") {
    return {
      user: serviceAccount(GARBAGE_COLLECTOR_USER, random),
      name: shape.name,
      deleteOptions: { propagationPolicy: "Background", preconditions: { uid: shape.uid } },
      kind: "garbage-collector" as ReviewKind,
    };
  }
  const evicted = (shape.pod.status.conditions as { type: string }[]).some(
    (c) => c.type === "DisruptionTarget",
  );
  const user: UserInfo = evicted
    ? serviceAccount(NODE_CONTROLLER_USER, random)
    : { username: ADMIN_USER, groups: ["kubeadm:cluster-admins", "system:authenticated"] };
  return { user, name: shape.name, deleteOptions: {}, kind: "interruption" as ReviewKind };
}

/** KWOK's final DELETE: shortening update (sees the pod's grace), then the storage delete (sees grace 0). */
function kwokFinalReviews(ctx: PodContext, shape: PodShape): GeneratedReview[] {
  const { random, options } = ctx;
  const deletionTimestamp = iso(options.now, GRACE_PERIOD_SECONDS);
  const kwok = serviceAccount(KWOK_USER, random);
  return [GRACE_PERIOD_SECONDS, 0].map((grace) =>
    buildReview(random, shape, {
      kind: "kwok-final",
      user: kwok,
      name: shape.name,
      oldObject: withDeletion(shape.pod, deletionTimestamp, grace),
      options: { gracePeriodSeconds: 0 },
    }),
  );
}

/** Every review one pod's deletion produces, in order; the first one is the initiator's. */
function podDeletion(
  ctx: PodContext,
  initiator: Initiator,
  shape: PodShape,
): { first: GeneratedReview[]; later: GeneratedReview[] } {
  const { random, options } = ctx;
  const { user, name, deleteOptions, kind } = initiatorRequest(random, initiator, shape);
  const first = [
    buildReview(random, shape, { kind, user, name, oldObject: shape.pod, options: deleteOptions }),
  ];
  if (shape.phase === "Running") return { first, later: kwokFinalReviews(ctx, shape) };
  // Terminal pods get grace 0 at once: the same request calls the webhook again for the storage delete.
  const later = [
    buildReview(random, shape, {
      kind: "finished-final",
      user,
      name,
      oldObject: withDeletion(shape.pod, iso(options.now, 0), 0),
      options: deleteOptions,
    }),
  ];
  return { first, later };
}

function emptyCounts(): Record<ReviewKind, number> {
  return Object.fromEntries(REVIEW_KINDS.map((kind) => [kind, 0])) as Record<ReviewKind, number>;
}

export function validateTeardownOptions(options: TeardownOptions): string | undefined {
  if (!Number.isInteger(options.count) || options.count < 1) return "count must be a positive whole number";
  const fractions: [string, number | undefined][] = [
    ["interruptions", options.interruptions],
    ["bareShare", options.bareShare],
    ["finishedShare", options.finishedShare],
  ];
  for (const [name, value] of fractions) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0 && value <= 1)) {
      return `${name} must be a fraction from 0 to 1, got ${value}`;
    }
  }
  if (!options.simName || !options.rootName || !options.rootUid)
    return "simName, rootName and rootUid are required";
  if (Number.isNaN(options.now.getTime())) return "now must be a valid date";
  return undefined;
}

/**
 * A teardown burst of `count` DELETE reviews. With interruptions 0 (the default) a correct reschedule-delete
 * creates no clone; otherwise expectedClones says how many it should create.
 */
export function buildTeardownReviews(options: TeardownOptions): TeardownReviews {
  const invalid = validateTeardownOptions(options);
  if (invalid) throw new RangeError(invalid);
  const random = seededRandom(options.seed ?? 1);
  const ctx: PodContext = {
    random,
    options,
    namespaces: options.namespaces && options.namespaces.length > 0 ? options.namespaces : DEFAULT_NAMESPACES,
    prefix: options.virtualNsPrefix ?? "virtual",
  };
  const interruptions = options.interruptions ?? 0;
  const bareShare = options.bareShare ?? 0.4;
  const finishedShare = options.finishedShare ?? 0.3;

  const reviews: GeneratedReview[] = [];
  const byKind = emptyCounts();
  let expectedClones = 0;
  let pods = 0;
  const add = (review: GeneratedReview): boolean => {
    if (reviews.length >= options.count) return false;
    reviews.push(review);
    byKind[review.kind] += 1;
    return true;
  };

  while (reviews.length < options.count) {
    const later: GeneratedReview[] = [];
    for (let i = 0; i < WAVE && reviews.length < options.count; i++) {
      const interrupted = random() < interruptions;
      let shape: PodShape;
      let initiator: Initiator;
      if (interrupted) {
        // A Running bare pod taken away while the simulation runs: half by a user, half by taint eviction.
        shape = buildPod(ctx, true, "Running", random() < 0.5);
        initiator = "interruption";
      } else {
        const finished = random() < finishedShare;
        const phase: Phase = finished ? (random() < 0.8 ? "Succeeded" : "Failed") : "Running";
        shape = buildPod(ctx, random() < bareShare, phase, false);
        initiator = random() < 0.5 ? "namespace-controller" : "garbage-collector";
      }
      const deletion = podDeletion(ctx, initiator, shape);
      pods += 1;
      for (const review of deletion.first) {
        if (add(review) && review.kind === "interruption") expectedClones += 1;
      }
      later.push(...deletion.later);
    }
    for (const review of later) add(review);
  }
  return { reviews, expectedClones, byKind, pods };
}
