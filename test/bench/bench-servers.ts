// The servers `npm run bench` (run.ts) measures: what each is (ServerSpec: the bare node:http baseline, its
// batched-writes variant, the CREATE floor, and the functions of this build or of BENCH_AGAINST's), how one is
// started on a free 127.0.0.1 port and pinned to the server core, one checked review on a fresh connection,
// and the cold start (spawn to first admitted review, then the RSS).

import http from "node:http";
import { checkAnswer, fetchStats, type LoadRequest } from "../../functions/cli/loadtest/load.js";
import { freePort } from "../../functions/local-cluster/ports.js";
import { median } from "./bench-format.js";
import {
  BARE_SERVER,
  FLOOR_SERVER,
  LOG_LEVEL,
  SERVE_ENV,
  SERVE_FLAGS,
  SERVER_PIN,
  START_TIMEOUT_MS,
} from "./bench-settings.js";
import { BENCH_SIM_NAME, BENCH_STORE_NAMESPACE } from "./bench-world.js";
import { type ApiDouble, SERVER_NODE, startNode } from "./node-children.js";
import { type Child, rssOf, waitUntil } from "./processes.js";
import type { WrkWorkspace } from "./wrk.js";

/** The builds whose functions are measured, chosen once by main() and passed down (no module state). */
export interface Builds {
  /** This build's bundle entry: dist/bundle's, or a copy with a code cache for BENCH_NODE. */
  bundle: string;
  /** BENCH_AGAINST's bundle entry, or "" without BENCH_AGAINST. */
  against: string;
}

/** What main() sets up once for the sections that start servers. */
export interface BenchSetup {
  builds: Builds;
  kubeconfig: string;
  api: ApiDouble;
  workspace: WrkWorkspace;
  /** Every child started, for main() to stop whatever happens. */
  running: Child[];
}

export interface ServerSpec {
  label: string;
  /** Node flags before the script. */
  flags: string[];
  args: string[];
  env: Record<string, string>;
}

export interface RunningServer {
  spec: ServerSpec;
  child: Child;
  url: URL;
}

export function bareSpec(): ServerSpec {
  return { label: "bare node:http", flags: [], args: [BARE_SERVER], env: {} };
}

/**
 * The bare server writing its answers as the functions write theirs (together, after the turn's reviews:
 * functions/runtime/write-batch.ts): what the functions' ratio to bare owes to that, and a like-for-like one.
 */
export function bareBatchedSpec(): ServerSpec {
  return { label: "bare, batched writes", flags: [], args: [BARE_SERVER], env: { BENCH_BATCH_WRITES: "1" } };
}

/** The bare server plus the hash, sequence and patch every CREATE answer needs (floor-server.ts). */
export function floorSpec(): ServerSpec {
  return { label: "CREATE floor", flags: [], args: [FLOOR_SERVER], env: {} };
}

export function functionSpec(
  builds: Builds,
  fn: "mutate-create" | "reschedule-delete",
  kubeconfig: string,
  extra: Record<string, string> = {},
  against = false,
): ServerSpec {
  const store = extra.SEQUENCE_STORE ? ` (${extra.SEQUENCE_STORE} store)` : "";
  return {
    label: `${fn}${store}${against ? " AGAINST" : ""}`,
    flags: SERVE_FLAGS,
    args: [against ? builds.against : builds.bundle, "serve", fn],
    env: {
      ...SERVE_ENV,
      SIM_NAME: BENCH_SIM_NAME,
      KUBECONFIG: kubeconfig,
      LOG_LEVEL,
      SEQUENCE_STORE: "memory",
      SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
      // Optional: mutate-create then also looks up lifecycles (the bench pods are not in any trace).
      ...(process.env.BENCH_TRACE_PATH ? { TRACE_PATH: process.env.BENCH_TRACE_PATH } : {}),
      ...extra,
    },
  };
}

