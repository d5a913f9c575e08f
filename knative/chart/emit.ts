// A merged tree (merge.ts) as Helm template text: block YAML, with `{{- if }}` lines around what appears
// only under some values and `{{- if }} / {{- else }}` where the variants' values differ. Pure.

import { type Cond, join, type Switch, TRUE, toHelm } from "./conditions.js";
import type { Entry, Json, Node } from "./merge.js";
import { WHOLE } from "./placeholders.js";
import { concat, hasPlaceholder, pieces, scalar } from "./scalars.js";

type Switches = ReadonlyMap<string, Switch>;

const MARKERS = new Map<string, string>(Object.values(WHOLE).map((w) => [w.marker, w.helm]));

function markerHelm(value: Json): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 ? MARKERS.get(keys[0] as string) : undefined;
}

const pad = (indent: number) => " ".repeat(indent);

function wrap(when: Cond, lines: string[], switches: Switches): string[] {
  if (when.op === "true") return lines;
  return [`{{- if ${toHelm(when, switches)} }}`, ...lines, "{{- end }}"];
}

/** When every entry is conditional: `{}` or `[]` after the key unless one of them applies (never a null). */
function emptyGuard(
  node: { entries?: readonly Entry[]; items?: readonly Entry[]; neverEmpty?: boolean },
  empty: "{}" | "[]",
  switches: Switches,
): string {
  const entries = node.entries ?? node.items ?? [];
  if (node.neverEmpty || entries.some((e) => e.when.op === "true")) return "";
  const any = toHelm(
    join(
      "or",
      entries.map((e) => e.when),
    ),
    switches,
  );
  return `{{ if not (${any}) }} ${empty}{{ end }}`;
}

function keyText(key: string): string {
  return /^[A-Za-z][A-Za-z0-9._/-]*$/.test(key) ? key : JSON.stringify(key);
}

function toNode(value: Json): Node {
  if (Array.isArray(value))
    return {
      kind: "list",
      items: value.map((v, i) => ({ key: String(i), when: TRUE, node: { kind: "leaf", value: v } })),
    };
  if (typeof value === "object" && value !== null)
    return {
      kind: "map",
      entries: Object.entries(value).map(([key, v]) => ({
        key,
        when: TRUE,
        node: { kind: "leaf", value: v },
      })),
    };
  return { kind: "leaf", value };
}

function isScalar(value: Json): value is null | boolean | number | string {
  return value === null || typeof value !== "object";
}

/** A list of strings built from values: one expression, duplicates dropped (the builders use Sets there). */
function scalarSetExpression(items: readonly Entry[], switches: Switches): string | undefined {
  const leaves = items.map((e) =>
    e.node.kind === "leaf" && typeof e.node.value === "string" ? e.node.value : undefined,
  );
  if (leaves.some((v) => v === undefined) || !leaves.some((v) => hasPlaceholder(v as string)))
    return undefined;
  const parts = items.map((e, i) => {
    const one = `list (${concat(pieces(leaves[i] as string))})`;
    return e.when.op === "true"
      ? `(${one})`
      : `(ternary (${one}) (list) (not (not (${toHelm(e.when, switches)}))))`;
  });
  return `{{ concat ${parts.join(" ")} | uniq | toJson }}`;
}

function emitList(
  prefix: string,
  node: Extract<Node, { kind: "list" }>,
  indent: number,
  switches: Switches,
): string[] {
  const items = node.items;
  if (items.length === 0) return [`${pad(indent)}${prefix} []`];
  const set = scalarSetExpression(items, switches);
  if (set) return [`${pad(indent)}${prefix} ${set}`];
  const lines = [`${pad(indent)}${prefix}${emptyGuard(node, "[]", switches)}`];
  for (const item of items) {
    const splice = item.node.kind === "leaf" ? markerHelm(item.node.value) : undefined;
    const body = splice
      ? [`{{- range $item := ${splice} }}`, `${pad(indent + 2)}- {{ toJson $item }}`, "{{- end }}"]
      : emitField("-", item.node, indent + 2, switches);
    lines.push(...wrap(item.when, body, switches));
  }
  return lines;
}

