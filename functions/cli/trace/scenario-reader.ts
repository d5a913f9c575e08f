// Typed readers for a scenario file's values: each names the file and the path of what is wrong. Pure.

/** A scenario that cannot become a trace; the message names the file, the place and the problem. */
export class ScenarioError extends Error {
  override readonly name = "ScenarioError";
}

// RFC 1123 labels and subdomains: what Kubernetes accepts as namespace and object names.
const NAME_PATTERN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export class ScenarioReader {
  constructor(private readonly source: string) {}

  error(path: string, problem: string): ScenarioError {
    return new ScenarioError(`${this.source}: ${path ? `${path}: ` : ""}${problem}`);
  }

  /** A mapping; with `keys`, any other key is a typo worth reporting rather than ignoring. */
  object(raw: unknown, path: string, keys?: readonly string[]): Record<string, unknown> {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      throw this.error(path, `expected a mapping, got ${describe(raw)}`);
    }
    const value = raw as Record<string, unknown>;
    const unknown = keys ? Object.keys(value).filter((k) => !keys.includes(k)) : [];
    if (unknown.length > 0) {
      throw this.error(path, `unknown field "${unknown[0]}" (expected one of: ${keys?.join(", ")})`);
    }
    return value;
  }

  /** A list; absent means empty. */
  list(raw: unknown, path: string): unknown[] {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) throw this.error(path, `expected a list, got ${describe(raw)}`);
    return raw;
  }

  text(raw: unknown, path: string): string {
    if (typeof raw === "string" && raw.length > 0) return raw;
    throw this.error(path, `expected a non-empty string, got ${describe(raw)}`);
  }

  name(raw: unknown, path: string): string {
    const s = this.text(raw, path);
    if (s.length <= 253 && NAME_PATTERN.test(s)) return s;
    throw this.error(path, `"${s}" is not a valid Kubernetes name (lower case letters, digits, "-" and ".")`);
  }

  labels(raw: unknown, path: string): Record<string, string> {
    const value = this.object(raw, path);
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== "string") throw this.error(`${path}.${k}`, `expected a string, got ${describe(v)}`);
    }
    return value as Record<string, string>;
  }

  /** RFC 3339 time to Unix seconds (YAML may hand it over as a string or a Date). */
  timestamp(raw: unknown, path: string): number {
    const ms = raw instanceof Date ? raw.getTime() : typeof raw === "string" ? Date.parse(raw) : Number.NaN;
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
    throw this.error(path, `expected an RFC 3339 time such as "2026-01-05T09:00:00Z", got ${describe(raw)}`);
  }

  /** A whole number >= `min`; `fallback` when absent. */
  integer(raw: unknown, path: string, fallback: number, min = 0): number {
    if (raw === undefined || raw === null) return fallback;
    if (typeof raw === "number" && Number.isSafeInteger(raw) && raw >= min) return raw;
    throw this.error(path, `expected a whole number >= ${min}, got ${describe(raw)}`);
  }

  optionalInteger(raw: unknown, path: string): number | undefined {
    return raw === undefined || raw === null ? undefined : this.integer(raw, path, 0);
  }
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "object") return "a mapping";
  return String(v);
}
