import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  awaitDeletion,
  deletionShownBy,
  pollDelays,
} from "../../functions/reschedule-delete/deletion-wait.js";
import { createPendingClones } from "../../functions/reschedule-delete/pending-clones.js";
import { KubeError } from "../../shared/kube/api.js";
import { buildPod } from "../support/builders.js";

const instant = async () => {};

/** A pod that never shows a deletion, counting its reads. */
function unchangingPod() {
  const counter = { reads: 0 };
  const read = async () => {
    counter.reads++;
    return buildPod({ uid: "u" });
  };
  return { counter, read };
}

describe("waiting for the deletion a review announces", () => {
  it("polls soon, then backs off to 1 s, inside the bound", () => {
    const delays = pollDelays(10_000, 25, 1_000);
    assert.deepEqual(delays.slice(0, 7), [25, 50, 100, 200, 400, 800, 1000]);
    assert.ok(delays.reduce((a, b) => a + b, 0) <= 10_000);
    assert.equal(delays.length, 14, "fourteen reads for a review nothing backs");
    assert.deepEqual(pollDelays(0, 25, 1_000), []);
  });

  it("takes a deletionTimestamp on the same uid, or the pod gone, as the deletion", () => {
    const live = buildPod({ uid: "u" });
    assert.equal(deletionShownBy(live, "u").shown, "not-yet");
    assert.equal(
      deletionShownBy(buildPod({ uid: "u", deletionTimestamp: "2024-01-01T00:00:30Z" }), "u").shown,
      "deletion-timestamp",
    );
    assert.equal(deletionShownBy(undefined, "u").shown, "gone", "404");
    assert.equal(
      deletionShownBy(buildPod({ uid: "another" }), "u").shown,
      "gone",
      "its name taken by another pod",
    );
  });

  it("ends with no-deletion-seen when the pod stays as it was", async () => {
    const pod = unchangingPod();
    const outcome = await awaitDeletion(pod.read, "u", { sleep: instant });
    assert.deepEqual(outcome, { shown: "no-deletion-seen", reads: 14 });
    assert.equal(pod.counter.reads, 14);
  });

  it("reads past transient errors, takes a 404 as gone, and throws anything else", async () => {
    const errors = [new KubeError(503, "ServiceUnavailable", "x"), new KubeError(404, "NotFound", "gone")];
    const outcome = await awaitDeletion(
      async () => {
        throw errors.shift();
      },
      "u",
      { sleep: instant },
    );
    assert.equal(outcome.shown, "gone");
    await assert.rejects(
      awaitDeletion(
        async () => {
          throw new KubeError(403, "Forbidden", "RBAC");
        },
        "u",
        { sleep: instant },
      ),
      /RBAC/,
    );
  });

  it("stops when told (another review made the clone)", async () => {
    const pod = unchangingPod();
    const outcome = await awaitDeletion(pod.read, "u", {
      sleep: instant,
      stop: () => pod.counter.reads >= 2,
    });
    assert.deepEqual(outcome, { shown: "no-deletion-seen", reads: 2 });
  });
});

describe("the clones waiting for their deletion", () => {
  it("runs one wait per uid, at most `limit`, and settles when they end", async () => {
    const pending = createPendingClones(2);
    const releases: Array<() => void> = [];
    const work = () => new Promise<void>((resolve) => releases.push(resolve));
    assert.equal(pending.start("a", work), "started");
    assert.equal(pending.start("a", work), "joined");
    assert.equal(pending.start("b", work), "started");
    assert.equal(pending.start("c", work), "full");
    assert.equal(pending.size, 2);
    assert.equal(await pending.settle(20), false, "still waiting at the bound");
    for (const release of releases) release();
    assert.equal(await pending.settle(1_000), true);
    assert.equal(pending.size, 0);
    assert.equal(pending.start("c", work), "started", "room again");
    await new Promise((resolve) => setImmediate(resolve)); // the work starts after start() returns
    releases.at(-1)?.();
    assert.equal(await pending.settle(1_000), true);
  });

  it("swallows a failing wait (its work logs it) and frees its slot", async () => {
    const pending = createPendingClones(1);
    pending.start("a", async () => {
      throw new Error("boom");
    });
    assert.equal(await pending.settle(1_000), true);
    assert.equal(pending.has("a"), false);
  });
});
