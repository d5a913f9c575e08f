// The main job on a machine without a cluster: replay a trace's bare pods through both functions against
// the embedded API double, the way a simulation would. Pods are created through the API (the double calls
// mutate-create as its webhook), KWOK's Running status write gets the completion time, one pod is evicted
// by the taint manager (reschedule-delete clones it), then the virtual namespace is torn down (no clones).

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FunctionName, Logger } from "../../../shared/base/index.js";
import {
  KWOK_STAGE_COMPLETE_TIMESTAMP_KEY,
  KWOK_USER,
  NODE_CONTROLLER_USER,
  POD_SEQUENCE_NUMBER_KEY,
  POD_SPEC_STABLE_HASH_KEY,
  SIMKUBE_API_VERSION,
  SIMKUBE_DRIVER_USER,
  SIMULATION_KIND,
  SIMULATION_ROOT_KIND,
} from "../../../shared/base/index.js";
import type { FunctionConfig } from "../../../shared/config/index.js";
import type { KubeObject, OwnerReference } from "../../../shared/kube/index.js";
import { createKubeApi } from "../../../shared/kube/index.js";
import { parseTrace, type Trace } from "../../../shared/trace/index.js";
import { startFakeApiServer } from "../../local-apiserver/server.js";
import type { FakeApiServer } from "../../local-apiserver/types.js";
import { startFunction } from "../../runtime/registry.js";
import { buildVirtualNamespace, buildVirtualPod, virtualNamespace } from "./virtual-pod.js";

/** The taint-eviction controller runs with the node controller's credentials. */
const TAINT_MANAGER_USER = NODE_CONTROLLER_USER;
const VIRTUAL_PREFIX = "virtual";
const FUNCTION_NAMESPACE = "simkube";

export interface ReplayOptions {
  simName: string;
  traceBytes: Uint8Array;
  traceLabel: string;
  speed: number;
  log: Logger;
  out: (line: string) => void;
}

export interface ReplayResult {
  pods: number;
  mutated: number;
  completed: number;
  /** Pods the taint manager evicted (one, or none for a trace without bare pods). */
  interruptions: number;
  clonesOnInterruption: number;
  /** DELETE reviews reschedule-delete answered during the teardown. */
  teardownReviews: number;
  clonesOnTeardown: number;
  /** Webhook calls that failed or were denied. */
  errors: number;
}

interface PodView extends KubeObject {
  spec?: { nodeSelector?: Record<string, string> };
}

function tracedBarePods(trace: Trace): KubeObject[] {
  return trace.events.flatMap((event) =>
    event.appliedObjs.filter((o) => o.kind === "Pod" && o.apiVersion === "v1"),
  );
}

/** The traced objects other than bare pods, counted by kind ("1 Deployment(s)"). */
function otherObjects(trace: Trace): string[] {
  const byKind = new Map<string, Set<string>>();
  for (const event of trace.events) {
    for (const o of event.appliedObjs) {
      if (o.kind === "Pod" && o.apiVersion === "v1") continue;
      const kind = o.kind ?? "object";
      const names = byKind.get(kind) ?? new Set<string>();
      names.add(`${o.metadata?.namespace}/${o.metadata?.name}`);
      byKind.set(kind, names);
    }
  }
  return [...byKind].map(([kind, names]) => `${names.size} ${kind}(s)`);
}

/**
 * The pod the simulated node failure hits: the first one production lost (the trace deletes it), so a
 * scenario's `interrupted` pod is the one cloned; else the first pod.
 */
