// The teardown generator's shapes: what a caller asks for and gets back (public), and the pod being deleted
// with the context its parts are drawn from (shared by the generator's files).

import type { AdmissionReview } from "../../../shared/admission/index.js";

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

export type Phase = "Running" | "Succeeded" | "Failed";

export interface PodShape {
  pod: Record<string, unknown> & { metadata: Record<string, unknown>; status: Record<string, unknown> };
  uid: string;
  name: string;
  namespace: string;
  phase: Phase;
  bare: boolean;
}

export interface PodContext {
  random: () => number;
  options: TeardownOptions;
  namespaces: readonly string[];
  prefix: string;
}

/** The pod's randomly drawn facts. The draw order is fixed: a seed must always make the same pods. */
export interface PodFacts {
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
