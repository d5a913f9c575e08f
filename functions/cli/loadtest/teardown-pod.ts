// One generated pod: its randomly drawn facts, who owns it, its metadata, and the copy of it a deletion sees.

import {
  KWOK_STAGE_COMPLETE_KEY,
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  ORIG_NAMESPACE_ANNOTATION_KEY,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMKUBE_API_VERSION,
  SIMULATION_LABEL_KEY,
  SIMULATION_ROOT_KIND,
} from "../../../shared/base/index.js";
import { hex, iso, nameSuffix, pick, SUFFIX_ALPHABET, uuid } from "./generated-values.js";
import type { Phase, PodContext, PodFacts, PodShape } from "./review-types.js";
import { podSpec, podStatus } from "./teardown-pod-spec.js";

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

export function buildPod(ctx: PodContext, bare: boolean, phase: Phase, disrupted: boolean): PodShape {
  // The calls below draw from ctx.random in this order; reordering them changes every generated pod.
  const facts = drawPodFacts(ctx);
  const owner = drawOwnership(ctx, bare);
  const metadata = podMetadata(ctx, facts, owner, phase, bare);
  const spec = podSpec(facts, bare);
  const status = podStatus(ctx, facts, phase, disrupted);
  const pod = { apiVersion: "v1", kind: "Pod", metadata, spec, status };
  return { pod, uid: facts.uid, name: owner.name, namespace: facts.namespace, phase, bare };
}

export function withDeletion(
  pod: PodShape["pod"],
  deletionTimestamp: string,
  graceSeconds: number,
): PodShape["pod"] {
  const next = structuredClone(pod);
  next.metadata.deletionTimestamp = deletionTimestamp;
  next.metadata.deletionGracePeriodSeconds = graceSeconds;
  return next;
}
