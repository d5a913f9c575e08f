// A scenario file (examples/scenario.yaml) to a Trace: test traces written by hand, which SimKube lacks. Pure.
//
// The scenario names bare pods and Deployments with their times in seconds after `start`; the trace gets what
// SimKube's tracer would have recorded for them: an event per creation time with the objects applied, a
// deletion event for an interrupted pod, every object in the index (hash of its spec, as the tracer computes),
// and the pods' lifecycles under their owner (a bare pod is its own owner) and pod spec hash.

import { parse as parseYaml } from "yaml";
import { hashJson, podSpecHash } from "../../../shared/hash/index.js";
import type { KubeObject } from "../../../shared/kube/index.js";
import {
  CURRENT_TRACE_FORMAT_VERSION,
  lifecycleKey,
  type PodLifecycle,
  type Trace,
  type TraceEvent,
  type TracerConfig,
} from "../../../shared/trace/index.js";
import { ScenarioError, ScenarioReader } from "./scenario-reader.js";

export { ScenarioError };

const POD_GVK = "v1.Pod";
const DEPLOYMENT_GVK = "apps/v1.Deployment";

// What the tracer is told to track for these kinds (as in SimKube's example traces).
const TRACER_CONFIG: TracerConfig = {
  trackedObjects: {
    [POD_GVK]: { podSpecTemplatePaths: [""], trackLifecycle: true, skipOwned: true },
    [DEPLOYMENT_GVK]: { podSpecTemplatePaths: ["/spec/template"], trackLifecycle: true, skipOwned: false },
  },
};

/** One traced object: when it was applied, when deleted (if it was), and its pods' lifecycles. */
interface TracedObject {
  gvk: string;
  object: KubeObject;
  appliedAt: number;
  deletedAt?: number;
  podHash: string;
  lifecycles: PodLifecycle[];
}

