// The conditions the generated chart puts around what appears only under some values: which variants (one
// value per switch) an object or a field appears in, as a Helm `if` expression. Pure.

/** One value per switch, e.g. { platform: "kind", reschedule: "on" }. */
export type Assignment = Readonly<Record<string, string>>;

/** A chart value (or a few) that changes the shape of what the builders render. */
export interface Switch {
  name: string;
  values: readonly string[];
  /** The Helm expression true when the switch has one of `values` (a pipeline, without braces). */
  helm: (values: readonly string[]) => string;
}

export type Cond =
  | { op: "true" }
  | { op: "false" }
  | { op: "is"; dim: string; values: string[] }
  | { op: "and" | "or"; args: Cond[] };

export const TRUE: Cond = { op: "true" };
const FALSE: Cond = { op: "false" };

export function evaluate(cond: Cond, a: Assignment): boolean {
  switch (cond.op) {
    case "true":
      return true;
    case "false":
      return false;
    case "is":
      return cond.values.includes(a[cond.dim] as string);
    case "and":
      return cond.args.every((c) => evaluate(c, a));
    case "or":
      return cond.args.some((c) => evaluate(c, a));
  }
}

/** The values of `dim` among `assignments`, in first-seen order. */
export function valuesOf(dim: string, assignments: readonly Assignment[]): string[] {
  return [...new Set(assignments.map((a) => a[dim] as string))];
}

function impurity(dim: string, present: Set<Assignment>, universe: readonly Assignment[]): number {
  let total = 0;
  for (const value of valuesOf(dim, universe)) {
    const group = universe.filter((a) => a[dim] === value);
    const inside = group.filter((a) => present.has(a)).length;
    total += Math.min(inside, group.length - inside);
  }
  return total;
}

export function join(op: "and" | "or", args: Cond[]): Cond {
  const flat = args.flatMap((c) => (c.op === op ? c.args : [c]));
  if (flat.length === 0) return op === "and" ? TRUE : FALSE;
  return flat.length === 1 ? (flat[0] as Cond) : { op, args: flat };
}

/**
 * A condition true on every assignment of `present` and false on the rest of `universe` (assignments in
 * neither are combinations the builders refuse: either answer will do). Splits greedily on the switch that
 * separates best, so a field that follows one value gets that value's test alone.
 */
export function conditionFor(
  present: readonly Assignment[],
  universe: readonly Assignment[],
  dims: readonly string[],
): Cond {
  if (present.length === universe.length) return TRUE;
  if (present.length === 0) return FALSE;
  const inside = new Set(present);
  const candidates = dims.filter((d) => valuesOf(d, universe).length > 1);
  const dim = candidates.reduce((best, d) =>
    impurity(d, inside, universe) < impurity(best, inside, universe) ? d : best,
  );
  const groups = new Map<string, { values: string[]; cond: Cond }>();
  for (const value of valuesOf(dim, universe)) {
    const sub = universe.filter((a) => a[dim] === value);
    const cond = conditionFor(
      sub.filter((a) => inside.has(a)),
      sub,
      dims.filter((d) => d !== dim),
    );
    const key = JSON.stringify(cond);
    const group = groups.get(key) ?? { values: [], cond };
    group.values.push(value);
    groups.set(key, group);
  }
  const all = valuesOf(dim, universe).length;
  const terms = [...groups.values()]
    .filter((g) => g.cond.op !== "false")
    .map((g) => {
      const test: Cond[] = g.values.length === all ? [] : [{ op: "is", dim, values: g.values }];
      return join("and", [...test, ...(g.cond.op === "true" ? [] : [g.cond])]);
    });
  return join("or", terms);
}

function atom(expression: string): string {
  return /\s/.test(expression) && !/^\(.*\)$/.test(expression) ? `(${expression})` : expression;
}

/** The Helm expression of `cond`. */
export function toHelm(cond: Cond, switches: ReadonlyMap<string, Switch>): string {
  switch (cond.op) {
    case "true":
      return "true";
    case "false":
      return "false";
    case "is": {
      const s = switches.get(cond.dim);
      if (!s) throw new Error(`no switch ${cond.dim}`);
      return s.helm(cond.values);
    }
    case "and":
    case "or":
      return `${cond.op} ${cond.args.map((c) => atom(toHelm(c, switches))).join(" ")}`;
  }
}
