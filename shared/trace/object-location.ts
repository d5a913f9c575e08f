// Object-store trace locations as SimKube's driver names them (sk-core reads `spec.driver.tracePath` with the
// Rust object_store crate): s3://bucket/key, gs://bucket/key, azure://container/key and object_store's
// aliases of those schemes. Pure: parsing and naming only; the readers are shared/trace/sources/*.ts.

import type { Readable } from "node:stream";
import { TraceError } from "./error.js";
import { describeLocation } from "./location-text.js";

export type ObjectStore = "s3" | "gcs" | "azure";

/** Every scheme accepted, with the store it names. */
const STORES: Readonly<Record<string, ObjectStore>> = {
  s3: "s3",
  s3a: "s3",
  gs: "gcs",
  azure: "azure",
  az: "azure",
  abfs: "azure",
  abfss: "azure",
};

export interface ObjectLocation {
  store: ObjectStore;
  /** The bucket (S3, GCS) or container (Azure). */
  bucket: string;
  /** The object's name in the bucket, percent-decoded. */
  key: string;
  /** Azure only: the storage account named in an abfs(s)://container@account.dfs.core.windows.net URL. */
  account?: string;
  /** The location for messages: scheme, bucket and key, never user info or a query string. */
  display: string;
}

/** What a store's reader hands back: the object's bytes as a stream, and its size when the store says. */
export interface ObjectBody {
  body: Readable;
  length?: number;
  /** What tells this content from a later one (an ETag, a generation), when the store says. */
  version?: string;
}

/** The shape of each module in shared/trace/sources/ (loaded only when its scheme is used). */
export interface ObjectStoreReader {
  /**
   * Starts reading the object, or undefined when it is still at version `known` (an ObjectBody's version).
   * `signal` aborts the request and the body; it fires after `timeoutMs`, which a reader whose SDK takes no
   * signal uses to bound its own requests.
   */
  openObject(
    location: ObjectLocation,
    signal: AbortSignal,
    env: NodeJS.ProcessEnv,
    timeoutMs: number,
    known?: string,
  ): Promise<ObjectBody | undefined>;
  /**
   * A short reason for an error the store's SDK threw ("no such bucket"), or undefined when unknown. It may
   * ask the store (within `signal`) when the error alone does not say.
   */
  explainError(
    err: unknown,
    location: ObjectLocation,
    signal: AbortSignal,
    env: NodeJS.ProcessEnv,
  ): string | undefined | Promise<string | undefined>;
}

/** The store a URL scheme names (lower case, without "://"), if any. */
export function objectStoreOf(scheme: string): ObjectStore | undefined {
  return Object.hasOwn(STORES, scheme) ? STORES[scheme] : undefined;
}

/**
 * Why an object-store location's key cannot be trusted, or undefined when it can: a percent-encoded
 * separator ("%2F", "%5C"), a backslash, or a "." or ".." segment, raw or encoded. Judged on the text as
 * written, before URL parsing (which folds literal dot segments away): the key the allowlist compares must be
 * the key every store and proxy on the way reads, and an SDK that normalises its request URL (Azure's) or a
 * store that takes "a%2F..%2Fb" literally (S3) would each read something else.
 */
export function objectKeyProblem(location: string): string | undefined {
  const afterScheme = location.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const slash = afterScheme.indexOf("/");
  if (slash < 0) return undefined;
  const path = afterScheme.slice(slash + 1).replace(/[?#].*$/s, "");
  for (const segment of path.split("/")) {
    let step: string;
    try {
      step = decodeURIComponent(segment);
    } catch {
      return "the object name is not valid percent-encoding";
    }
    if (/[/\\]/.test(step) || step === "." || step === "..") {
      return "the object name holds an encoded separator or a dot segment";
    }
  }
  return undefined;
}

/** Parses an object-store URL; a TraceError says what is wrong with a bad one. */
export function parseObjectLocation(location: string): ObjectLocation {
  const bad = (why: string) =>
    new TraceError(`invalid trace location "${describeLocation(location)}": ${why}`);
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw bad("not a URL");
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const store = objectStoreOf(scheme);
  if (!store) throw bad(`unknown scheme "${scheme}"`);
  const { bucket, account } = bucketOf(url, store);
  if (!bucket) throw bad(`no ${store === "azure" ? "container" : "bucket"}`);
  const problem = objectKeyProblem(location.trim());
  if (problem) throw bad(problem);
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.replace(/^\//, ""));
  } catch {
    throw bad("the object name is not valid percent-encoding");
  }
  if (!key || key.endsWith("/")) throw bad("no object name after the bucket (expected SCHEME://BUCKET/PATH)");
  const where = account ? `${bucket}@${url.hostname}` : bucket;
  return { store, bucket, key, account, display: `${scheme}://${where}/${key}` };
}

/**
 * The bucket is the URL's host. abfs(s) alone may name the account too, as
 * abfs[s]://<container>@<account>.dfs.core.windows.net/<path> (object_store reads it the same way).
 */
export function bucketOf(url: URL, store: ObjectStore): { bucket: string; account?: string } {
  const host = decodeURIComponent(url.hostname);
  if (store === "azure" && url.username && /^abfss?:$/i.test(url.protocol)) {
    const account = /^([a-z0-9]+)\.(dfs|blob)\.core\.windows\.net$/i.exec(host)?.[1];
    return { bucket: decodeURIComponent(url.username), account };
  }
  return { bucket: host };
}