function childEnv(spec: ServerSpec, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...spec.env, PORT: String(port) };
  // The functions read these; the bench decides them.
  if (!spec.env.TRACE_PATH) delete env.TRACE_PATH;
  for (const key of ["DRIVER_USERS", "POD_NAMESPACE"]) delete env[key];
  if (!spec.env.KUBECONFIG) delete env.KUBECONFIG;
  return env;
}

function getStatus(url: URL, timeoutMs: number): Promise<number> {
  return new Promise((resolveStatus) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolveStatus(0));
  });
}

export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const port = await freePort();
  const child = startNode(spec.args, childEnv(spec, port), SERVER_PIN, false, spec.flags, SERVER_NODE);
  const url = new URL(`http://127.0.0.1:${port}/`);
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  const ready = await waitUntil(
    async () => exited || (await getStatus(new URL("/healthz", url), 1_000)) === 200,
    START_TIMEOUT_MS,
    10,
  );
  if (!ready || exited) {
    await child.stop();
    throw new Error(`${spec.label} did not start (${exited ? "exited" : "no /healthz"}):\n${child.output()}`);
  }
  return { spec, child, url };
}

/** POSTs one review on a fresh connection; the answer's check, or "refused" when nothing listens yet. */
function postOnce(url: URL, request: LoadRequest, allowPatch: boolean): Promise<"ok" | "refused" | string> {
  return new Promise((resolveResult) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent: false,
        timeout: 5_000,
        headers: { "content-type": "application/json", "content-length": request.body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const checked = checkAnswer(
            res.statusCode ?? 0,
            Buffer.concat(chunks).toString("utf8"),
            request.uid,
            {
              allowPatch,
            },
          );
          resolveResult(checked.error ? `${checked.error}: ${checked.detail}` : "ok");
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) =>
      resolveResult(err.code === "ECONNREFUSED" ? "refused" : `transport: ${err.message}`),
    );
    req.end(request.body);
  });
}

export interface ColdStartSummary {
  bestMs: number;
  medianMs: number;
  /** Median time of the first review alone (API calls, lazy init). */
  medianFirstReviewMs: number;
  idleRssBytes?: number;
  runs: ColdStart[];
}

export function summarizeColdStarts(runs: ColdStart[]): ColdStartSummary {
  const rss = runs.flatMap((r) => (r.idleRssBytes === undefined ? [] : [r.idleRssBytes]));
  const summary: ColdStartSummary = {
    bestMs: Math.min(...runs.map((r) => r.ms)),
    medianMs: median(runs.map((r) => r.ms)),
    medianFirstReviewMs: median(runs.map((r) => r.firstReviewMs)),
    runs,
  };
  if (rss.length > 0) summary.idleRssBytes = median(rss);
  return summary;
}

export interface ColdStart {
  ms: number;
  /** How long the admitted review itself took: the rest of `ms` is starting up until listening. */
  firstReviewMs: number;
  idleRssBytes?: number;
}

/** Spawn to first admitted review, then the RSS after a short idle moment. */
export async function coldStart(
  spec: ServerSpec,
  request: LoadRequest,
  allowPatch: boolean,
): Promise<ColdStart> {
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}/`);
  const started = performance.now();
  const child = startNode(spec.args, childEnv(spec, port), SERVER_PIN, false, spec.flags, SERVER_NODE);
  try {
    let last = "";
    let firstReviewMs = 0;
    const admitted = await waitUntil(
      async () => {
        const sent = performance.now();
        last = await postOnce(url, request, allowPatch);
        firstReviewMs = performance.now() - sent;
        if (last !== "ok" && last !== "refused") throw new Error(`${spec.label} answered badly: ${last}`);
        return last === "ok";
      },
      START_TIMEOUT_MS,
      2,
    );
    const ms = performance.now() - started;
    if (!admitted)
      throw new Error(`${spec.label} admitted nothing within ${START_TIMEOUT_MS} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 500));
    const rss = rssOf(child.pid) ?? (await fetchStats(new URL("/stats", url)))?.rssBytes;
    return typeof rss === "number" ? { ms, firstReviewMs, idleRssBytes: rss } : { ms, firstReviewMs };
  } finally {
    await child.stop();
  }
}
