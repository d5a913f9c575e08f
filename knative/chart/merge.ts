// One template from many renderings: the builders' output for every combination of the chart's switches,
// merged into a tree whose maps and lists keep what all variants share and mark what only some have with
// the condition under which it appears; where variants disagree on a value, a split on the switch that
// decides it. Pure.

import { type Assignment, type Cond, conditionFor, evaluate, TRUE, valuesOf } from "./conditions.js";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Variant {
  assign: Assignment;
  value: Json;
}

export interface Entry {
  key: string;
  when: Cond;
  node: Node;
}

export type Node =
  | { kind: "leaf"; value: Json }
  | { kind: "map"; entries: Entry[]; neverEmpty?: boolean }
  | { kind: "list"; items: Entry[]; neverEmpty?: boolean }
  | { kind: "split"; dim: string; branches: { values: string[]; node: Node }[] };

function isMap(value: Json): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An item's identity across variants: its name when it has one (env, containers, webhooks), else itself. */
function identity(item: Json): string {
  if (isMap(item) && typeof item.name === "string") return `name:${item.name}`;
  return JSON.stringify(item);
}

/** `a` and `b` interleaved, keeping each one's order (a longest common subsequence shared once). */
function unionOrder(a: readonly string[], b: readonly string[]): string[] {
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      (lcs[i] as number[])[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as number[])[j] as number, (lcs[i] as number[])[j + 1] as number);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(a[i++] as string);
      j++;
    } else if (
      j >= b.length ||
      (i < a.length && ((lcs[i + 1] as number[])[j] ?? 0) >= ((lcs[i] as number[])[j + 1] ?? 0))
    )
      out.push(a[i++] as string);
    else out.push(b[j++] as string);
  }
  return out;
}

/** Identities with a count, so an item repeated in one list stays two items. */
function identities(list: readonly Json[]): string[] {
  const seen = new Map<string, number>();
  return list.map((item) => {
    const id = identity(item);
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return `${id}#${n}`;
  });
}

function mergeEntries(
  keys: readonly string[],
  variants: readonly Variant[],
  pick: (v: Variant) => Map<string, Json>,
  dims: readonly string[],
): Entry[] {
  const universe = variants.map((v) => v.assign);
  const picked = variants.map(pick);
  return keys.map((key) => {
    const present = variants.flatMap((v, i) => {
      const value = (picked[i] as Map<string, Json>).get(key);
      return value === undefined ? [] : [{ assign: v.assign, value }];
    });
    const when = conditionFor(
      present.map((p) => p.assign),
      universe,
      dims,
    );
    return { key, when, node: merge(present, dims) };
  });
}

function mergeMap(variants: readonly Variant[], dims: readonly string[]): Node {
  const keys = [...new Set(variants.flatMap((v) => Object.keys(v.value as object)))];
  const pick = (v: Variant) => new Map(Object.entries(v.value as { [key: string]: Json }));
  const neverEmpty = variants.every((v) => Object.keys(v.value as object).length > 0);
  return { kind: "map", entries: mergeEntries(keys, variants, pick, dims), neverEmpty };
}

/** Lists of one length everywhere: item by item (a field that differs splits in place). */
function mergeByPosition(variants: readonly Variant[], dims: readonly string[]): Node {
  const length = ((variants[0] as Variant).value as Json[]).length;
  const items = Array.from({ length }, (_, i) => ({
    key: String(i),
    when: TRUE,
    node: merge(
      variants.map((v) => ({ assign: v.assign, value: (v.value as Json[])[i] as Json })),
      dims,
    ),
  }));
  return { kind: "list", items };
}

function mergeList(variants: readonly Variant[], dims: readonly string[]): Node {
  const length = ((variants[0] as Variant).value as Json[]).length;
  if (variants.every((v) => (v.value as Json[]).length === length)) return mergeByPosition(variants, dims);
  const ids = variants.map((v) => identities(v.value as Json[]));
  const order = ids.reduce((acc, next) => unionOrder(acc, next), [] as string[]);
  const pick = (v: Variant) => {
    const list = v.value as Json[];
    const own = identities(list);
    return new Map(own.map((id, i) => [id, list[i] as Json]));
  };
  const neverEmpty = variants.every((v) => (v.value as Json[]).length > 0);
  return { kind: "list", items: mergeEntries(order, variants, pick, dims), neverEmpty };
}

function spread(dim: string, variants: readonly Variant[]): number {
  let total = 0;
  for (const value of valuesOf(
    dim,
    variants.map((v) => v.assign),
  )) {
    const group = variants.filter((v) => v.assign[dim] === value);
    total += new Set(group.map((v) => JSON.stringify(v.value))).size - 1;
  }
  return total;
}

/** Variants that disagree on a value: branch on the switch after which the fewest values still disagree. */
function split(variants: readonly Variant[], dims: readonly string[]): Node {
  const universe = variants.map((v) => v.assign);
  const candidates = dims.filter((d) => valuesOf(d, universe).length > 1);
  if (candidates.length === 0) throw new Error("the same values rendered two different objects");
  const dim = candidates.reduce((best, d) => (spread(d, variants) < spread(best, variants) ? d : best));
  const branches: { values: string[]; node: Node }[] = [];
  for (const value of valuesOf(dim, universe)) {
    const node = merge(
      variants.filter((v) => v.assign[dim] === value),
      dims,
    );
    const same = branches.find((b) => JSON.stringify(b.node) === JSON.stringify(node));
    if (same) same.values.push(value);
    else branches.push({ values: [value], node });
  }
  return branches.length === 1 ? (branches[0] as { node: Node }).node : { kind: "split", dim, branches };
}

/** The tree of `variants` (each a rendering of one object, or of one field, under its assignment). */
export function merge(variants: readonly Variant[], dims: readonly string[]): Node {
  const first = JSON.stringify((variants[0] as Variant).value);
  if (variants.every((v) => JSON.stringify(v.value) === first))
    return { kind: "leaf", value: (variants[0] as Variant).value };
  if (variants.every((v) => isMap(v.value))) return mergeMap(variants, dims);
  if (variants.every((v) => Array.isArray(v.value))) return mergeList(variants, dims);
  return split(variants, dims);
}

function evaluateEntries(entries: readonly Entry[], a: Assignment): [string, Json][] {
  return entries.flatMap((e) => {
    if (!evaluate(e.when, a)) return [];
    return [[e.key, evaluateNode(e.node, a)] as [string, Json]];
  });
}

/** What the tree gives for one assignment: the check that the merge lost nothing. */
export function evaluateNode(node: Node, a: Assignment): Json {
  switch (node.kind) {
    case "leaf":
      return node.value;
    case "map":
      return Object.fromEntries(evaluateEntries(node.entries, a));
    case "list":
      return evaluateEntries(node.items, a).map(([, value]) => value);
    case "split": {
      const branch =
        node.branches.find((b) => b.values.includes(a[node.dim] as string)) ?? node.branches.at(-1);
      return evaluateNode((branch as { node: Node }).node, a);
    }
  }
}
