// How decoded trace values are checked and named in error messages, for every part of the trace reader.

/** i64 timestamps and the like: the exact integer within JS's safe range, else undefined. */
export function safeInteger(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  return undefined;
}

/** A decoded msgpack value as an error message names it: "the integer 3", "a map of 2", ... */
export function describe(v: unknown): string {
  if (v === null) return "nil";
  if (v === undefined) return "nothing";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === "number") return Number.isInteger(v) ? `the integer ${v}` : `the number ${v}`;
  if (typeof v === "bigint") return `the integer ${v}`;
  if (typeof v === "boolean") return `the boolean ${v}`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v instanceof Map) return `a map of ${v.size}`;
  if (v instanceof Uint8Array) return `binary data of ${v.length} bytes`;
  if (v instanceof Date) return "a msgpack timestamp";
  const type = (v as { constructor?: { name?: string } }).constructor?.name ?? typeof v;
  return `an unsupported msgpack value (${type})`;
}
