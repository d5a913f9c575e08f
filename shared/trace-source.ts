// Where a trace's bytes come from: a file path, a file:// URL, an http(s):// URL, or an object store as
// SimKube's driver reads them (s3://, gs://, azure:// and aliases, see shared/object-location.ts). Every source
// is capped in bytes (a trace is untrusted input) and network reads in time; failures are TraceErrors naming
// the location. Each store's SDK is loaded only when a location of that store is read: the readers in
// shared/trace-sources/ are imported dynamically (the bundle builds each as its own file).

import { open } from "node:fs/promises";
import { addAbortSignal } from "node:stream";
import { fileURLToPath } from "node:url";
import { CappedBytes } from "./capped-bytes.js";
import { errorMessage } from "./json.js";
import { describeLocation } from "./location-text.js";
import {
  type ObjectLocation,
  type ObjectStore,
  type ObjectStoreReader,
  objectStoreOf,
  parseObjectLocation,
} from "./object-location.js";
import { TraceError } from "./trace-error.js";

export interface LoadTraceOptions {
  /** For http(s) downloads and object stores: the whole request, body included. Default 30 s. */
  timeoutMs?: number;
  /** Largest trace read from a file or downloaded; reading stops as soon as it is passed. Default 64 MiB. */
  maxBytes?: number;
  /**
   * Judges each redirect of an http(s) download (the absolute URL it points to); a refused one fails the read.
   * Unset: redirects are followed as fetch does.
   */
  allowRedirect?: (url: string) => boolean;
}

type Limits = Required<Omit<LoadTraceOptions, "allowRedirect">> & Pick<LoadTraceOptions, "allowRedirect">;

/** Redirects followed at most, when each is judged (fetch's own limit is 20). */
const MAX_REDIRECTS = 5;

export const DEFAULT_TRACE_TIMEOUT_MS = 30_000;
/** Far above SimKube's example traces (at most 67 KB) and what a 512 MiB function can hold decoded. */
export const DEFAULT_MAX_TRACE_BYTES = 64 * 1024 * 1024;

export async function readTraceBytes(location: string, limits: Limits): Promise<Uint8Array> {
  // "file:" URLs may omit the slashes (file:/tmp/t.sktrace); other schemes are recognised by "://".
  const scheme = /^file:/i.test(location)
    ? "file"
    : /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return download(location, limits);
  if (scheme !== undefined && objectStoreOf(scheme)) return readObject(location, limits);
  if (scheme !== undefined && scheme !== "file") {
    throw new TraceError(
      `unsupported trace location "${describeLocation(location)}": use a file path, a file:// URL, an ` +
        "http(s):// URL, or an s3://, gs:// or azure:// URL",
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
    return await readFileCapped(path, limits.maxBytes, fail);
  } catch (err) {
    if (err instanceof TraceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === "ENOENT" ? "no such file" : errorMessage(err), err);
  }
}

/**
 * Streamed with a counter rather than readFile: a FIFO or /dev/zero has no size to check. A regular file's
 * size only sizes the buffer; the count still decides.
 */
async function readFileCapped(path: string, maxBytes: number, fail: (why: string) => TraceError) {
  const file = await open(path);
  try {
    const stats = await file.stat();
    const stream = file.createReadStream({ autoClose: false });
    return await readCapped(stream, maxBytes, fail, stats.isFile() ? stats.size : undefined);
  } finally {
    await file.close();
  }
}

async function download(url: string, limits: Limits): Promise<Uint8Array> {
  const where = describeLocation(url);
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not download trace from ${where}: ${why}`, { cause });
  try {
    // One deadline for the whole download: headers and every byte of the body.
    const response = await fetchJudged(
      url,
      AbortSignal.timeout(limits.timeoutMs),
      limits.allowRedirect,
      fail,
    );
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw fail(`HTTP ${response.status} ${response.statusText}`.trimEnd());
    }
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    if (announced > limits.maxBytes) {
      await response.body.cancel();
      throw fail(`the server announced ${announced} bytes, over the limit of ${limits.maxBytes} bytes`);
    }
    // Counted after decompression, so a gzip bomb stops at the limit too. A compressed body's length says
    // nothing about the bytes it becomes, so it is no size hint.
    const hint = response.headers.has("content-encoding") ? undefined : announced;
    return await readCapped(response.body, limits.maxBytes, fail, hint);
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

/** fetch, with each redirect judged by `allow` (when given) before it is followed. */
async function fetchJudged(
  url: string,
  signal: AbortSignal,
  allow: ((url: string) => boolean) | undefined,
  fail: (why: string) => TraceError,
): Promise<Response> {
  if (!allow) return fetch(url, { signal });
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await fetch(current, { signal, redirect: "manual" });
    const target = response.headers.get("location");
    if (response.status < 300 || response.status > 399 || target === null) return response;
    await response.body?.cancel();
    if (hop === MAX_REDIRECTS) throw fail(`more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(target, current).href;
    if (!allow(next)) {
      throw fail(`redirected to ${describeLocation(next)}, outside the allowed trace locations`);
    }
    current = next;
  }
}

