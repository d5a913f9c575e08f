// The DELETE reviews one pod's deletion produces: the initiator's (namespace controller, garbage collector or
// an interruption), then KWOK's final grace-0 DELETE or the finished pod's storage delete.

import {
  ADMISSION_API_VERSION,
  type AdmissionReview,
  type UserInfo,
} from "../../../shared/admission/index.js";
import {
  ADMIN_USER,
  GARBAGE_COLLECTOR_USER,
  KWOK_USER,
  NAMESPACE_CONTROLLER_USER,
  NODE_CONTROLLER_USER,
} from "../../../shared/base/index.js";
import { iso, uuid } from "./generated-values.js";
import type { GeneratedReview, PodContext, PodShape, ReviewKind } from "./review-types.js";
import { withDeletion } from "./teardown-pod.js";
import { GRACE_PERIOD_SECONDS } from "./teardown-pod-spec.js";

const SERVICE_ACCOUNT_GROUPS = [
  "system:serviceaccounts",
  "system:serviceaccounts:kube-system",
  "system:authenticated",
];

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

export type Initiator = "namespace-controller" | "garbage-collector" | "interruption";

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
export function podDeletion(
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
