// `npm run bench:memory`: memory per in-flight review, the figure containerConcurrency and the memory limit of
// the Knative Services are set from (knative/manifests.ts). Run by hand, once; never part of `npm test`.
//
// One mutate-create (the built bundle, `serve`, cluster sequence store, as deployed) against the API double,
// both child processes. It answers a few small reviews to warm up, then takes CONCURRENCY CREATE reviews of
// about 3 MiB each (the API server's request limit) at once, over separate connections. Peak RSS is the
// child's VmHWM (Linux /proc), idle RSS its VmRSS before the burst; per review = (peak - idle) / CONCURRENCY.
// Two shapes of 3 MiB pod: many small objects (env entries, the costly one for JSON.parse) and one big string
// (an annotation such as kubectl's last-applied-configuration).

import http from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_BODY_BYTES } from "../../functions/runtime/http-server.js";
import type { AdmissionReview } from "../../shared/admission.js";
import { buildCreateReview, buildPod, rootOwnerRef } from "../support/builders.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import {
  BENCH_ROOT_NAME,
  BENCH_ROOT_UID,
  BENCH_SIM_NAME,
  BENCH_STORE_NAMESPACE,
  BENCH_VIRTUAL_NAMESPACES,
} from "./bench-world.js";
import { procStatusBytes } from "./proc-status.js";
import { type Child, freePort, startChild, waitUntil } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../../..");
const CONCURRENCY = Number(process.env.BENCH_MEMORY_CONCURRENCY) || 100;
/** Just under the server's limit, envelope included. */
const REVIEW_BYTES = MAX_BODY_BYTES - 4 * 1024;
const MiB = 1024 * 1024;

type Shape = "many small objects" | "one big string";

function procKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  return (procStatusBytes(pid, field) ?? Number.NaN) / 1024;
}

function bigReview(i: number, shape: Shape): string {
  const namespace = BENCH_VIRTUAL_NAMESPACES[0] as string;
  const pod = buildPod({
    name: `big-${i}`,
    namespace,
    phase: null,
    ownerReferences: [rootOwnerRef(BENCH_ROOT_NAME, BENCH_ROOT_UID)],
  });
  const base = JSON.stringify(buildCreateReview({ pod })).length;
  const room = REVIEW_BYTES - base;
  if (shape === "one big string") {
    pod.metadata = { ...pod.metadata, annotations: { "example.com/config": "x".repeat(room - 40) } };
  } else {
    const env: { name: string; value: string }[] = [];
    for (let used = 0, n = 0; ; n++) {
      const entry = { name: `VAR_${i}_${n}`, value: "v".repeat(60) };
      used += JSON.stringify(entry).length + 1;
      if (used > room - 100) break;
      env.push(entry);
    }
    (pod.spec as { containers: Record<string, unknown>[] }).containers[0] = {
      name: "container-0",
      image: "nginx:1.27",
      env,
    };
  }
  const text = JSON.stringify(buildCreateReview({ pod }));
  if (text.length > MAX_BODY_BYTES) throw new Error(`review ${text.length} bytes is over the limit`);
  return text;
}

/** True when admitted with a patch; otherwise why not (HTTP status or the denial message). */
function post(port: number, body: string): Promise<true | string> {
  return new Promise((resolvePost) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/",
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return resolvePost(`HTTP ${res.statusCode}`);
          const response = (JSON.parse(text) as AdmissionReview).response;
          if (response?.allowed === true && response.patch !== undefined) return resolvePost(true);
          resolvePost(response?.status?.message ?? "allowed without a patch");
        });
      },
    );
    req.on("error", (err) => resolvePost(err.message));
    req.end(body);
  });
}

async function startApiDouble(): Promise<{ child: Child; url: string }> {
  const child = startChild(process.execPath, [join(HERE, "api-double-main.js")], { ipc: true, cwd: REPO });
  let url = "";
  const ready = await waitUntil(
    async () => {
      const line = child.output().split("\n")[0] ?? "";
      if (line.startsWith("{")) url = (JSON.parse(line) as { url: string }).url;
      return url !== "";
    },
    20_000,
    10,
  );
  if (!ready) throw new Error(`the API double did not start:\n${child.output()}`);
  return { child, url };
}