function emitSplit(
  node: Extract<Node, { kind: "split" }>,
  body: (n: Node) => string[],
  switches: Switches,
): string[] {
  const lines: string[] = [];
  node.branches.forEach((branch, i) => {
    const last = i === node.branches.length - 1;
    const test = toHelm({ op: "is", dim: node.dim, values: branch.values }, switches);
    lines.push(i === 0 ? `{{- if ${test} }}` : last ? "{{- else }}" : `{{- else if ${test} }}`);
    lines.push(...body(branch.node));
  });
  return [...lines, "{{- end }}"];
}

/**
 * A map with a marker key (a map value of the chart, e.g. metrics.labels, spread into the builders' own):
 * its entries by range, and the builders' entries only where it has no such key, as the spread does.
 */
function spliceEntries(entries: readonly Entry[], indent: number, switches: Switches): string[] | undefined {
  const splice = entries.find((e) => MARKERS.has(e.key));
  if (!splice) return undefined;
  const helm = MARKERS.get(splice.key) as string;
  const own = entries
    .filter((e) => e !== splice)
    .flatMap((e) => [
      `{{- if not (hasKey (${helm}) ${JSON.stringify(e.key)}) }}`,
      ...wrap(e.when, emitField(`${keyText(e.key)}:`, e.node, indent, switches), switches),
      "{{- end }}",
    ]);
  const range = [
    `{{- range $key, $value := ${helm} }}`,
    `${pad(indent)}{{ toJson $key }}: {{ toJson $value }}`,
    "{{- end }}",
  ];
  return [...own, ...wrap(splice.when, range, switches)];
}

/** The entries of a map-shaped node, at `indent`. */
export function emitMapBody(node: Node, indent: number, switches: Switches): string[] {
  if (node.kind === "split") return emitSplit(node, (n) => emitMapBody(n, indent, switches), switches);
  const map = node.kind === "leaf" ? toNode(node.value) : node;
  if (map.kind !== "map") throw new Error("an object that is not a map");
  const spliced = spliceEntries(map.entries, indent, switches);
  if (spliced) return spliced;
  return map.entries.flatMap((e) =>
    wrap(e.when, emitField(`${keyText(e.key)}:`, e.node, indent, switches), switches),
  );
}

/** A list item's map: its first line after the dash when that line is plain YAML. */
function dashed(lines: string[], indent: number): string[] {
  const first = lines[0];
  if (first?.startsWith(pad(indent + 2)) && !first.startsWith(pad(indent + 3)))
    return [`${pad(indent)}- ${first.slice(indent + 2)}`, ...lines.slice(1)];
  return [`${pad(indent)}-`, ...lines];
}

/** `prefix` (a key with its colon, or a list dash) and its value, at `indent`. */
export function emitField(prefix: string, node: Node, indent: number, switches: Switches): string[] {
  if (node.kind === "split") return emitSplit(node, (n) => emitField(prefix, n, indent, switches), switches);
  if (node.kind === "leaf") {
    const value = node.value;
    const whole = markerHelm(value);
    if (whole) return [`${pad(indent)}${prefix} {{ toJson (${whole}) }}`];
    if (isScalar(value)) return [`${pad(indent)}${prefix} ${scalar(value)}`];
    if (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)
      return [`${pad(indent)}${prefix} ${Array.isArray(value) ? "[]" : "{}"}`];
    return emitField(prefix, toNode(value), indent, switches);
  }
  if (node.kind === "list") return emitList(prefix, node, indent, switches);
  const body = emitMapBody(node, indent + 2, switches);
  const guard = emptyGuard(node, "{}", switches);
  if (prefix === "-") return guard ? [`${pad(indent)}-${guard}`, ...body] : dashed(body, indent);
  return [`${pad(indent)}${prefix}${guard}`, ...body];
}