/** Reads an object from S3, GCS or Azure Blob Storage through that store's SDK. */
async function readObject(location: string, limits: Limits): Promise<Uint8Array> {
  const where = parseObjectLocation(location);
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not read trace from ${where.display}: ${why}`, { cause });
  const reader = await loadReader(where.store).catch((err: unknown) => {
    throw fail(readerLoadFailure(where.store, err), err);
  });
  // One deadline for the whole read: the SDK's request (with its retries) and every byte of the body.
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    return await readObjectBody(reader, where, signal, limits, fail);
  } catch (err) {
    if (err instanceof TraceError) throw err;
    if (signal.aborted) throw fail(`timed out after ${limits.timeoutMs} ms`, err);
    const why = await Promise.resolve(reader.explainError(err, where, signal, process.env)).catch(
      () => undefined,
    );
    if (signal.aborted) throw fail(`timed out after ${limits.timeoutMs} ms`, err);
    throw fail(why ?? errorMessage(err), err);
  }
}

async function readObjectBody(
  reader: ObjectStoreReader,
  where: ObjectLocation,
  signal: AbortSignal,
  { maxBytes, timeoutMs }: Limits,
  fail: (why: string) => TraceError,
): Promise<Uint8Array> {
  // The SDKs read their credentials and endpoints from the environment themselves (their default chains);
  // the few variables the readers read on their own come from the same place.
  const { body, length } = await reader.openObject(where, signal, process.env, timeoutMs);
  if (length !== undefined && length > maxBytes) {
    body.destroy();
    throw fail(`the object is ${length} bytes, over the limit of ${maxBytes} bytes`);
  }
  // The deadline covers the body too: aborting destroys the stream, which ends the loop in readCapped.
  return await readCapped(addAbortSignal(signal, body), maxBytes, fail, length);
}

/** The npm packages each object-store reader needs: optional dependencies, installed only by who reads there. */
export const STORE_PACKAGES: Readonly<Record<ObjectStore, readonly string[]>> = {
  s3: ["@aws-sdk/client-s3"],
  gcs: ["@google-cloud/storage"],
  azure: ["@azure/storage-blob", "@azure/identity"],
};

/** Why a reader did not load; an SDK left out of the install (npm ci --omit=optional) says how to add it. */
export function readerLoadFailure(store: ObjectStore, err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const packages = STORE_PACKAGES[store];
  const missing = packages.filter((p) => errorMessage(err).includes(`'${p}'`));
  if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && missing.length > 0) {
    const what = packages.length === 1 ? "an optional dependency that is" : "optional dependencies that are";
    return `the ${store} reader needs ${packages.join(" and ")}, ${what} not installed (npm install ${packages.join(" ")})`;
  }
  return `the ${store} reader could not be loaded: ${errorMessage(err)}`;
}

/** The reader of one store, imported on first use (the path stays literal so that esbuild can map it). */
function loadReader(store: ObjectStore): Promise<ObjectStoreReader> {
  switch (store) {
    case "s3":
      return import("./trace-sources/s3.js");
    case "gcs":
      return import("./trace-sources/gcs.js");
    case "azure":
      return import("./trace-sources/azure.js");
  }
}

/** Collects a byte stream, giving up (and closing the stream) as soon as it passes maxBytes. */
async function readCapped(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  fail: (why: string) => TraceError,
  sizeHint?: number,
): Promise<Uint8Array> {
  const collected = new CappedBytes(maxBytes, sizeHint);
  for await (const chunk of chunks) {
    // Leaving the loop cancels the web stream / destroys the file stream.
    if (!collected.append(chunk)) {
      const seen = collected.size + chunk.byteLength;
      throw fail(`larger than the limit of ${maxBytes} bytes (stopped after ${seen})`);
    }
  }
  return collected.bytes();
}
