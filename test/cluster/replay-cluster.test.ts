// `replay --cluster local` end to end on its own local cluster: SimKube's shortest example trace (bare-pods,
// 162 s of trace) replayed at speed 4 as SimKube's driver would, with the three interruptions. Every lifecycle
// the trace records must be reproduced, with no error and no clone during teardown. Skipped with a message when
// SimKube's traces are absent; without Go it follows the real-cluster suite (skipped, or failing with CI=true).

import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startReplayCluster } from "../../functions/cli/replay/cluster-connection.js";
import { clusterCounts, clusterReport } from "../../functions/cli/replay/cluster-report.js";
import { runClusterReplay } from "../../functions/cli/replay/cluster-runner.js";
import { MissingControlPlaneError } from "../../functions/local-cluster/binaries.js";
import { loadTrace } from "../../shared/trace/reader.js";
import { findSharedTrace } from "../support/trace-builder.js";

const TRACE = "bare-pods.sktrace";
const SPEED = 4;
const tracePath = findSharedTrace(TRACE);
const here = path.dirname(fileURLToPath(import.meta.url));
const name = `replay --cluster local: SimKube's ${TRACE} at speed ${SPEED}: every lifecycle matched, 0 errors, 0 teardown clones`;

if (!tracePath) {
  process.stderr.write(
    `\n*** SKIPPED (test/cluster/replay-cluster.test.ts): SimKube's ${TRACE} not found beside the repo ***\n\n`,
  );
  test(name, { skip: `SimKube's example traces are absent (${TRACE})` }, () => {});
} else {
  test(name, { timeout: 600_000 }, async (t) => {
    const binDir = process.env.SIMKUBE_FN_CONTROLPLANE_BIN?.trim();
    let cluster: Awaited<ReturnType<typeof startReplayCluster>>;
    try {
      cluster = await startReplayCluster({
        tracePath,
        searchFrom: [process.cwd(), here],
        ...(binDir ? { binDir } : {}),
      });
    } catch (err) {
      if (err instanceof MissingControlPlaneError && process.env.CI !== "true") {
        process.stderr.write(`\n*** SKIPPED (test/cluster/replay-cluster.test.ts): ${err.message} ***\n\n`);
        t.skip(err.message);
        return;
      }
      throw err;
    }
    try {
      const notes: string[] = [];
      const result = await runClusterReplay(cluster, {
        trace: await loadTrace(tracePath),
        speed: SPEED,
        interruptions: true,
        progress: () => {},
        note: (line) => {
          notes.push(line);
          t.diagnostic(line);
        },
      });
      // The steps without a progress line of their own say when they start (and every 5 s after).
      for (const step of ["interruption: eviction...", "teardown: the SimulationRoot and its namespaces..."])
        assert.ok(notes.includes(step), `a note "${step}"`);
      for (const line of clusterReport(result, SPEED)) t.diagnostic(line);
      const c = clusterCounts(result);
      assert.equal(c.lifecyclesExpected, 4, "the trace records 3 Finished and 1 Running lifecycle");
      assert.equal(c.lifecyclesMatched, c.lifecyclesExpected);
      assert.equal(c.errors, 0, result.errors.join("; "));
      assert.equal(c.teardownClones, 0);
      assert.equal(c.sequenceGaps, 0, "every number the store handed out is on a pod, none skipped");
      assert.equal(c.sequenceDuplicates, 0);
      assert.equal(c.podsMutated, c.podsCreated, "mutate-create pinned every pod");
      assert.ok(c.interruptions >= 2, "at least two interruptions found a running bare pod");
      assert.ok(
        result.interruptions.every((i) => i.pod === undefined || i.clone),
        "every interrupted pod was cloned",
      );
      // The interruptions above were reviewed; the teardown's deletes are all filtered by match conditions.
      assert.equal(c.teardownReviews, 0, "teardown sent no DELETE review");
    } finally {
      await cluster.stop();
    }
  });
}
