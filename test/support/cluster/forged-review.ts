// A DELETE review that no deletion backs, posted straight to reschedule-delete as anyone who can reach its
// URL could: it names a live, Running bare pod of the simulation and a made-up user. The function must answer
// (allowed, no patch) and create nothing, however often the review is repeated. And the delay a clone now
// waits for its deletion to show, measured from the DELETE call to the clone existing.

import assert from "node:assert/strict";
import type { V1Pod } from "@kubernetes/client-node";
import type { AdmissionReview } from "../../../shared/admission/review.js";
import { DELETION_NAMESPACE } from "./deletion-scenarios.js";
import { clonesOf, eventually, readPod, runningBarePod, waitPodGone } from "./kube.js";
import { postReview } from "./post-review.js";
import type { ClusterCase } from "./suite.js";
import type { WorldRef } from "./world.js";

/** A DELETE review of `pod` by a made-up user, with no deletion behind it (uid forged-<n>). */
export function forgedDelete(pod: V1Pod, n: number): AdmissionReview {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `forged-${n}`,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      name: pod.metadata?.name ?? "",
      namespace: pod.metadata?.namespace ?? "",
      operation: "DELETE",
      userInfo: { username: "mallory" },
      oldObject: pod as unknown as Record<string, unknown>,
      dryRun: false,
    },
  };
}

const decisions = (stats: Record<string, unknown>) =>
  (stats.decisions ?? {}) as Record<string, number | undefined>;

export function forgedReviewCase(ref: WorldRef): ClusterCase {
  return {
    name: "deletions: a forged DELETE review of a live Running pod, repeated, makes no clone (no-deletion-seen)",
    run: async () => {
      const w = ref.get();
      const core = w.admin.core;
      const fn = w.cluster.functions["reschedule-delete"];
      const pod = await runningBarePod(w.cluster, core, DELETION_NAMESPACE, "forged-target");
      const before = decisions(fn.stats())["no-deletion-seen"] ?? 0;
      // As the strongest forger: one who holds the path secret and the API server's client certificate.
      const post = (n: number) => postReview(w.cluster, "reschedule-delete", forgedDelete(pod, n));
      // Three at once share one wait; a fourth after that wait ended starts another.
      const answers = await Promise.all([1, 2, 3].map(post));
      const seen = async (n: number) => (decisions(fn.stats())["no-deletion-seen"] ?? 0) >= before + n;
      await eventually("the first wait ends with no-deletion-seen", () => seen(1), 30_000);
      answers.push(await post(4));
      await eventually("the second wait ends with no-deletion-seen", () => seen(2), 30_000);
      for (const answer of answers) {
        assert.equal(answer.response?.allowed, true);
        assert.equal(answer.response?.patch, undefined);
      }
      assert.equal((await clonesOf(core, DELETION_NAMESPACE, "forged-target")).length, 0, "no clone");
      assert.equal((await readPod(core, DELETION_NAMESPACE, "forged-target"))?.status?.phase, "Running");
      assert.equal(fn.stats().pendingClones, 0);
      await w.driver.core.deleteNamespacedPod({
        name: "forged-target",
        namespace: DELETION_NAMESPACE,
        gracePeriodSeconds: 0,
      });
      await waitPodGone(core, DELETION_NAMESPACE, "forged-target", 30_000);
    },
  };
}

/**
 * Milliseconds from the start of a user's graceful DELETE to its clone being readable, for `rounds` pods, and
 * to the DELETE's answer (before the clone waited for its deletion, it existed by then: it was made inside
 * the admission call).
 */
export async function cloneDelays(
  ref: WorldRef,
  rounds: number,
): Promise<{ clone: number[]; answered: number[] }> {
  const w = ref.get();
  const core = w.admin.core;
  const delays: number[] = [];
  const answered: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const name = `delay-${i}`;
    await runningBarePod(w.cluster, core, DELETION_NAMESPACE, name);
    const t0 = performance.now();
    const deleted = core
      .deleteNamespacedPod({ name, namespace: DELETION_NAMESPACE })
      .then(() => answered.push(performance.now() - t0));
    const clone = `${name}-clone-1`;
    while (!(await readPod(core, DELETION_NAMESPACE, clone))) {
      assert.ok(performance.now() - t0 < 30_000, `no clone of ${name} within 30 s`);
    }
    delays.push(performance.now() - t0);
    await deleted;
    await waitPodGone(core, DELETION_NAMESPACE, name, 30_000);
    await w.driver.core.deleteNamespacedPod({
      name: clone,
      namespace: DELETION_NAMESPACE,
      gracePeriodSeconds: 0,
    });
    await waitPodGone(core, DELETION_NAMESPACE, clone, 30_000);
  }
  return { clone: delays, answered };
}

export function cloneDelayCase(ref: WorldRef, rounds = 10): ClusterCase {
  return {
    name: `deletions: the delay from a user's DELETE to its clone, ${rounds} rounds (printed)`,
    timeoutMs: 300_000,
    run: async () => {
      const { clone, answered } = await cloneDelays(ref, rounds);
      const summary = (ms: number[]) => {
        const s = [...ms].sort((a, b) => a - b);
        const at = (q: number) => (s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0).toFixed(0);
        return `min ${at(0)} ms, median ${at(0.5)} ms, max ${at(1)} ms`;
      };
      process.stdout.write(`# ${rounds} graceful deletes: DELETE to clone readable ${summary(clone)}\n`);
      process.stdout.write(`# ${rounds} graceful deletes: DELETE to its answer ${summary(answered)}\n`);
      assert.equal(clone.length, rounds);
      assert.equal(answered.length, rounds);
    },
  };
}
