// The answers of the bench's reference servers, without serving them (bare-server.ts and floor-server.ts
// serve them; instruction-loop.ts counts them in process).
//
// The bare answer: admit the review, echoing its uid. What any admission webhook in Node does at the least.
//
// The CREATE floor: what every CREATE review needs whoever serves it, with SimKube's answer: the pod's stable
// hash, the next sequence number of that hash (a counter in memory, like SEQUENCE_STORE=memory), and the same
// JSON Patch, base64 and answer text mutate-create writes. It uses the project's own code for each (pod-hash,
// mutationPatch, withPatch, reviewJson). What it leaves out is everything that makes the answer right for a
// real cluster: the owner chain, the Simulation, the triage of who created the pod, logging, metrics,
// shutdown. So the bench can say how far bare is from the least a faithful answer costs, and how far
// mutate-create is from that least.

import { mutationPatch } from "../../functions/mutate-create/plan.js";
import { type AdmissionReview, reviewJson, withPatch } from "../../shared/admission/review.js";
import { podSpecHash } from "../../shared/hash/pod-hash.js";
import type { Pod } from "../../shared/kube/pod.js";
import { BENCH_SIM_NAME, benchSimulation } from "./bench-world.js";

/** The answer's JSON text for a parsed body. */
export type Answer = (body: unknown) => string;

/** The uid a review's answer must echo ("" when the body has none). */
export function reviewUid(body: unknown): string {
  const uid = (body as { request?: { uid?: unknown } } | null)?.request?.uid;
  return typeof uid === "string" ? uid : "";
}

/** The bare server's answer: allowed, nothing else. */
export const bareAnswer: Answer = (body) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: reviewUid(body), allowed: true },
  });

/**
 * The floor's answer to a CREATE review: the text mutate-create sends for it, given the bench's Simulation
 * (test/unit/bench-floor.test.ts holds the two to the same text). Sequence numbers count per answer function.
 */
export function createFloorAnswer(): Answer {
  const review = createFloorReview();
  return (body) => reviewJson(review(body));
}

/** The floor's answer as the review object a ReviewHandler returns (adapter-floor-server.ts serves it). */
export function createFloorReview(): (body: unknown) => AdmissionReview {
  const lifecycleParams = benchSimulation().spec?.lifecycleParams ?? {};
  const sequences = new Map<string, number>();
  return (body) => {
    const pod = (body as { request?: { object?: Pod | null } } | null)?.request?.object;
    if (typeof pod !== "object" || pod === null) throw new Error("a CREATE review carries the pod");
    const hash = podSpecHash(pod);
    const sequence = sequences.get(hash) ?? 0;
    sequences.set(hash, sequence + 1);
    const ops = mutationPatch({
      operation: "CREATE",
      pod,
      simName: BENCH_SIM_NAME,
      hash,
      sequence,
      lifecycleParams,
    });
    return withPatch({ uid: reviewUid(body) }, ops);
  };
}
