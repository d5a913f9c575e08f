// `npm run bench:memory`, trace scenario: memory of a burst of reviews while a trace loads, the case the
// memory limit must cover (knative/manifests.ts). One mutate-create serving every Simulation (no SIM_NAME, no
// TRACE_PATH), whose Simulation names a trace file of BENCH_MEMORY_TRACE_MIB MiB (comma-separated sizes,
// default 64,96,128), allowed by TRACE_ALLOWED_LOCATIONS, with TRACE_MAX_MIB at the size. The trace is loaded
// once (a Running pod needs its lifecycle); then its file is touched, so that after the 1 s recheck
// (TRACE_RECHECK_SECONDS) it is loaded again while the old copy is still held; and at that moment 32 Running
// CREATE reviews of ~3 MiB (many small objects, the costly shape) arrive at once: the containerConcurrency.
// The trace is lifecycle-heavy (1.2 M pod lifecycles per 64 MiB, few events): the lean load skips events, so
// lifecycles are what costs memory (peak 2.9x the file above the process before, against 2.3x for the
// events-heavy shape of big-trace.ts).

import { mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { BENCH_STORE_NAMESPACE } from "./bench-world.js";
import { buildBigTraceBytes } from "./big-trace.js";
import {
  bigReview,
  MiB,
  post,
  procKb,
  smallReview,
  startApiDouble,
  startMutateCreate,
} from "./memory-support.js";

/** Reviews in flight per replica: the Services' containerConcurrency (knative/manifests.ts). */
const IN_FLIGHT = 32;

export function traceSizesMiB(): number[] {
  return (process.env.BENCH_MEMORY_TRACE_MIB ?? "64,96,128")
    .split(",")
    .map(Number)
    .filter((n) => n > 0);
}

function lifecycleHeavy(deployments: number): Uint8Array {
  return buildBigTraceBytes({
    barePods: 0,
    deployments,
    podsPerDeployment: 200,
    updatesPerDeployment: 0,
    seed: 7,
  });
}

/** A trace just under `mib` MiB: its size grows linearly with the Deployments, so two small ones say how many. */
export function lifecycleHeavyTraceOf(mib: number): Uint8Array {
  const small = lifecycleHeavy(100).byteLength;
  const perDeployment = (lifecycleHeavy(200).byteLength - small) / 100;
  const deployments = Math.floor(100 + (mib * MiB - small) / perDeployment) - 1;
  return lifecycleHeavy(deployments);
}

interface TraceBurst {
  traceMiB: number;
  idleMiB: number;
  loadPeakMiB: number;
  heldMiB: number;
  burstPeakMiB: number;
  admitted: number;
  firstRefusal: string;
  burstMs: number;
}

async function burstDuringLoad(dir: string, file: string, traceMiB: number): Promise<TraceBurst> {
  const api = await startApiDouble({ BENCH_TRACE_PATH: file });
  const kubeconfig = await writeKubeconfig(api.url);
  const { fn, port } = await startMutateCreate({
    SIM_NAME: undefined,
    TRACE_PATH: undefined,
    KUBECONFIG: kubeconfig,
    SEQUENCE_STORE: "cluster",
    SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
    TRACE_ALLOWED_LOCATIONS: `${dir}/`,
    TRACE_MAX_MIB: String(Math.ceil(traceMiB)),
    TRACE_RECHECK_SECONDS: "1",
  });
  try {
    const reviews = Array.from({ length: IN_FLIGHT }, (_, i) =>
      bigReview(i, "many small objects", "Running"),
    );
    for (let i = 0; i < 20; i++) await post(port, smallReview(i));
    await new Promise((r) => setTimeout(r, 500));
    const idleKb = procKb(fn.pid, "VmRSS");
    const loaded = await post(port, smallReview(100, "Running"));
    if (loaded !== true) throw new Error(`the first Running pod was not admitted: ${loaded}`);
    const loadPeakKb = procKb(fn.pid, "VmHWM");
    // A new mtime: the next admission after the recheck interval loads the trace again.
    const later = new Date(Date.now() + 5000);
    await utimes(file, later, later);
    await new Promise((r) => setTimeout(r, 1500));
    const heldKb = procKb(fn.pid, "VmRSS");
    const started = performance.now();
    const answers = await Promise.all(reviews.map((body) => post(port, body)));
    const burstMs = performance.now() - started;
    return {
      traceMiB,
      idleMiB: idleKb / 1024,
      loadPeakMiB: loadPeakKb / 1024,
      heldMiB: heldKb / 1024,
      burstPeakMiB: procKb(fn.pid, "VmHWM") / 1024,
      admitted: answers.filter((a) => a === true).length,
      firstRefusal: answers.find((a) => a !== true) ?? "",
      burstMs: Math.round(burstMs),
    };
  } finally {
    await fn.stop();
    await removeKubeconfig(kubeconfig);
    await api.child.stop();
  }
}

export async function measureTraceBursts(sizes: number[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "bench-memory-trace-"));
  const rows: TraceBurst[] = [];
  try {
    for (const mib of sizes) {
      const file = join(dir, `trace-${mib}.sktrace`);
      await writeFile(file, lifecycleHeavyTraceOf(mib));
      rows.push(await burstDuringLoad(dir, file, (await stat(file)).size / MiB));
      await rm(file);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(
    `${IN_FLIGHT} Running CREATE reviews of ~3 MiB arriving while a lifecycle-heavy trace reloads, its old ` +
      `copy held (mutate-create serving every Simulation; node ${process.version})`,
  );
  console.table(
    rows.map((r) => ({
      "trace MiB": r.traceMiB.toFixed(1),
      "idle RSS MiB": r.idleMiB.toFixed(1),
      "first load peak MiB": r.loadPeakMiB.toFixed(1),
      "trace held RSS MiB": r.heldMiB.toFixed(1),
      "burst + reload peak MiB": r.burstPeakMiB.toFixed(1),
      "admitted+patched": `${r.admitted}/${IN_FLIGHT}`,
      "burst ms": r.burstMs,
    })),
  );
  for (const r of rows)
    if (r.firstRefusal) console.log(`${r.traceMiB.toFixed(1)} MiB: first refusal: ${r.firstRefusal}`);
}
