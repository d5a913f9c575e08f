// Issues 2, 4 and 11 in `npm run bench` (run.ts): CREATE reviews against mutate-create with the memory and the
// cluster sequence store, the bare node:http baseline, the CREATE floor (floor-server.ts) and the bare server
// with batched writes, alternated round by round; then each one's summary, the RSS after the bursts, and the
// summary rows.

import { setTimeout as sleep } from "node:timers/promises";
import { againstContender, type Contender, compareWithPaced, createRequestsFor } from "./bench-bursts.js";
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
import {
  type BenchSetup,
  bareBatchedSpec,
  bareSpec,
  floorSpec,
  functionSpec,
  startServer,
} from "./bench-servers.js";
import { AGAINST_STORE, IDLE_SETTLE_MS, PACED_RATE } from "./bench-settings.js";
import { rssOf } from "./processes.js";

/** The CREATE rounds (BENCH_PARTS create): results.issue2 and results.issue4, and their summary rows. */
export async function createRounds(setup: BenchSetup, report: Report): Promise<void> {
  const { builds, kubeconfig, api, workspace, running } = setup;
  const { goals, results, everySummary } = report;
  const bare = await startServer(bareSpec());
  running.push(bare.child);
  const memory = await startServer(
    functionSpec(builds, "mutate-create", kubeconfig, { SEQUENCE_STORE: "memory" }),
  );
  running.push(memory.child);
  const cluster = await startServer(
    functionSpec(builds, "mutate-create", kubeconfig, { SEQUENCE_STORE: "cluster" }),
  );
  running.push(cluster.child);
  const floor = await startServer(floorSpec());
  running.push(floor.child);
  const bareBatched = await startServer(bareBatchedSpec());
  running.push(bareBatched.child);
  const contenders: Contender[] = [
    { server: bare, allowPatch: true, bursts: [], warmupErrors: 0 },
    { server: memory, allowPatch: true, bursts: [], warmupErrors: 0 },
    { server: cluster, allowPatch: true, bursts: [], warmupErrors: 0 },
    { server: floor, allowPatch: true, bursts: [], warmupErrors: 0 },
    { server: bareBatched, allowPatch: true, bursts: [], warmupErrors: 0 },
  ];
  const againstCreate = await againstContender(
    builds,
    functionSpec(builds, "mutate-create", kubeconfig, { SEQUENCE_STORE: AGAINST_STORE }, true),
    running,
  );
  if (againstCreate) contenders.push(againstCreate);
  process.stdout.write("\nCREATE reviews (mutate-create)\n");
  const apiBefore = await api.requests();
  const [pacedBare, pacedMemory] = await compareWithPaced(workspace, "create", contenders, createRequestsFor);
  const apiAfter = await api.requests();
  const [sBare, sMemory, sCluster, sFloor, sBareBatched, sAgainst] = contenders.map((c) =>
    summarize(c.server.spec.label, c.bursts, c.warmupErrors),
  ) as [Summary, Summary, Summary, Summary, Summary, Summary | undefined];
  const createSummaries = [sBare, sMemory, sCluster, sFloor, sBareBatched];
  everySummary.push(...createSummaries);
  printSummaries(
    "CREATE reviews (mutate-create), per server",
    sAgainst ? [...createSummaries, sAgainst] : createSummaries,
  );
  if (sAgainst) goals.push(againstGoal("CREATE", AGAINST_STORE === "cluster" ? sCluster : sMemory, sAgainst));
  const createRssAtOnce = rssOf(memory.child.pid);
  const bareRssAtOnce = rssOf(bare.child.pid);
  await sleep(IDLE_SETTLE_MS);
  const createRss = rssOf(memory.child.pid);
  const createRssParts = rssParts(memory.child.pid);
  process.stdout.write(
    `  RSS after the bursts: mutate-create (memory store) ${mib(createRssAtOnce)} at once, ${mib(createRss)} ${IDLE_SETTLE_MS / 1000} s later (${rssPartsText(createRssParts)}; ${await heapText(memory.url)}); bare ${mib(bareRssAtOnce)}, ${mib(rssOf(bare.child.pid))} (${rssPartsText(rssParts(bare.child.pid))})\n`,
  );
  for (const s of [bare, memory, cluster, floor, bareBatched]) await s.child.stop();
  await againstCreate?.server.child.stop();

  const throughputRatio = sMemory.throughput / sBare.throughput;
  const p99Ratio = sMemory.p99Ms / sBare.p99Ms;
  const clusterRatio = sCluster.throughput / sMemory.throughput;
  const clusterP99Ratio = sCluster.p99Ms / sMemory.p99Ms;
  goals.push({
    name: "issue 2: CREATE throughput vs bare",
    value: `${fmt(throughputRatio)} (${fmt(sMemory.throughput, 0)}/${fmt(sBare.throughput, 0)})`,
    goal: ">= 0.5",
    met: throughputRatio >= 0.5 && sMemory.errors === 0,
  });
  goals.push({
    name: "issue 2: CREATE p99 vs bare",
    value: `${fmt(p99Ratio)} (${fmt(sMemory.p99Ms)}/${fmt(sBare.p99Ms)} ms)`,
    goal: "<= 2 (issue 11)",
    met: p99Ratio <= 2,
  });
  goals.push(pacedGoal("CREATE", pacedBare, pacedMemory));
  goals.push(cpuRatioGoal("issue 11: CREATE CPU per review, bare/fn", sBare, sMemory));
  goals.push(...batchedWriteGoals("CREATE", sBare, sBareBatched, sMemory));
  // How much of the gap is the answer itself: the floor does only what every CREATE answer needs, and
  // writes as the functions do, so it is compared with the bare server that writes the same way.
  goals.push({
    name: "issue 11: CREATE floor throughput vs bare, batched",
    value: `${fmt(sFloor.throughput / sBareBatched.throughput)} (${fmt(sFloor.throughput, 0)}/${fmt(sBareBatched.throughput, 0)})`,
    goal: "(reported)",
    met: sFloor.errors === 0 ? "n/a" : false,
  });
  goals.push({
    name: "issue 11: mutate-create throughput vs CREATE floor",
    value: `${fmt(sMemory.throughput / sFloor.throughput)} (${fmt(sMemory.throughput, 0)}/${fmt(sFloor.throughput, 0)})`,
    goal: "(reported)",
    met: "n/a",
  });
  goals.push(cpuRatioGoal("issue 11: CREATE CPU per review, floor/fn", sFloor, sMemory));
  goals.push({
    name: "issue 4: cluster vs memory store throughput",
    value: `${fmt(clusterRatio)} (${fmt(sCluster.throughput, 0)}/${fmt(sMemory.throughput, 0)})`,
    goal: "(reported)",
    met: sCluster.errors === 0 ? "n/a" : false,
  });
  goals.push({
    name: "issue 4: cluster vs memory store p99",
    value: `${fmt(clusterP99Ratio)} (${fmt(sCluster.p99Ms)}/${fmt(sMemory.p99Ms)} ms)`,
    goal: "(reported)",
    met: "n/a",
  });
  goals.push({
    name: `issue 11: mutate-create RSS ${IDLE_SETTLE_MS / 1000} s after the bursts`,
    value: `${mib(createRss)} (at once ${mib(createRssAtOnce)}; ${rssPartsText(createRssParts)})`,
    goal: "< 80 MiB",
    met: createRss === undefined ? "n/a" : createRss < 80 * 1024 * 1024,
  });
  results.issue2 = {
    bare: sBare,
    mutateCreate: sMemory,
    floor: sFloor,
    bareBatchedWrites: sBareBatched,
    paced: { rate: PACED_RATE, bare: pacedBare, mutateCreate: pacedMemory },
    throughputRatio,
    p99Ratio,
    rssAfterBurstsBytes: createRss ?? "unknown",
    rssPartsAfterBursts: createRssParts ?? "unknown",
    rssAtOnceAfterBurstsBytes: createRssAtOnce ?? "unknown",
  };
  results.issue4 = {
    memory: sMemory,
    cluster: sCluster,
    throughputRatio: clusterRatio,
    p99Ratio: clusterP99Ratio,
    apiRequestsDuringCreateBursts: apiAfter.total - apiBefore.total,
  };
}
