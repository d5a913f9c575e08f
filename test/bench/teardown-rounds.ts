// Issue 3 in `npm run bench` (run.ts): a teardown burst of DELETE reviews against reschedule-delete, the bare
// node:http baseline and the bare server with batched writes, alternated round by round; then the clones it
// created, the API requests it made, its RSS after the bursts, and the summary rows.

import { setTimeout as sleep } from "node:timers/promises";
import { fetchStats } from "../../functions/cli/loadtest/load.js";
import { clonesIn } from "../../functions/cli/loadtest/report.js";
import { againstContender, type Contender, compareWithPaced, teardownRequestsFor } from "./bench-bursts.js";
import { fmt, mib } from "./bench-format.js";
import {
  againstGoal,
  batchedWriteGoals,
  cpuRatioGoal,
  heapText,
  pacedGoal,
  printSummaries,
  type Report,
  rssParts,
  rssPartsText,
  type Summary,
  summarize,
} from "./bench-report.js";
import { benchTeardown } from "./bench-reviews.js";
import { type BenchSetup, bareBatchedSpec, bareSpec, functionSpec, startServer } from "./bench-servers.js";
import { CONCURRENCY, IDLE_SETTLE_MS, PACED_RATE, REVIEWS } from "./bench-settings.js";
import { rssOf } from "./processes.js";

/** The teardown rounds (BENCH_PARTS teardown): results.issue3 and its summary rows. */
export async function teardownRounds(setup: BenchSetup, report: Report): Promise<void> {
  const { builds, kubeconfig, api, workspace, running } = setup;
  const { goals, results, everySummary } = report;
  const bare = await startServer(bareSpec());
  running.push(bare.child);
  const fn = await startServer(functionSpec(builds, "reschedule-delete", kubeconfig));
  running.push(fn.child);
  const bareBatched = await startServer(bareBatchedSpec());
  running.push(bareBatched.child);
  const apiPerBurst: number[] = [];
  const statsUrl = new URL("/stats", fn.url);
  const statsBefore = await fetchStats(statsUrl);
  const contenders: Contender[] = [
    { server: bare, allowPatch: false, bursts: [], warmupErrors: 0 },
    {
      server: fn,
      allowPatch: false,
      bursts: [],
      warmupErrors: 0,
      around: async (run) => {
        const before = await api.requests();
        const result = await run();
        apiPerBurst.push((await api.requests()).total - before.total);
        return result;
      },
    },
    { server: bareBatched, allowPatch: false, bursts: [], warmupErrors: 0 },
  ];
  const againstTeardown = await againstContender(
    builds,
    functionSpec(builds, "reschedule-delete", kubeconfig, {}, true),
    running,
    false,
  );
  if (againstTeardown) contenders.push(againstTeardown);
  const title = `Teardown burst (DELETE reviews, ${CONCURRENCY} connections)`;
  process.stdout.write(`\n${title}\n`);
  const [pacedBare, pacedFn] = await compareWithPaced(workspace, "teardown", contenders, teardownRequestsFor);
  const statsAfter = await fetchStats(statsUrl);
  const [sBare, sFn, sBareBatched, sAgainst] = contenders.map((c) =>
    summarize(c.server.spec.label, c.bursts, c.warmupErrors),
  ) as [Summary, Summary, Summary, Summary | undefined];
  everySummary.push(sBare, sFn, sBareBatched);
  printSummaries(
    `${title}, per server`,
    sAgainst ? [sBare, sFn, sBareBatched, sAgainst] : [sBare, sFn, sBareBatched],
  );
  if (sAgainst) goals.push(againstGoal("teardown", sFn, sAgainst));
  const before = clonesIn(statsBefore);
  const after = clonesIn(statsAfter);
  const clones = before !== undefined && after !== undefined ? after - before : undefined;
  const rssAtOnce = rssOf(fn.child.pid);
  await sleep(IDLE_SETTLE_MS);
  const rss = rssOf(fn.child.pid);
  const parts = rssParts(fn.child.pid);
  const bareRss = rssOf(bare.child.pid);
  process.stdout.write(
    `  clones created: ${clones ?? "unknown"}; API requests per burst: ${apiPerBurst.join(", ")}; reschedule-delete RSS after: ${mib(rssAtOnce)} at once, ${mib(rss)} ${IDLE_SETTLE_MS / 1000} s later (${rssPartsText(parts)}; ${await heapText(fn.url)}; bare ${mib(bareRss)}, ${rssPartsText(rssParts(bare.child.pid))})\n`,
  );
  for (const s of [bare, fn, bareBatched]) await s.child.stop();
  await againstTeardown?.server.child.stop();

  const throughputRatio = sFn.throughput / sBare.throughput;
  const p99Ratio = sFn.p99Ms / sBare.p99Ms;
  goals.push({ name: "issue 3: errors", value: String(sFn.errors), goal: "0", met: sFn.errors === 0 });
  goals.push({
    name: `issue 11: reschedule-delete RSS ${IDLE_SETTLE_MS / 1000} s after the bursts`,
    value: `${mib(rss)} (at once ${mib(rssAtOnce)}; ${rssPartsText(parts)})`,
    goal: "< 80 MiB",
    met: rss === undefined ? "n/a" : rss < 80 * 1024 * 1024,
  });
  goals.push({
    name: "issue 3: clones",
    value: String(clones ?? "unknown"),
    goal: "0",
    met: clones === 0,
  });
  goals.push({
    name: "issue 3: throughput vs bare",
    value: `${fmt(throughputRatio)} (${fmt(sFn.throughput, 0)}/${fmt(sBare.throughput, 0)})`,
    goal: ">= 0.8",
    met: throughputRatio >= 0.8,
  });
  goals.push({
    name: "issue 3: p99 vs bare",
    value: `${fmt(p99Ratio)} (${fmt(sFn.p99Ms)}/${fmt(sBare.p99Ms)} ms)`,
    goal: "<= 2",
    met: p99Ratio <= 2,
  });
  goals.push(pacedGoal("teardown", pacedBare, pacedFn));
  goals.push(cpuRatioGoal("issue 11: teardown CPU per review, bare/fn", sBare, sFn));
  goals.push(...batchedWriteGoals("teardown", sBare, sBareBatched, sFn));
  const teardown = benchTeardown({ count: REVIEWS, seed: 1 });
  results.issue3 = {
    bare: sBare,
    bareBatchedWrites: sBareBatched,
    rescheduleDelete: sFn,
    paced: { rate: PACED_RATE, bare: pacedBare, rescheduleDelete: pacedFn },
    throughputRatio,
    p99Ratio,
    clonesCreated: clones ?? "unknown",
    apiRequestsPerBurst: apiPerBurst,
    reviewKinds: teardown.byKind,
    rssAfterBurstsBytes: rss ?? "unknown",
    rssPartsAfterBursts: parts ?? "unknown",
    rssAtOnceAfterBurstsBytes: rssAtOnce ?? "unknown",
    rescheduleDeleteStats: statsAfter ?? "unknown",
  };
}