/** Parses a scenario (YAML or JSON text) into a version-2 trace. `source` names the file in errors. */
export function scenarioToTrace(text: string, source: string): Trace {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ScenarioError(`${source}: not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  const reader = new ScenarioReader(source);
  const top = reader.object(raw, "", ["start", "pods", "deployments"]);
  const start = reader.timestamp(top.start, "start");
  const objects = [
    ...reader.list(top.pods, "pods").map((p, i) => barePod(reader, p, `pods[${i}]`, start)),
    ...reader
      .list(top.deployments, "deployments")
      .map((d, i) => deployment(reader, d, `deployments[${i}]`, start)),
  ];
  return {
    version: CURRENT_TRACE_FORMAT_VERSION,
    config: structuredClone(TRACER_CONFIG),
    events: events(objects),
    index: index(reader, objects),
    podLifecycles: podLifecycles(objects),
  };
}

const POD_KEYS = [
  "name",
  "namespace",
  "image",
  "labels",
  "spec",
  "created",
  "started",
  "finished",
  "interrupted",
];

function barePod(reader: ScenarioReader, raw: unknown, path: string, start: number): TracedObject {
  const value = reader.object(raw, path, POD_KEYS);
  const meta = metadata(reader, value, path);
  const created = reader.integer(value.created, `${path}.created`, 0);
  const started = reader.integer(value.started, `${path}.started`, created);
  const finished = reader.optionalInteger(value.finished, `${path}.finished`);
  const interrupted = reader.optionalInteger(value.interrupted, `${path}.interrupted`);
  if (started < created) throw reader.error(`${path}.started`, "must not be before created");
  if (finished !== undefined && interrupted !== undefined) {
    throw reader.error(path, "a pod is either finished or interrupted, not both");
  }
  const end = finished ?? interrupted;
  if (end !== undefined && end < started) throw reader.error(path, "must not end before it started");
  const object: KubeObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: meta,
    spec: podSpec(reader, value, path),
  };
  return {
    gvk: POD_GVK,
    object,
    appliedAt: start + created,
    ...(interrupted !== undefined ? { deletedAt: start + interrupted } : {}),
    podHash: podSpecHash({ spec: object.spec }),
    lifecycles: [lifecycle(start, started, end)],
  };
}

const DEPLOYMENT_KEYS = ["name", "namespace", "image", "labels", "spec", "replicas", "created", "pods"];

function deployment(reader: ScenarioReader, raw: unknown, path: string, start: number): TracedObject {
  const value = reader.object(raw, path, DEPLOYMENT_KEYS);
  const meta = metadata(reader, value, path);
  const created = reader.integer(value.created, `${path}.created`, 0);
  const replicas = reader.integer(value.replicas, `${path}.replicas`, 1, 1);
  const selector = { app: meta.name };
  const template = {
    metadata: { labels: { ...meta.labels, ...selector } },
    spec: podSpec(reader, value, path),
  };
  const lifecycles = reader.list(value.pods, `${path}.pods`).map((p, i) => {
    const at = `${path}.pods[${i}]`;
    const entry = reader.object(p, at, ["started", "finished"]);
    const started = reader.integer(entry.started, `${at}.started`, created);
    const finished = reader.optionalInteger(entry.finished, `${at}.finished`);
    if (started < created) throw reader.error(`${at}.started`, "must not be before the Deployment's created");
    if (finished !== undefined && finished < started)
      throw reader.error(at, "must not end before it started");
    return lifecycle(start, started, finished);
  });
  return {
    gvk: DEPLOYMENT_GVK,
    object: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta,
      spec: { replicas, selector: { matchLabels: selector }, template },
    },
    appliedAt: start + created,
    // Pods of a Deployment get the template's spec: its hash keys their lifecycles.
    podHash: podSpecHash(template),
    lifecycles,
  };
}

function metadata(reader: ScenarioReader, value: Record<string, unknown>, path: string) {
  const name = reader.name(value.name, `${path}.name`);
  const namespace =
    value.namespace === undefined ? "default" : reader.name(value.namespace, `${path}.namespace`);
  const labels = value.labels === undefined ? undefined : reader.labels(value.labels, `${path}.labels`);
  return { name, namespace, ...(labels ? { labels } : {}) };
}

/** `spec:` as written, or one container running `image`. */
function podSpec(
  reader: ScenarioReader,
  value: Record<string, unknown>,
  path: string,
): Record<string, unknown> {
  if (value.spec !== undefined) {
    if (value.image !== undefined) throw reader.error(path, "give either image or spec, not both");
    return reader.object(value.spec, `${path}.spec`);
  }
  const image = reader.text(value.image, `${path}.image`);
  return { containers: [{ name: "main", image }] };
}

function lifecycle(start: number, started: number, end: number | undefined): PodLifecycle {
  return end === undefined
    ? { kind: "Running", start: start + started }
    : { kind: "Finished", start: start + started, end: start + end };
}

/** One event per distinct time, in time order, objects in scenario order (as the tracer appends them). */
function events(objects: TracedObject[]): TraceEvent[] {
  const byTs = new Map<number, TraceEvent>();
  const at = (ts: number): TraceEvent => {
    let event = byTs.get(ts);
    if (!event) {
      event = { ts, appliedObjs: [], deletedObjs: [] };
      byTs.set(ts, event);
    }
    return event;
  };
  for (const o of objects) at(o.appliedAt).appliedObjs.push(o.object);
  for (const o of objects) if (o.deletedAt !== undefined) at(o.deletedAt).deletedObjs.push(o.object);
  return [...byTs.values()].sort((a, b) => a.ts - b.ts);
}

function index(reader: ScenarioReader, objects: TracedObject[]): Trace["index"] {
  const result = new Map<string, Map<string, string>>();
  for (const o of objects) {
    const nsName = `${o.object.metadata?.namespace}/${o.object.metadata?.name}`;
    const names = result.get(o.gvk) ?? new Map<string, string>();
    if (names.has(nsName)) throw reader.error("", `${o.gvk} ${nsName} appears twice`);
    names.set(nsName, hashJson(o.object.spec));
    result.set(o.gvk, names);
  }
  return result;
}

function podLifecycles(objects: TracedObject[]): Trace["podLifecycles"] {
  const result: Trace["podLifecycles"] = new Map();
  for (const o of objects) {
    if (o.lifecycles.length === 0) continue;
    const nsName = `${o.object.metadata?.namespace}/${o.object.metadata?.name}`;
    result.set(lifecycleKey(o.gvk, nsName), new Map([[o.podHash, o.lifecycles]]));
  }
  return result;
}
