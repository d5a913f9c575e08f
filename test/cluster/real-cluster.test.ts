// The functions as webhooks of a real Kubernetes control plane (functions/local-cluster/): one cluster for
// this file, driven with @kubernetes/client-node. Mutation of every kind of simulation pod and KWOK's
// completion; every deletion path (its clones made under the pod-create policy `cluster up` installs) with
// the DELETE reviews reschedule-delete received and the clones that exist afterwards; the API double held to
// the same reviews; and the simulation's teardown. Skipped with one loud line when Go is missing (fails
// under CI=true).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after } from "node:test";
import { deletionCases } from "../support/cluster/deletion-scenarios.js";
import { comparableRows, DOUBLE_PATHS, measureOnDouble } from "../support/cluster/double-scenarios.js";
import { cloneDelayCase, forgedReviewCase } from "../support/cluster/forged-review.js";
import {
  COMPLETES_AFTER_S,
  cronJobCase,
  FINISHING_POD,
  mutationCases,
} from "../support/cluster/mutation-scenarios.js";
import { podReadCases } from "../support/cluster/pod-read-scenarios.js";
import { describeRow } from "../support/cluster/reviews.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { teardownCase } from "../support/cluster/teardown-scenario.js";
import { lazyWorldRef } from "../support/cluster/world.js";
import { assertKnownResourcesMatch } from "../support/known-resources.js";
import { buildTraceBytes, finished, ownersTraceSpec } from "../support/trace-builder.js";

const traceDir = mkdtempSync(path.join(tmpdir(), "simkube-fn-cluster-trace-"));
const tracePath = path.join(traceDir, "finishing.sktrace");
writeFileSync(
  tracePath,
  buildTraceBytes(
    ownersTraceSpec([
      { gvk: "v1.Pod", nsName: `default/${FINISHING_POD}`, lifecycles: [finished(0, COMPLETES_AFTER_S)] },
    ]),
  ),
);

const suite = await openClusterSuite({ reschedule: true, recordReviews: true, tracePath });
const ref = lazyWorldRef(suite);

const doubleComparison: ClusterCase = {
  name: "the API double sends the DELETE reviews the real API server sent, on every path it models",
  run: async () => {
    const measured = ref.get().measured;
    const double = await measureOnDouble();
    for (const name of DOUBLE_PATHS) {
      const real = measured.find((m) => m.path === name);
      assert.ok(real, `the real cluster measured "${name}"`);
      const onDouble = double.get(name) ?? [];
      // The whole of both sides in the message: a difference here is usually a race worth reading in full.
      const both = `${name}\n  double: ${onDouble.map(describeRow).join(" | ")}\n  real:   ${real.rows.map(describeRow).join(" | ")}`;
      assert.deepEqual(comparableRows(onDouble), comparableRows(real.rows), both);
    }
  },
};

const knownResources: ClusterCase = {
  name: "the kinds the functions address without discovery are where the real API server's discovery puts them",
  run: async () => {
    const { core, custom } = ref.get().admin;
    await assertKnownResourcesMatch((apiVersion) => {
      const slash = apiVersion.indexOf("/");
      return slash < 0
        ? core.getAPIResources()
        : custom.getAPIResources({ group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) });
    });
  },
};

registerClusterCases("test/cluster/real-cluster.test.ts", suite, [
  knownResources,
  // The default pod reads: what the narrow mode (production-security.test.ts) takes away.
  ...podReadCases(ref, "cluster"),
  ...mutationCases(ref),
  ...deletionCases(ref),
  forgedReviewCase(ref),
  cloneDelayCase(ref),
  cronJobCase(ref),
  doubleComparison,
  teardownCase(ref),
]);

after(async () => {
  for (const m of ref.made()?.measured ?? []) {
    process.stdout.write(
      `# ${m.path}: ${m.clones} clone(s), ${m.ms} ms; pods/status updates by ${m.statusUpdates.join(", ") || "nobody"}\n`,
    );
    for (const row of m.rows) process.stdout.write(`#     ${describeRow(row)}\n`);
  }
  if ("cluster" in suite) await suite.cluster.stop();
  rmSync(traceDir, { recursive: true, force: true });
});
