// The chart's generated templates: for each template file, the builders rendered for every combination of
// the switches its objects depend on (the core ones together, the local ones one at a time from the
// defaults), merged object by object (merge.ts) and written as Helm templates (emit.ts). Before writing,
// every tree is checked against fresh renderings of random combinations of all switches, so a switch an
// object depends on but its file does not list fails the generation instead of the chart. Pure but for time.

import { type Assignment, conditionFor, evaluate, toHelm } from "./conditions.js";
import { emitMapBody } from "./emit.js";
import { type Entry, evaluateNode, type Json, merge, type Variant } from "./merge.js";
import { BASE, SWITCH_BY_NAME, SWITCHES } from "./switches.js";
import { renderVariant } from "./variants.js";

export interface TemplateFile {
  file: string;
  what: string;
  /** Which of the builders' objects go in this file. */
  holds: (object: KubeObject) => boolean;
  /** Switches tried in every combination. */
  core: readonly string[];
  /** Switches tried one at a time from the defaults (each changes only its own fields). */
  local: readonly string[];
  /** The objects of one combination; the builders' (variants.ts) unless a test gives its own. */
  render?: Render;
}

type Render = (a: Assignment) => Json[] | undefined;

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

const objectKey = (o: KubeObject) =>
  `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

function product(names: readonly string[]): Assignment[] {
  return names.reduce<Assignment[]>(
    (acc, name) =>
      acc.flatMap((a) => (SWITCH_BY_NAME.get(name)?.values ?? []).map((value) => ({ ...a, [name]: value }))),
    [{ ...BASE }],
  );
}

/** Every combination of the core switches, and each local switch flipped from each of those. */
export function assignmentsFor(t: Pick<TemplateFile, "core" | "local">): Assignment[] {
  const cores = product(t.core);
  const flips = t.local.flatMap((name) =>
    (SWITCH_BY_NAME.get(name)?.values ?? [])
      .filter((value) => value !== BASE[name])
      .flatMap((value) => cores.map((a) => ({ ...a, [name]: value }))),
  );
  return [...cores, ...flips];
}

type Rendered = { assign: Assignment; objects: Map<string, Json> };

/**
 * The objects of `assign`; when the CLI refuses it only for a switch the file does not list (platform
 * kubernetes needs a caBundle), with the first other value of such a switch that it accepts.
 */
function renderRescued(assign: Assignment, listed: readonly string[], render: Render): Json[] | undefined {
  const direct = render(assign);
  if (direct || listed.length === SWITCHES.length) return direct;
  for (const s of SWITCHES.filter((x) => !listed.includes(x.name)))
    for (const value of s.values.filter((v) => v !== assign[s.name])) {
      const rescued = render({ ...assign, [s.name]: value });
      if (rescued) return rescued;
    }
  return undefined;
}

function renderAll(
  assignments: readonly Assignment[],
  t: Pick<TemplateFile, "holds" | "render">,
  listed: readonly string[] = SWITCHES.map((s) => s.name),
): Rendered[] {
  return assignments.flatMap((assign) => {
    const objects = renderRescued(assign, listed, t.render ?? renderVariant);
    if (!objects) return [];
    const mine = objects.filter((o) => t.holds(o as unknown as KubeObject));
    return [{ assign, objects: new Map(mine.map((o) => [objectKey(o as unknown as KubeObject), o])) }];
  });
}

/** The file's objects as merged entries, in the order the variants first show them. */
export function mergeFile(t: Pick<TemplateFile, "holds" | "core" | "local" | "render">): Entry[] {
  const dims = [...t.core, ...t.local];
  const rendered = renderAll(assignmentsFor(t), t, dims);
  const universe = rendered.map((r) => r.assign);
  const keys = [...new Set(rendered.flatMap((r) => [...r.objects.keys()]))];
  return keys.map((key) => {
    const present: Variant[] = rendered.flatMap((r) => {
      const value = r.objects.get(key);
      return value === undefined ? [] : [{ assign: r.assign, value }];
    });
    const when = conditionFor(
      present.map((p) => p.assign),
      universe,
      dims,
    );
    return { key, when, node: merge(present, dims) };
  });
}

function randomAssignment(random: () => number): Assignment {
  return Object.fromEntries(
    SWITCHES.map((s) => [s.name, s.values[Math.floor(random() * s.values.length)] as string]),
  );
}

/** A small seeded generator: the check tries the same combinations on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** JSON with every map's keys sorted: key order means nothing in YAML. */
function canonical(value: Json | undefined): string {
  return JSON.stringify(value, (_key, v: Json) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** Throws naming the first object whose tree disagrees with a fresh rendering of a random combination. */
export function checkFile(t: TemplateFile, entries: readonly Entry[], tries: number): void {
  const random = seeded(37);
  for (let i = 0; i < tries; i++) {
    const assign = randomAssignment(random);
    const [fresh] = renderAll([assign], t);
    if (!fresh) continue;
    const fromTree = new Map(
      entries.filter((e) => evaluate(e.when, assign)).map((e) => [e.key, evaluateNode(e.node, assign)]),
    );
    const keys = new Set([...fresh.objects.keys(), ...fromTree.keys()]);
    for (const key of keys) {
      if (canonical(fresh.objects.get(key)) !== canonical(fromTree.get(key)))
        throw new Error(
          `${t.file}: ${key} differs from the builders for ${JSON.stringify(assign)}: a switch it depends on is missing from its core or local list in knative/chart/template-files.ts`,
        );
    }
  }
}

export const GENERATED_HEADER =
  "{{- /* Generated by `npm run gen:chart` from the builders (knative/*.ts): edit those, not this file (docs/deploying.md). */ -}}";

/** The prelude every generated template starts with: the checks, and the values the placeholders name. */
const PRELUDE = [
  `{{- include "simkube-fn.checkPlatform" . -}}`,
  `{{- $full := include "simkube-fn.fullname" . -}}`,
  `{{- $pathSecret := include "simkube-fn.pathSecret" . -}}`,
  `{{- $tuneCreate := include "simkube-fn.tuning" (dict "root" . "fn" "mutate-create") | fromYaml -}}`,
  `{{- $tuneDelete := include "simkube-fn.tuning" (dict "root" . "fn" "reschedule-delete") | fromYaml -}}`,
];

export function emitFile(t: TemplateFile, entries: readonly Entry[]): string {
  const lines = [GENERATED_HEADER, `{{- /* ${t.what} */ -}}`, ...PRELUDE];
  for (const entry of entries) {
    const body = ["---", ...emitMapBody(entry.node, 0, SWITCH_BY_NAME)];
    lines.push(
      ...(entry.when.op === "true" ? body : [`{{- if ${toHelmOf(entry)} }}`, ...body, "{{- end }}"]),
    );
  }
  return `${lines.join("\n")}\n`;
}

function toHelmOf(entry: Entry): string {
  return toHelm(entry.when, SWITCH_BY_NAME);
}