async function measure(shape: Shape, kubeconfig: string) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SIM_NAME: BENCH_SIM_NAME,
    KUBECONFIG: kubeconfig,
    LOG_LEVEL: "warn",
    SEQUENCE_STORE: "cluster",
    SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
    PORT: String(port),
  };
  delete env.TRACE_PATH;
  const fn = startChild(
    process.execPath,
    [join(REPO, "dist/bundle/simkube-fn.mjs"), "serve", "mutate-create"],
    {
      env,
      cwd: REPO,
    },
  );
  try {
    const up = await waitUntil(
      () =>
        new Promise((ok) =>
          http
            .get(`http://127.0.0.1:${port}/healthz`, (r) => ok(r.statusCode === 200))
            .on("error", () => ok(false)),
        ),
      20_000,
      20,
    );
    if (!up) throw new Error(`mutate-create did not start:\n${fn.output()}`);
    const reviews = Array.from({ length: CONCURRENCY }, (_, i) => bigReview(i, shape));
    // Warm-up with small reviews: JIT, owner cache, the sequence ConfigMap.
    for (let i = 0; i < 20; i++)
      await post(
        port,
        JSON.stringify(
          buildCreateReview({
            pod: buildPod({
              name: `warm-${i}`,
              namespace: BENCH_VIRTUAL_NAMESPACES[0] as string,
              phase: null,
              ownerReferences: [rootOwnerRef(BENCH_ROOT_NAME, BENCH_ROOT_UID)],
            }),
          }),
        ),
      );
    await new Promise((r) => setTimeout(r, 500));
    const idleKb = procKb(fn.pid, "VmRSS");
    const started = performance.now();
    const answers = await Promise.all(reviews.map((body) => post(port, body)));
    const elapsedMs = performance.now() - started;
    const peakKb = procKb(fn.pid, "VmHWM");
    return {
      shape,
      reviewMiB: (reviews[0] as string).length / MiB,
      admittedWithPatch: answers.filter((a) => a === true).length,
      firstRefusal: answers.find((a) => a !== true) ?? "",
      idleMiB: idleKb / 1024,
      peakMiB: peakKb / 1024,
      perReviewMiB: (peakKb - idleKb) / 1024 / CONCURRENCY,
      elapsedMs: Math.round(elapsedMs),
    };
  } finally {
    await fn.stop();
  }
}

async function main(): Promise<void> {
  const api = await startApiDouble();
  const kubeconfig = await writeKubeconfig(api.url);
  try {
    const rows = [];
    for (const shape of ["many small objects", "one big string"] as const)
      rows.push(await measure(shape, kubeconfig));
    console.log(
      `${CONCURRENCY} concurrent CREATE reviews of ~3 MiB against mutate-create (node ${process.version})`,
    );
    console.table(
      rows.map((r) => ({
        shape: r.shape,
        "review MiB": r.reviewMiB.toFixed(2),
        "admitted+patched": `${r.admittedWithPatch}/${CONCURRENCY}`,
        "idle RSS MiB": r.idleMiB.toFixed(1),
        "peak RSS MiB": r.peakMiB.toFixed(1),
        "MiB per in-flight review": r.perReviewMiB.toFixed(2),
        "burst ms": r.elapsedMs,
      })),
    );
    for (const r of rows) if (r.firstRefusal) console.log(`${r.shape}: first refusal: ${r.firstRefusal}`);
  } finally {
    await removeKubeconfig(kubeconfig);
    await api.child.stop();
  }
}

// Under the test runner (NODE_TEST_CONTEXT set), as every file under dist/test/ may be, it does nothing.
if (!process.env.NODE_TEST_CONTEXT) await main();
