// Where a trace's bytes come from: a file path, a file:// URL or an http(s):// URL. Every source is capped
// in bytes (a trace is untrusted input) and downloads in time; failures are TraceErrors naming the location.

import { createReadStream } from "node:fs";
import { fileURLToPath } from "node:url";
import { errorMessage } from "./json.js";
import { TraceError } from "./trace-error.js";

export interface LoadTraceOptions {
  /** For http(s) downloads: the whole request, body included. Default 30 s. */
  timeoutMs?: number;
  /** Largest trace read from a file or downloaded; reading stops as soon as it is passed. Default 64 MiB. */
  maxBytes?: number;
}

export const DEFAULT_TRACE_TIMEOUT_MS = 30_000;
/** Far above SimKube's example traces (at most 67 KB) and what a 512 MiB function can hold decoded. */
export const DEFAULT_MAX_TRACE_BYTES = 64 * 1024 * 1024;

export async function readTraceBytes(
  location: string,
  limits: Required<LoadTraceOptions>,
): Promise<Uint8Array> {
  // "file:" URLs may omit the slashes (file:/tmp/t.sktrace); other schemes are recognised by "://".
  const scheme = /^file:/i.test(location)
    ? "file"
    : /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return download(location, limits);
  if (scheme !== undefined && scheme !== "file") {
    throw new TraceError(
      `unsupported trace location "${describeLocation(location)}": use a file path, a file:// URL or an ` +
        "http(s):// URL",
    );
  }
  let path = location;
  if (scheme === "file") {
    try {
      path = fileURLToPath(location);
    } catch (err) {
      throw new TraceError(`invalid file URL "${location}": ${errorMessage(err)}`, { cause: err });
    }
  }
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not read trace file ${path}: ${why}`, { cause });
  try {
    // Streamed with a counter rather than stat + readFile: a FIFO or /dev/zero has no size to check.
    return await readCapped(createReadStream(path), limits.maxBytes, fail);
  } catch (err) {
    if (err instanceof TraceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === "ENOENT" ? "no such file" : errorMessage(err), err);
  }
}

async function download(url: string, limits: Required<LoadTraceOptions>): Promise<Uint8Array> {
  const where = describeLocation(url);
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not download trace from ${where}: ${why}`, { cause });
  try {
    // One deadline for the whole download: headers and every byte of the body.
    const response = await fetch(url, { signal: AbortSignal.timeout(limits.timeoutMs) });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw fail(`HTTP ${response.status} ${response.statusText}`.trimEnd());
    }
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (announced > limits.maxBytes) {
      await response.body.cancel();
      throw fail(`the server announced ${announced} bytes, over the limit of ${limits.maxBytes} bytes`);
    }
    // Counted after decompression, so a gzip bomb stops at the limit too.
    return await readCapped(response.body, limits.maxBytes, fail);
  } catch (err) {
    if (err instanceof TraceError) throw err;
    const name = (err as { name?: string }).name;
    const why =
      name === "TimeoutError"
        ? `timed out after ${limits.timeoutMs} ms`
        : errorMessage((err as Error).cause ?? err);
    throw fail(why, err);
  }
}

/** Collects a byte stream, giving up (and closing the stream) as soon as it passes maxBytes. */
async function readCapped(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  fail: (why: string) => TraceError,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    // Leaving the loop cancels the web stream / destroys the file stream.
    if (total > maxBytes) throw fail(`larger than the limit of ${maxBytes} bytes (stopped after ${total})`);
    parts.push(chunk);
  }
  return Buffer.concat(parts, total);
}

// Signed URLs carry credentials in the query string; keep them out of errors and logs.
export function describeLocation(location: string): string {
  try {
    const url = new URL(location);
    if (url.protocol !== "http:" && url.protocol !== "https:") return location;
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return location;
  }
}
