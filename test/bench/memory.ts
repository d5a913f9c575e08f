// `npm run bench:memory`: memory per in-flight review, the figure containerConcurrency and the memory limit of
// the Knative Services are set from (knative/manifests.ts). Run by hand, once; never part of `npm test`.
//
// One mutate-create (the built bundle, `serve`, cluster sequence store, as deployed) against the API double,
// both child processes. It answers a few small reviews to warm up, then takes CONCURRENCY CREATE reviews of
// about 3 MiB each (the API server's request limit) at once, over separate connections. Peak RSS is the
// child's VmHWM (Linux /proc), idle RSS its VmRSS before the burst; per review = (peak - idle) / CONCURRENCY.
// Two shapes of 3 MiB pod: many small objects (env entries, the costly one for JSON.parse) and one big string
// (an annotation such as kubectl's last-applied-configuration).

import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { BENCH_SIM_NAME, BENCH_STORE_NAMESPACE } from "./bench-world.js";
import {
  bigReview,
  MiB,
  post,
  procKb,
  type Shape,
  smallReview,
  startApiDouble,
  startMutateCreate,
} from "./memory-support.js";
import { measureTraceBursts, traceSizesMiB } from "./memory-trace.js";

const CONCURRENCY = Number(process.env.BENCH_MEMORY_CONCURRENCY) || 100;

async function measure(shape: Shape, kubeconfig: string) {
  const { fn, port } = await startMutateCreate({
    SIM_NAME: BENCH_SIM_NAME,
    KUBECONFIG: kubeconfig,
    SEQUENCE_STORE: "cluster",
    SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
    TRACE_PATH: undefined,
  });
  try {
    const reviews = Array.from({ length: CONCURRENCY }, (_, i) => bigReview(i, shape));
    // Warm-up with small reviews: JIT, owner cache, the sequence ConfigMap.
    for (let i = 0; i < 20; i++) await post(port, smallReview(i));
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

async function measureReviews(kubeconfig: string): Promise<void> {
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
}

// BENCH_MEMORY_SCENARIOS: "reviews" (bursts of reviews alone), "trace" (a burst during a trace load, see
// memory-trace.ts), or both (the default).
async function main(): Promise<void> {
  const scenarios = (process.env.BENCH_MEMORY_SCENARIOS ?? "reviews,trace").split(",");
  if (scenarios.includes("trace")) await measureTraceBursts(traceSizesMiB());
  if (!scenarios.includes("reviews")) return;
  const api = await startApiDouble();
  const kubeconfig = await writeKubeconfig(api.url);
  try {
    await measureReviews(kubeconfig);
  } finally {
    await removeKubeconfig(kubeconfig);
    await api.child.stop();
  }
}

// Under the test runner (NODE_TEST_CONTEXT set), as every file under dist/test/ may be, it does nothing.
if (!process.env.NODE_TEST_CONTEXT) await main();
