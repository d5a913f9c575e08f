// What JSON.parse, a request body or the API hands back is `unknown` until checked: the one set of guards
// every module uses for that.

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The message of anything thrown (an Error's message, else its string form). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
