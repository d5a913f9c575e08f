// Asserting that reading a trace fails with a TraceError whose message matches: a RegExp matches, a string
// must equal the message. Each returns the message so that a test can assert more about it.

import assert from "node:assert/strict";
import { TraceError } from "../../shared/trace/error.js";

function checkTraceError(err: unknown, expected: RegExp | string, label?: string): string {
  assert.ok(err instanceof TraceError, `expected a TraceError, got ${String(err)}`);
  if (typeof expected === "string") assert.equal(err.message, expected, label);
  else assert.match(err.message, expected, label);
  return err.message;
}

/** `fn` throws a TraceError whose message matches `expected`. */
export function assertTraceError(fn: () => unknown, expected: RegExp | string, label?: string): string {
  let message = "";
  assert.throws(fn, (err: unknown) => {
    message = checkTraceError(err, expected, label);
    return true;
  });
  return message;
}

/** `promise` rejects with a TraceError whose message matches `expected`. */
export async function rejectsWithTraceError(
  promise: Promise<unknown>,
  expected: RegExp | string,
  label?: string,
): Promise<string> {
  let message = "";
  await assert.rejects(promise, (err: unknown) => {
    message = checkTraceError(err, expected, label);
    return true;
  });
  return message;
}
