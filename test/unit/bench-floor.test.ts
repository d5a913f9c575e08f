// The bench's CREATE floor is only a floor if it does the work mutate-create does for the same review: the
// same hash, sequence numbers and patch, down to the answer's text. So both answer the bench's reviews here.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import { createMutateStats } from "../../functions/mutate-create/stats.js";
import { decodePatch, reviewJson } from "../../shared/admission/review.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import { createFloorAnswer } from "../bench/answers.js";
import {
  BENCH_ROOT_NAME,
  BENCH_ROOT_UID,
  BENCH_SIM_NAME,
  BENCH_VIRTUAL_NAMESPACES,
  benchSimulation,
  benchSimulationRoot,
} from "../bench/bench-world.js";
import { buildCreateRequests } from "../bench/create-reviews.js";
import { silentLog } from "../support/logs.js";
import { objectsKube } from "../support/objects-kube.js";

describe("the bench's CREATE floor", () => {
  it("answers the bench's CREATE reviews with mutate-create's exact text", async () => {
    const kube = objectsKube([benchSimulation(), benchSimulationRoot()]);
    const log = silentLog();
    const handle = createMutateCreateHandler({
      simName: BENCH_SIM_NAME,
      log,
      owners: createOwnerResolver(kube, log),
      simulation: createSimulationSource(kube, BENCH_SIM_NAME),
      sequences: createMemorySequenceStore(),
      stats: createMutateStats(),
    });
    const floor = createFloorAnswer();
    const requests = buildCreateRequests({
      count: 200,
      rootName: BENCH_ROOT_NAME,
      rootUid: BENCH_ROOT_UID,
      namespaces: BENCH_VIRTUAL_NAMESPACES,
      seed: 7,
    });
    const sequences = new Set<string>();
    for (const request of requests) {
      const body = JSON.parse(request.body.toString("utf8"));
      const fromFloor = floor(structuredClone(body));
      const review = await handle(body);
      assert.equal(fromFloor, reviewJson(review), `review ${request.uid}`);
      // Not a vacuous match: every answer is a patch, with a sequence number that counts up per hash.
      const annotations = decodePatch(review.response ?? { uid: "", allowed: false }).find(
        (op) => op.path === "/metadata/annotations",
      );
      assert.ok(annotations && "value" in annotations, `review ${request.uid} has no annotations op`);
      const value = annotations.value as Record<string, string>;
      sequences.add(
        `${value["static.simkube.io/pod-spec-stable-hash"]}#${value["static.simkube.io/pod-sequence-number"]}`,
      );
    }
    assert.equal(sequences.size, requests.length, "every review got its own (hash, sequence) pair");
  });
});