function interruptedIndex(trace: Trace, pods: KubeObject[]): number {
  const deleted = new Set(
    trace.events.flatMap((e) =>
      e.deletedObjs
        .filter((o) => o.kind === "Pod")
        .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`),
    ),
  );
  const index = pods.findIndex((p) => deleted.has(`${p.metadata?.namespace}/${p.metadata?.name}`));
  return Math.max(index, 0);
}

function describePod(pod: PodView | undefined, namespace: string, name: string): string[] {
  const annotations = pod?.metadata?.annotations ?? {};
  return [
    `${namespace}/${name}`,
    `type=${pod?.spec?.nodeSelector?.type ?? "-"}`,
    annotations[POD_SPEC_STABLE_HASH_KEY] ?? "-",
    annotations[POD_SEQUENCE_NUMBER_KEY] ?? "-",
    annotations[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY] ?? "(no finished lifecycle)",
  ];
}

function printTable(rows: string[][], out: (line: string) => void): void {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const cells of rows)
    out(
      cells
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    );
}

/** The Simulation, its driver's SimulationRoot and the virtual namespaces it owns, as SimKube makes them. */
function putSimulation(api: FakeApiServer, options: ReplayOptions, namespaces: string[]): OwnerReference {
  const { simName } = options;
  const sim = api.store.put({
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_KIND,
    metadata: { name: simName },
    spec: {
      speed: options.speed,
      rescheduleInterruptedBarePods: true,
      lifecycleParams: { imagePullDelay: 500, podStartupDelay: 1000 },
      driver: {
        namespace: FUNCTION_NAMESPACE,
        virtualNsPrefix: VIRTUAL_PREFIX,
        tracePath: options.traceLabel,
      },
    },
    status: { state: "Running" },
  });
  const rootObject = api.store.put({
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_ROOT_KIND,
    metadata: {
      name: `sk-${simName}-driver-root`,
      ownerReferences: [
        {
          apiVersion: SIMKUBE_API_VERSION,
          kind: SIMULATION_KIND,
          name: simName,
          uid: sim.metadata?.uid ?? "",
        },
      ],
    },
    spec: {},
  });
  const root: OwnerReference = {
    apiVersion: SIMKUBE_API_VERSION,
    kind: SIMULATION_ROOT_KIND,
    name: rootObject.metadata?.name ?? "",
    uid: rootObject.metadata?.uid ?? "",
  };
  for (const namespace of namespaces) api.store.put(buildVirtualNamespace(namespace, root));
  return root;
}

/** The trace and a kubeconfig for the double, written where the functions read them. */
async function writeFunctionInputs(
  dir: string,
  api: FakeApiServer,
  traceBytes: Uint8Array,
): Promise<{ tracePath: string; kubeconfigPath: string }> {
  const tracePath = path.join(dir, "trace.sktrace");
  await writeFile(tracePath, traceBytes);
  const kubeconfigPath = path.join(dir, "kubeconfig");
  await writeFile(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "local", cluster: { server: api.url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "local", user: { token: "local" } }],
      contexts: [{ name: "local", context: { cluster: "local", user: "local" } }],
      "current-context": "local",
    }),
  );
  return { tracePath, kubeconfigPath };
}

/** Starts both functions on 127.0.0.1 (servers pushed as they start, so a failure still closes them). */
async function startBothFunctions(
  simName: string,
  files: { tracePath: string; kubeconfigPath: string },
  log: Logger,
  servers: Server[],
): Promise<{ urls: Partial<Record<FunctionName, string>>; settleClones: () => Promise<boolean> }> {
  const config: FunctionConfig = {
    simName,
    tracePath: files.tracePath,
    port: 0,
    logLevel: "warn",
    driverUsers: [SIMKUBE_DRIVER_USER],
    sequenceStore: "cluster",
    storeNamespace: FUNCTION_NAMESPACE,
  };
  const urls: Partial<Record<FunctionName, string>> = {};
  let settleClones = async () => true;
  for (const name of ["mutate-create", "reschedule-delete"] as const) {
    const running = await startFunction(
      name,
      config,
      createKubeApi({ kubeconfigPath: files.kubeconfigPath }),
      log.child({ function: name }),
      "127.0.0.1",
    );
    servers.push(running.server);
    urls[name] = `http://127.0.0.1:${running.port}/`;
    if (name === "reschedule-delete") settleClones = running.settle;
  }
  return { urls, settleClones };
}

/** Registers the functions as the double's webhooks, as the MutatingWebhookConfiguration would. */
function registerWebhooks(api: FakeApiServer, urls: Partial<Record<FunctionName, string>>): void {
  api.webhooks = [
    {
      name: "mutate-create.simkube.io",
      url: urls["mutate-create"] ?? "",
      operations: ["CREATE", "UPDATE"],
      resources: ["pods", "pods/status"],
    },
    {
      name: "reschedule-delete.simkube.io",
      url: urls["reschedule-delete"] ?? "",
      operations: ["DELETE"],
      resources: ["pods"],
      failurePolicy: "Ignore",
    },
  ];
}

function announce(
  options: ReplayOptions,
  trace: Trace,
  podCount: number,
  apiUrl: string,
  urls: Partial<Record<FunctionName, string>>,
): void {
  const { out } = options;
  out(
    `Replaying ${podCount} bare pod(s) from ${options.traceLabel} as Simulation ${options.simName} (speed ${options.speed}),`,
  );
  out(
    `against the embedded API double at ${apiUrl}; mutate-create at ${urls["mutate-create"]}, reschedule-delete at ${urls["reschedule-delete"]}.`,
  );
  const others = otherObjects(trace);
  if (others.length > 0) {
    // Only bare pods are replayed here: workloads would need a controller manager, which the double lacks.
    out(`Not replayed here (no controllers in the API double): ${others.join(", ")}.`);
  }
}

interface PodRef {
  namespace: string;
  name: string;
}

/** Step 1: the driver applies the pods; the API double sends each CREATE to mutate-create. */
async function createPods(
  api: FakeApiServer,
  pods: KubeObject[],
  simName: string,
  root: OwnerReference,
): Promise<PodRef[]> {
  const created: PodRef[] = [];
  for (const pod of pods) {
    const virtual = buildVirtualPod(pod, simName, root, VIRTUAL_PREFIX);
    const namespace = virtual.metadata?.namespace ?? "";
    const res = await api.request("POST", `/api/v1/namespaces/${namespace}/pods`, virtual, {
      user: SIMKUBE_DRIVER_USER,
    });
    if (res.status !== 201)
      throw new Error(`creating ${namespace}/${virtual.metadata?.name} failed: ${JSON.stringify(res.body)}`);
    created.push({ namespace, name: virtual.metadata?.name ?? "" });
  }
  return created;
}

/** KWOK's status write to Running, which mutate-create answers with the completion time. */
async function kwokMarksRunning(api: FakeApiServer, { namespace, name }: PodRef): Promise<void> {
  await api.request(
    "PATCH",
    `/api/v1/namespaces/${namespace}/pods/${name}/status`,
    { status: { phase: "Running" } },
    {
      contentType: "application/merge-patch+json",
      user: KWOK_USER,
    },
  );
}

/** Step 2: KWOK marks the pods Running; counts and prints what the functions made of them. */
async function runPods(
  api: FakeApiServer,
  created: PodRef[],
  out: (line: string) => void,
): Promise<{ mutated: number; completed: number }> {
  let mutated = 0;
  let completed = 0;
  for (const pod of created) await kwokMarksRunning(api, pod);
  const table: string[][] = [["pod", "nodeSelector", "spec hash", "seq", "completes at"]];
  for (const { namespace, name } of created) {
    const stored = api.store.get<PodView>({ kind: "Pod", namespace, name });
    const annotations = stored?.metadata?.annotations ?? {};
    if (stored?.spec?.nodeSelector?.type === "virtual") mutated += 1;
    if (annotations[KWOK_STAGE_COMPLETE_TIMESTAMP_KEY]) completed += 1;
    table.push(describePod(stored, namespace, name));
  }
  out("");
  printTable(table, out);
  return { mutated, completed };
}

/** The taint manager's eviction: DisruptionTarget on the status, then its DELETE; KWOK finishes it. */
async function taintManagerEvicts(api: FakeApiServer, victim: PodRef): Promise<void> {
  const podPath = `/api/v1/namespaces/${victim.namespace}/pods/${victim.name}`;
  await api.request(
    "PATCH",
    `${podPath}/status`,
    {
      status: {
        conditions: [
          {
            type: "DisruptionTarget",
            status: "True",
            reason: "DeletionByTaintManager",
            message: "Taint manager: deleting due to NoExecute taint",
          },
        ],
      },
    },
    { contentType: "application/merge-patch+json", user: TAINT_MANAGER_USER },
  );
  await api.request("DELETE", podPath, undefined, { user: TAINT_MANAGER_USER });
  await api.finishPodTerminations({ namespace: victim.namespace, user: KWOK_USER });
}

/** Step 3: a node goes NotReady; the taint manager evicts one pod and reschedule-delete clones it. */
async function interruptOne(
  api: FakeApiServer,
  victim: PodRef | undefined,
  settleClones: () => Promise<boolean>,
  out: (line: string) => void,
): Promise<number> {
  if (!victim) return 0;
  const before = api.store.list("Pod").length;
  await taintManagerEvicts(api, victim);
  // The clone is made once the pod shows its deletion, after the answer: wait for that decision.
  await settleClones();
  const cloneNames = api.store
    .list("Pod", victim.namespace)
    .map((p) => p.metadata?.name ?? "")
    .filter((name) => name.startsWith(`${victim.name}-clone-`));
  // KWOK runs the clone; it finds the original's lifecycle through static.simkube.io/original-owner.
  for (const name of cloneNames) await kwokMarksRunning(api, { namespace: victim.namespace, name });
  const clones = cloneNames.map(
    (name) => api.store.get({ kind: "Pod", namespace: victim.namespace, name }) ?? {},
  );
  out("");
  out(
    `Interrupted ${victim.namespace}/${victim.name} (taint manager): ${clones.length} clone(s); pods ${before} -> ${api.store.list("Pod").length}.`,
  );
  if (clones.length > 0) {
    printTable(
      clones.map((c) => describePod(c as PodView, victim.namespace, c.metadata?.name ?? "")),
      out,
    );
  }
  return clones.length;
}

/** Step 4: the namespace controller deletes everything; no pod may be cloned. */
async function tearDown(
  api: FakeApiServer,
  namespaces: string[],
  out: (line: string) => void,
): Promise<{ teardownReviews: number; clonesOnTeardown: number }> {
  const podsBeforeTeardown = new Set(api.store.list("Pod").map((p) => p.metadata?.uid));
  const reviewsBeforeTeardown = api.admissions.length;
  for (const namespace of namespaces) {
    await api.terminateNamespace(namespace);
    await api.finishPodTerminations({ namespace, user: KWOK_USER });
  }
  const clonesOnTeardown = api.store
    .list("Pod")
    .filter((p) => !podsBeforeTeardown.has(p.metadata?.uid)).length;
  const teardownReviews = api.admissions
    .slice(reviewsBeforeTeardown)
    .filter((call) => call.webhook === "reschedule-delete.simkube.io").length;
  out(`Tore down ${namespaces.join(", ")}: ${clonesOnTeardown} clone(s) created during teardown.`);
  return { teardownReviews, clonesOnTeardown };
}

function failedWebhookCalls(api: FakeApiServer): number {
  return api.admissions.filter((call) => call.error !== undefined || call.response?.allowed === false).length;
}

export async function replayLocally(options: ReplayOptions): Promise<ReplayResult> {
  const { simName, log, out } = options;
  const trace = parseTrace(options.traceBytes);
  const pods = tracedBarePods(trace);
  const namespaces = [
    ...new Set(pods.map((p) => virtualNamespace(VIRTUAL_PREFIX, p.metadata?.namespace ?? "default"))),
  ];

  const api = await startFakeApiServer({ namespaces: [FUNCTION_NAMESPACE, ...namespaces] });
  const dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-local-"));
  const servers: Server[] = [];
  try {
    const root = putSimulation(api, options, namespaces);
    const files = await writeFunctionInputs(dir, api, options.traceBytes);
    const { urls, settleClones } = await startBothFunctions(simName, files, log, servers);
    registerWebhooks(api, urls);
    announce(options, trace, pods.length, api.url, urls);

    const created = await createPods(api, pods, simName, root);
    const { mutated, completed } = await runPods(api, created, out);
    const victim = created[interruptedIndex(trace, pods)];
    const clonesOnInterruption = await interruptOne(api, victim, settleClones, out);
    const teardown = await tearDown(api, namespaces, out);
    return {
      pods: pods.length,
      mutated,
      completed,
      interruptions: victim ? 1 : 0,
      clonesOnInterruption,
      ...teardown,
      errors: failedWebhookCalls(api),
    };
  } finally {
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
}
