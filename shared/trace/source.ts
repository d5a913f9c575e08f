// Where a trace's bytes come from: a file path, a file:// URL, an http(s):// URL, or an object store as
// SimKube's driver reads them (s3://, gs://, azure:// and aliases, see shared/trace/object-location.ts). Every source
// is capped in bytes (a trace is untrusted input) and in time, files included; failures are TraceErrors naming
// the location. Each store's SDK is loaded only when a location of that store is read: the readers in
// shared/trace/sources/ are imported dynamically (the bundle builds each as its own file).

import { addAbortSignal } from "node:stream";
import { fileURLToPath } from "node:url";
import { errorMessage } from "../base/index.js";
import { readCapped } from "./capped-bytes.js";
import { TraceError } from "./error.js";
import { currentFileVersion, readRegularFile } from "./file.js";
import { describeLocation } from "./location-text.js";
import {
  type ObjectBody,
  type ObjectLocation,
  type ObjectStore,
  type ObjectStoreReader,
  objectStoreOf,
  parseObjectLocation,
} from "./object-location.js";

export interface LoadTraceOptions {
  /** The whole read: a file's open and every byte, a download or an object's request and body. Default 30 s. */
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
/**
 * Far above SimKube's example traces (at most 67 KB). The functions' memory limit is sized for one load of a
 * trace this big during a burst of reviews (knative/manifests.ts); TRACE_MAX_MIB changes it.
 */
export const DEFAULT_MAX_TRACE_BYTES = 64 * 1024 * 1024;

/** A trace's bytes, and their version when the source tells one (see readTraceIfChanged). */
export interface TraceBytes {
  bytes: Uint8Array;
  version?: string;
}

export async function readTraceBytes(location: string, limits: Limits): Promise<Uint8Array> {
  return ((await readTraceIfChanged(location, limits)) as TraceBytes).bytes;
}

/**
 * The trace's bytes, or undefined when they are still at version `known` (from an earlier read). How a
 * change is told, per source: a file by stat (device, inode, size, mtime; shared/trace/file.ts), without
 * opening it; an http(s) URL by a conditional GET (If-None-Match with its ETag, else If-Modified-Since with
 * its Last-Modified; a 304 is "unchanged"); an object by its store's version (S3 and Azure: the ETag, asked
 * with If-None-Match; GCS: the generation, from the object's metadata). A server that sends neither header
 * gives no version: such a trace is read again every time.
 */
export async function readTraceIfChanged(
  location: string,
  limits: Limits,
  known?: string,
): Promise<TraceBytes | undefined> {
  // "file:" URLs may omit the slashes (file:/tmp/t.sktrace); other schemes are recognised by "://".
  const scheme = /^file:/i.test(location)
    ? "file"
    : /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return download(location, limits, known);
  if (scheme !== undefined && objectStoreOf(scheme)) return readObject(location, limits, known);
  if (scheme !== undefined && scheme !== "file") {
    throw new TraceError(
      `unsupported trace location "${describeLocation(location)}": use a file path, a file:// URL, an ` +
        "http(s):// URL, or an s3://, gs:// or azure:// URL",
    );
  }
  return readFile(scheme === "file" ? filePathOf(location) : location, limits, known);
}

function filePathOf(url: string): string {
  try {
    return fileURLToPath(url);
  } catch (err) {
    throw new TraceError(`invalid file URL "${url}": ${errorMessage(err)}`, { cause: err });
  }
}

async function readFile(path: string, limits: Limits, known?: string): Promise<TraceBytes | undefined> {
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not read trace file ${path}: ${why}`, { cause });
  try {
    if (known !== undefined && (await currentFileVersion(path, limits.timeoutMs, fail)) === known) {
      return undefined;
    }
    return await readRegularFile(path, limits, fail);
  } catch (err) {
    if (err instanceof TraceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw fail(code === "ENOENT" ? "no such file" : errorMessage(err), err);
  }
}

async function download(url: string, limits: Limits, known?: string): Promise<TraceBytes | undefined> {
  const where = describeLocation(url);
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not download trace from ${where}: ${why}`, { cause });
  try {
    // One deadline for the whole download: headers and every byte of the body.
    const response = await fetchJudged(
      url,
      { signal: AbortSignal.timeout(limits.timeoutMs), headers: conditionalHeaders(known) },
      limits.allowRedirect,
      fail,
    );
    if (known !== undefined && response.status === 304) {
      await response.body?.cancel();
      return undefined;
    }
    const bytes = await readResponse(response, limits.maxBytes, fail);
    return { bytes, version: httpVersion(response.headers) };
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

/** A download's version: its ETag, else its Last-Modified; undefined when the server sends neither. */
function httpVersion(headers: Headers): string | undefined {
  const etag = headers.get("etag");
  if (etag) return `etag:${etag}`;
  const modified = headers.get("last-modified");
  return modified ? `modified:${modified}` : undefined;
}

/** The request headers that make a server answer 304 while the body is still at version `known`. */
function conditionalHeaders(known: string | undefined): Record<string, string> {
  if (known?.startsWith("etag:")) return { "if-none-match": known.slice("etag:".length) };
  if (known?.startsWith("modified:")) return { "if-modified-since": known.slice("modified:".length) };
  return {};
}

async function readResponse(
  response: Response,
  maxBytes: number,
  fail: (why: string) => TraceError,
): Promise<Uint8Array> {
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw fail(`HTTP ${response.status} ${response.statusText}`.trimEnd());
  }
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  if (announced > maxBytes) {
    await response.body.cancel();
    throw fail(`the server announced ${announced} bytes, over the limit of ${maxBytes} bytes`);
  }
  // Counted after decompression, so a gzip bomb stops at the limit too. A compressed body's length says
  // nothing about the bytes it becomes, so it is no size hint.
  const hint = response.headers.has("content-encoding") ? undefined : announced;
  return await readCapped(response.body, maxBytes, fail, hint);
}

/** fetch, with each redirect judged by `allow` (when given) before it is followed. */
async function fetchJudged(
  url: string,
  init: { signal: AbortSignal; headers: Record<string, string> },
  allow: ((url: string) => boolean) | undefined,
  fail: (why: string) => TraceError,
): Promise<Response> {
  if (!allow) return fetch(url, init);
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await fetch(current, { ...init, redirect: "manual" });
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
async function readObject(location: string, limits: Limits, known?: string): Promise<TraceBytes | undefined> {
  const where = parseObjectLocation(location);
  const fail = (why: string, cause?: unknown) =>
    new TraceError(`could not read trace from ${where.display}: ${why}`, { cause });
  const reader = await loadReader(where.store).catch((err: unknown) => {
    throw fail(readerLoadFailure(where.store, err), err);
  });
  // One deadline for the whole read: the SDK's request (with its retries) and every byte of the body.
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    return await readObjectBody(reader, { where, signal, known }, limits, fail);
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
  { where, signal, known }: { where: ObjectLocation; signal: AbortSignal; known: string | undefined },
  { maxBytes, timeoutMs }: Limits,
  fail: (why: string) => TraceError,
): Promise<TraceBytes | undefined> {
  // The SDKs read their credentials and endpoints from the environment themselves (their default chains);
  // the few variables the readers read on their own come from the same place.
  const opened = await untilAborted(reader.openObject(where, signal, process.env, timeoutMs, known), signal);
  if (opened === undefined) return undefined;
  const { body, length, version } = opened;
  if (length !== undefined && length > maxBytes) {
    body.destroy();
    throw fail(`the object is ${length} bytes, over the limit of ${maxBytes} bytes`);
  }
  // The deadline covers the body too: aborting destroys the stream, which ends the loop in readCapped.
  const bytes = await readCapped(addAbortSignal(signal, body), maxBytes, fail, length);
  return version === undefined ? { bytes } : { bytes, version };
}

/**
 * The object's opening, or a rejection as soon as `signal` aborts: an SDK that takes no signal (GCS's
 * metadata request) must not hold the read past the deadline. A body that comes late is destroyed.
 */
function untilAborted(
  opening: Promise<ObjectBody | undefined>,
  signal: AbortSignal,
): Promise<ObjectBody | undefined> {
  opening.then(
    (late) => {
      if (signal.aborted) late?.body.destroy();
    },
    () => {},
  );
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  return Promise.race([opening, aborted]);
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
      return import("./sources/s3.js");
    case "gcs":
      return import("./sources/gcs.js");
    case "azure":
      return import("./sources/azure.js");
  }
}
