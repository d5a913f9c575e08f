// `simkube-fn replay --cluster local`: loads the trace, brings up (or reaches) the cluster, runs the replay
// with a live progress line on a terminal, prints the report (and `--json` counts last), stops what it started.
// Exit status 1 when a lifecycle missed, an error occurred or teardown cloned a pod.

import { existsSync } from "node:fs";
import path from "node:path";
import { loadTrace } from "../../../shared/trace/index.js";
import { startReplayCluster } from "./cluster-connection.js";
import { clusterCounts, clusterReplayOk, clusterReport, progressLine } from "./cluster-report.js";
import { runClusterReplay } from "./cluster-runner.js";

export interface ControlPlaneSearch {
  searchFrom: string[];
  binDir?: string;
}

export interface ClusterReplayArgs {
  trace?: string;
  speed: number;
  json: boolean;
  kubeconfig?: string;
  interruptions?: boolean;
}

export async function runClusterReplayCommand(
  args: ClusterReplayArgs,
  traceEnv: string | undefined,
  where: ControlPlaneSearch,
): Promise<number> {
  const chosen = args.trace ?? traceEnv;
  if (!chosen) throw new Error("replay --cluster local needs --trace FILE (or TRACE_PATH)");
  const tracePath = path.resolve(chosen);
  if (!existsSync(tracePath)) throw new Error(`--trace: no such file: ${tracePath}`);
  const trace = await loadTrace(tracePath);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const tty = process.stdout.isTTY === true;
  const started = Date.now();
  const cluster = await startReplayCluster({
    tracePath,
    searchFrom: where.searchFrom,
    ...(where.binDir ? { binDir: where.binDir } : {}),
    ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
  });
  // Ctrl-C mid-run: stop the processes this command started before exiting.
  const interrupted = () => {
    cluster.stop().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    if (!args.json)
      out(
        `Cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s; replaying ${tracePath} at speed ${args.speed}.`,
      );
    const result = await runClusterReplay(cluster, {
      trace,
      speed: args.speed,
      interruptions: args.interruptions !== false,
      progress: (p) => {
        if (tty) process.stdout.write(`\r${progressLine(p)}\u001b[K`);
      },
      note: (line) => process.stderr.write(`${line}\n`),
    });
    if (tty) process.stdout.write("\n");
    for (const line of clusterReport(result, args.speed)) out(line);
    const ok = clusterReplayOk(result);
    if (args.json) out(JSON.stringify({ ...clusterCounts(result), ok }));
    return ok ? 0 : 1;
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    await cluster.stop();
  }
}
