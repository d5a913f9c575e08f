// `simkube-fn replay --cluster local`: a trace replayed on a real control plane as SimKube's driver replays it
// (sk-driver/src/runner.rs): each event's objects server-side applied (field manager `simkube`) into virtual
// namespaces, its deletes at their time, (next - current) / speed between events; then interruptions; then the
// SimulationRoot deleted in the foreground and the namespaces waited out. Returns what it saw for report.ts.

import { SIMULATION_KIND } from "../../../shared/base/index.js";
import type { KubeObject } from "../../../shared/kube/index.js";
import {
  LEASE_IDLE_MS,
  LEASE_MS,
  LEASE_RENEW_MS,
  leaseOf,
  SEQUENCE_CONFIGMAP_PREFIX,
} from "../../../shared/sequence/index.js";
import type { Trace } from "../../../shared/trace/index.js";
import { objectPath } from "../../local-cluster/cluster-objects.js";
import { waitUntil } from "../../local-cluster/readiness.js";
import { type RestClient, RestError } from "../../local-cluster/rest.js";
import type { ReplayCluster } from "./cluster-connection.js";
import { type DriverContext, driverNamespace, driverObject, virtualNamespaceName } from "./driver.js";
import { INTERRUPTION_KINDS, type InterruptionResult, interrupt } from "./interruptions.js";
import type { ObservedPod } from "./lifecycle-match.js";
import {
  type ExpectedLifecycle,
  expectedLifecycles,
  judgeLifecycle,
  type LifecycleVerdict,
  playedBy,
} from "./lifecycle-match.js";
import { createPodObserver, type PodObserver } from "./pod-observer.js";
import { auditSequences, type SequenceAudit, type SequenceShard } from "./sequence-audit.js";

export const FIELD_MANAGER = "simkube";

export interface ClusterReplayOptions {
  trace: Trace;
  speed: number;
  interruptions: boolean;
  /** Called about once a second with the live progress. */
  progress: (p: Progress) => void;
  /** Notes and errors for a person (not the progress line). */
  note: (line: string) => void;
}

export interface Progress {
  applied: number;
  total: number;
  running: number;
  completed: number;
  clones: number;
}

