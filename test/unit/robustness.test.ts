// Bad input never crashes a function: thousands of malformed and half-formed reviews, generated from a
// seed, go to both handlers. Every answer must be an AdmissionReview; mutate-create may deny, but
// reschedule-delete must allow every DELETE, and never with a patch (a body with no uid to answer is the
// one exception: it is refused with UnanswerableReviewError, which the adapters send as HTTP 400).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../../functions/cli/loadtest/seeded-random.js";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import { createRescheduleDeleteHandler } from "../../functions/reschedule-delete/handler.js";
import { type AdmissionReview, UnanswerableReviewError } from "../../shared/admission/review.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import { buildPod, buildSimulation, buildSimulationRoot, TEST_SIM_NAME } from "../support/builders.js";
import { silentLog } from "../support/logs.js";
import { createMemoryKube } from "../support/memory-kube.js";

const quiet = silentLog();

const JUNK: unknown[] = [
  null,
  undefined,
  0,
  -1,
  1.5,
  "",
  "x",
  true,
  [],
  [1, "a"],
  {},
  { a: 1 },
  "2024-13-45T99:99:99Z",
];

/** Replaces one randomly chosen path of `value` with junk (or deletes it). */
function mutate(value: unknown, random: () => number, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth > 6 || random() < 0.25) {
    return JUNK[Math.floor(random() * JUNK.length)];
  }
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
  const keys = Object.keys(copy);
  if (keys.length === 0) return JUNK[Math.floor(random() * JUNK.length)];
  const key = keys[Math.floor(random() * keys.length)] as string;
  if (!Array.isArray(copy) && random() < 0.2) delete copy[key];
  else
    (copy as Record<string, unknown>)[key] = mutate(
      (copy as Record<string, unknown>)[key],
      random,
      depth + 1,
    );
  return copy;
}

function world() {
  const kube = createMemoryKube({ pause: async () => {} });
  kube.seed(buildSimulation({ rescheduleInterruptedBarePods: true }));
  kube.seed(buildSimulationRoot());
  const owners = createOwnerResolver(kube, quiet);
  const simulation = createSimulationSource(kube, TEST_SIM_NAME);
  return {
    mutate: createMutateCreateHandler({
      simName: TEST_SIM_NAME,
      log: quiet,
      owners,
      simulation,
      sequences: createMemorySequenceStore(),
    }),
    reschedule: createRescheduleDeleteHandler({
      kube,
      simName: TEST_SIM_NAME,
      driverUsers: [],
      log: quiet,
      simulation,
    }),
  };
}

function review(operation: string, pod: unknown): Record<string, unknown> {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "fuzz",
      kind: { group: "", version: "v1", kind: "Pod" },
      operation,
      namespace: "test-namespace",
      userInfo: { username: "someone" },
      object: operation === "DELETE" ? null : pod,
      oldObject: operation === "CREATE" ? null : pod,
    },
  };
}

function hasUsableUid(body: unknown): boolean {
  const uid = (body as { request?: { uid?: unknown } } | null)?.request?.uid;
  return typeof uid === "string" && uid !== "";
}

function assertIsReview(answer: AdmissionReview): void {
  assert.equal(answer.apiVersion, "admission.k8s.io/v1");
  assert.equal(answer.kind, "AdmissionReview");
  assert.equal(typeof answer.response?.allowed, "boolean");
  assert.equal(typeof answer.response?.uid, "string");
  if (answer.response?.allowed === false) assert.ok((answer.response.status?.message ?? "").length > 0);
}

describe("robustness against malformed reviews", () => {
  it("answers 3,000 generated reviews without a throw; DELETEs are always allowed with no patch", async () => {
    const random = seededRandom(20261202);
    const { mutate: handleCreate, reschedule } = world();
    const base = buildPod();
    for (let i = 0; i < 3000; i++) {
      const operation = (["CREATE", "UPDATE", "DELETE"] as const)[i % 3] as string;
      // Half the time break the pod, half the time break the review around it.
      const body =
        random() < 0.5 ? review(operation, mutate(base, random)) : mutate(review(operation, base), random);
      const handler = operation === "DELETE" ? reschedule : handleCreate;
      const outcome: unknown = await handler(body).catch((err: unknown) => err);
      if (outcome instanceof UnanswerableReviewError && operation === "DELETE") {
        // Never a denial of a DELETE: without a uid to answer, the adapter sends HTTP 400.
        assert.ok(!hasUsableUid(body), `review ${i} has a uid but was not answered`);
        continue;
      }
      const answer = outcome as AdmissionReview;
      assertIsReview(answer);
      if (
        operation === "DELETE" &&
        (body as { request?: { operation?: unknown } })?.request?.operation === "DELETE"
      ) {
        assert.equal(answer.response?.patch, undefined, `review ${i} got a patch on DELETE`);
      }
    }
  });
});