export interface ClusterReplayResult {
  pods: ObservedPod[];
  verdicts: LifecycleVerdict[];
  interruptions: InterruptionResult[];
  teardown: { reviews: number; clones: number; ms: number; latencyMs?: { p50: number; p99: number } };
  errors: string[];
  ms: number;
  /** The sequence store read back before teardown; undefined when its ConfigMaps could not be listed. */
  sequences?: SequenceAudit;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const isNotFound = (err: unknown) => err instanceof RestError && err.status === 404;

async function applyObject(driver: RestClient, object: KubeObject): Promise<void> {
  await driver.request(
    "PATCH",
    `${objectPath(object)}?fieldManager=${FIELD_MANAGER}&force=true`,
    object,
    "application/apply-patch+yaml",
  );
}

/** The driver's plain DELETE of a traced object in its virtual namespace; gone already is fine. */
async function deleteObject(driver: RestClient, traced: KubeObject, ctx: DriverContext): Promise<void> {
  const ns = virtualNamespaceName(ctx.virtualNsPrefix, traced.metadata?.namespace ?? "default");
  const target = { ...traced, metadata: { ...traced.metadata, namespace: ns } } as KubeObject;
  try {
    await driver.request("DELETE", objectPath(target));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

interface RunState {
  cluster: ReplayCluster;
  ctx: DriverContext;
  observer: PodObserver;
  namespaces: string[];
  errors: string[];
  o: ClusterReplayOptions;
  applied: number;
  total: number;
}

async function applyEvent(s: RunState, event: Trace["events"][number]): Promise<void> {
  for (const traced of event.appliedObjs) {
    const object = driverObject(traced, s.ctx, s.o.trace.config);
    const ns = object.metadata?.namespace as string;
    try {
      if (!s.namespaces.includes(ns)) {
        await s.cluster.driver.ensure("/api/v1/namespaces", driverNamespace(ns, s.ctx));
        s.namespaces.push(ns);
      }
      await applyWhenNamespaceReady(s.cluster.driver, object);
    } catch (err) {
      s.errors.push(
        `apply ${traced.kind} ${traced.metadata?.namespace}/${traced.metadata?.name}: ${(err as Error).message}`,
      );
    }
  }
  for (const traced of event.deletedObjs) {
    try {
      await deleteObject(s.cluster.driver, traced, s.ctx);
    } catch (err) {
      s.errors.push(`delete ${traced.kind} ${traced.metadata?.name}: ${(err as Error).message}`);
    }
  }
  s.applied++;
}

/** A new namespace's default ServiceAccount comes a moment later; pods are refused until it exists. */
async function applyWhenNamespaceReady(driver: RestClient, object: KubeObject): Promise<void> {
  await waitUntil(
    `${object.kind} ${object.metadata?.name} applied`,
    async () => {
      await applyObject(driver, object);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

function progressOf(s: RunState): Progress {
  const pods = [...s.observer.pods.values()];
  return {
    applied: s.applied,
    total: s.total,
    running: pods.filter((p) => p.phase === "Running").length,
    completed: pods.filter((p) => p.phase === "Succeeded").length,
    clones: pods.filter((p) => p.clone).length,
  };
}

/** Sleeps `ms` while polling the pods once a second for the progress line. */
async function watchFor(s: RunState, ms: number): Promise<void> {
  const end = Date.now() + ms;
  do {
    try {
      await s.observer.poll(s.namespaces);
    } catch (err) {
      s.o.note(`poll: ${(err as Error).message}`);
    }
    s.o.progress(progressOf(s));
    await sleep(Math.min(1_000, end - Date.now()));
  } while (Date.now() < end);
}

/** Waits until every Finished lifecycle whose pod exists has completed, at most its scaled run time + 30 s. */
async function settle(s: RunState, expected: readonly ExpectedLifecycle[]): Promise<void> {
  const finished = expected.flatMap((e) => (e.lifecycle.kind === "Finished" ? [{ e, l: e.lifecycle }] : []));
  const longest = Math.max(0, ...finished.map(({ l }) => (l.end - l.start) / s.o.speed));
  const deadline = Date.now() + longest * 1000 + 30_000;
  while (Date.now() < deadline) {
    await watchFor(s, 1_000);
    const pods = [...s.observer.pods.values()];
    const pending = finished.filter(({ e }) => {
      const group = playedBy(e, pods).flat();
      return group.length > 0 && !group.some((p) => p.succeededAt !== undefined);
    });
    if (pending.length === 0) return;
  }
}

/**
 * A step with no progress line of its own (interruptions, settling, teardown: up to a minute or more): a note
 * when it starts and one every 5 s while it runs, so the run never goes quiet.
 */
async function phase<T>(s: RunState, label: string, work: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  s.o.note(`${label}...`);
  const timer = setInterval(() => s.o.note(`${label}: ${Math.round((Date.now() - t0) / 1000)} s`), 5_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * SimKube's end of a run: DELETE of the root with propagationPolicy Foreground (retried until gone), then the
 * garbage collector removes the namespaces. reschedule-delete's counters before and after give the teardown's
 * reviews and clones.
 */
async function teardown(s: RunState): Promise<ClusterReplayResult["teardown"]> {
  const t0 = Date.now();
  const before = await s.cluster.counters();
  const rootPath = objectPath(s.ctx.root);
  await waitUntil(
    "the SimulationRoot gone",
    async () => {
      try {
        await s.cluster.driver.request("DELETE", rootPath, { propagationPolicy: "Foreground" });
        await sleep(1_000);
        await s.cluster.driver.request("GET", rootPath);
        return false;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    { timeoutMs: 300_000, intervalMs: 2_000 },
  );
  for (const ns of s.namespaces) {
    await waitUntil(
      `namespace ${ns} gone`,
      async () => {
        try {
          await s.cluster.driver.request("GET", `/api/v1/namespaces/${ns}`);
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { timeoutMs: 300_000, intervalMs: 500 },
    );
  }
  const after = await s.cluster.counters();
  const latencies = (s.cluster.reviews ?? [])
    .filter((r) => r.function === "reschedule-delete" && r.at >= t0 && r.ms !== undefined)
    .map((r) => r.ms as number)
    .sort((a, b) => a - b);
  return {
    reviews: after.reviews - before.reviews,
    clones: after.clonesCreated - before.clonesCreated,
    ms: Date.now() - t0,
    ...(latencies.length > 0
      ? { latencyMs: { p50: round2(quantile(latencies, 0.5)), p99: round2(quantile(latencies, 0.99)) } }
      : {}),
  };
}

const round2 = (ms: number) => Math.round(ms * 100) / 100;

/** Nearest-rank quantile of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

/** mutate-create caches the Simulation this long (docs/configuration.md: "cached for 5 s"); a new speed is seen after it. */
const SIMULATION_CACHE_MS = 5_000;

/**
 * Sets the Simulation's speed: mutate-create scales the trace's run times by it (as SimKube's does). Waits out
 * mutate-create's cache of the Simulation, or the first pods would get the old speed's completion times.
 */
async function setSpeed(cluster: ReplayCluster, speed: number): Promise<void> {
  const current = (cluster.simulation.spec as { speed?: number } | undefined)?.speed ?? 1;
  if (current === speed) return;
  await cluster.driver.request(
    "PATCH",
    objectPath({ ...cluster.simulation, kind: SIMULATION_KIND }),
    { spec: { speed } },
    "application/merge-patch+json",
  );
  await sleep(SIMULATION_CACHE_MS + 1_000);
}

/** A CronJob runs on the wall clock: at speed 1, start on the trace's second of the minute so its jobs line up. */
async function alignToTraceMinute(trace: Trace, speed: number): Promise<void> {
  const first = trace.events[0]?.ts;
  const hasCronJob = trace.events.some((e) => e.appliedObjs.some((o) => o.kind === "CronJob"));
  if (first === undefined || !hasCronJob || speed !== 1) return;
  const wait = ((first % 60) - ((Date.now() / 1000) % 60) + 60) % 60;
  await sleep(wait * 1000);
}

/**
 * How long the audit waits for mutate-create to let go of its leases on the shards: an idle holder lets go
 * within LEASE_IDLE_MS and one renewal; a holder that died is over after LEASE_MS (shared/sequence/lease.ts).
 */
const LEASED_SHARD_WAIT_MS = LEASE_IDLE_MS + 2 * LEASE_RENEW_MS + LEASE_MS;

/** The run's sequence shards (owned by its SimulationRoot, in any namespace) against the pods seen. */
async function readSequenceAudit(s: RunState, pods: ObservedPod[]): Promise<SequenceAudit | undefined> {
  try {
    // A leased shard's counters include the holder's reserve: wait until it has been given back.
    const deadline = Date.now() + LEASED_SHARD_WAIT_MS;
    let shards = await readSequenceShards(s);
    while (shards.some((cm) => leaseOf(cm.metadata)) && Date.now() < deadline) {
      await sleep(250);
      shards = await readSequenceShards(s);
    }
    for (const cm of shards) {
      const lease = leaseOf(cm.metadata);
      if (lease)
        s.o.note(
          `sequence shard ${cm.metadata?.name} still leased by ${lease.holder}: its reserve counts as handed out`,
        );
    }
    return auditSequences(shards, pods);
  } catch (err) {
    s.o.note(`sequence store not read back: ${(err as Error).message}`);
    return undefined;
  }
}

async function readSequenceShards(s: RunState): Promise<(SequenceShard & KubeObject)[]> {
  const rootUid = s.cluster.root.metadata?.uid;
  const list = await s.cluster.driver.request<{ items?: (SequenceShard & KubeObject)[] }>(
    "GET",
    "/api/v1/configmaps?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dsimkube-fn",
  );
  return (list.items ?? []).filter(
    (cm) =>
      cm.metadata?.name?.startsWith(SEQUENCE_CONFIGMAP_PREFIX) &&
      cm.metadata.ownerReferences?.some((o) => o.uid === rootUid),
  );
}

export async function runClusterReplay(
  cluster: ReplayCluster,
  o: ClusterReplayOptions,
): Promise<ClusterReplayResult> {
  const t0 = Date.now();
  const simName = cluster.simulation.metadata?.name ?? "";
  const driverSpec = (cluster.simulation.spec as { driver?: { virtualNsPrefix?: string } } | undefined)
    ?.driver;
  const ctx: DriverContext = {
    simName,
    virtualNsPrefix: driverSpec?.virtualNsPrefix ?? "virtual",
    root: cluster.root,
  };
  const s: RunState = {
    cluster,
    ctx,
    o,
    errors: [],
    namespaces: [],
    applied: 0,
    total: o.trace.events.length,
    observer: createPodObserver(cluster.driver, cluster.root.metadata?.uid ?? ""),
  };
  await setSpeed(cluster, o.speed);
  await alignToTraceMinute(o.trace, o.speed);
  const events = o.trace.events;
  for (const [i, event] of events.entries()) {
    await applyEvent(s, event);
    const next = events[i + 1];
    if (next) await watchFor(s, ((next.ts - event.ts) / o.speed) * 1000);
  }
  const interruptions: InterruptionResult[] = [];
  if (o.interruptions) {
    const done = new Set<string>();
    for (const kind of INTERRUPTION_KINDS) {
      try {
        const result = await phase(s, `interruption: ${kind}`, () =>
          interrupt(cluster.driver, kind, s.observer, s.namespaces, done),
        );
        interruptions.push(result);
      } catch (err) {
        s.errors.push(`${kind}: ${(err as Error).message}`);
      }
    }
  }
  const expected = expectedLifecycles(o.trace);
  await phase(s, "waiting for the lifecycles to finish", () => settle(s, expected));
  const pods = [...s.observer.pods.values()];
  const verdicts = expected.map((e) => judgeLifecycle(e, pods, o.speed));
  // Before teardown: the garbage collector deletes the store's ConfigMaps with the SimulationRoot.
  const sequences = await readSequenceAudit(s, pods);
  const teardownResult = await phase(s, "teardown: the SimulationRoot and its namespaces", () => teardown(s));
  const result = { pods, verdicts, interruptions, teardown: teardownResult, errors: s.errors };
  return { ...result, ...(sequences ? { sequences } : {}), ms: Date.now() - t0 };
}
