// Reads a trace from Google Cloud Storage (gs://bucket/key) with Google's SDK. Loaded only when such a
// location is read (shared/trace/source.ts imports it dynamically; the bundle builds it as
// dist/bundle/trace-sources/gcs.cjs).
//
// Credentials, as SimKube's object_store reads them: GOOGLE_SERVICE_ACCOUNT (or GOOGLE_SERVICE_ACCOUNT_PATH),
// the path of a service account JSON file, or GOOGLE_SERVICE_ACCOUNT_KEY, the JSON itself; else the SDK's
// application default credentials (GOOGLE_APPLICATION_CREDENTIALS, workload identity, the metadata server).
// Endpoint: STORAGE_EMULATOR_HOST, which the SDK reads itself (and then sends no credentials).

import { Storage, type StorageOptions } from "@google-cloud/storage";
import type { ObjectBody, ObjectLocation } from "../object-location.js";

let cached: { key: string; storage: Storage } | undefined;

export async function openObject(
  where: ObjectLocation,
  _signal: AbortSignal,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  known?: string,
): Promise<ObjectBody | undefined> {
  // The version is the object's generation, from its metadata (one small request); the body is then read at
  // that generation, so bytes and version agree even if the object is replaced meanwhile. The SDK takes no
  // abort signal: the client's own timeouts (below) end a request and its retries, and the caller destroys
  // the stream at the deadline. A 404 or a denial comes out as an error.
  const bucket = storageFor(env, timeoutMs).bucket(where.bucket);
  const [metadata] = await bucket.file(where.key).getMetadata();
  const generation = metadata.generation === undefined ? undefined : String(metadata.generation);
  const version = generation === undefined ? undefined : `generation:${generation}`;
  if (version !== undefined && version === known) return undefined;
  const file = bucket.file(where.key, generation === undefined ? {} : { generation });
  const length = metadata.size === undefined ? undefined : Number(metadata.size);
  return { body: file.createReadStream(), length, version };
}

/** One client per process, made again only if its settings change. */
function storageFor(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Storage {
  const keyFile = env.GOOGLE_SERVICE_ACCOUNT || env.GOOGLE_SERVICE_ACCOUNT_PATH;
  const keyJson = env.GOOGLE_SERVICE_ACCOUNT_KEY;
  const key = JSON.stringify([keyFile, keyJson, env.STORAGE_EMULATOR_HOST, timeoutMs]);
  if (cached?.key !== key) {
    const options: StorageOptions = {
      ...credentialOptions(keyFile, keyJson),
      timeout: timeoutMs,
      retryOptions: { totalTimeout: Math.ceil(timeoutMs / 1000) },
    };
    cached = { key, storage: new Storage(options) };
  }
  return cached.storage;
}

function credentialOptions(keyFile: string | undefined, keyJson: string | undefined): StorageOptions {
  if (keyFile) return { keyFilename: keyFile };
  if (!keyJson) return {};
  try {
    return { credentials: JSON.parse(keyJson) };
  } catch {
    // Never the value itself: it is a private key.
    throw new Error("GOOGLE_SERVICE_ACCOUNT_KEY is not valid JSON");
  }
}

export async function explainError(
  err: unknown,
  where: ObjectLocation,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const { code, message } = err as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : "";
  if (code === 404) {
    // GCS says "The specified bucket does not exist." for a missing bucket; an emulator may only say
    // "Not Found", and then the bucket itself is asked for.
    if (/bucket/i.test(text)) return "no such bucket";
    return (await bucketExists(where, signal, env)) === false ? "no such bucket" : "no such object";
  }
  if (code === 401 || code === 403) return `access denied (HTTP ${code})`;
  if (typeof code === "number") return `HTTP ${code}${text ? `: ${firstLine(text)}` : ""}`;
  return undefined;
}

/** Whether the bucket exists, or undefined when that cannot be told before the deadline. */
async function bucketExists(
  where: ObjectLocation,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
): Promise<boolean | undefined> {
  const aborted = new Promise<undefined>((resolve) => {
    if (signal.aborted) resolve(undefined);
    signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
  // The client openObject made (same settings), or one made now.
  const exists = (cached?.storage ?? storageFor(env))
    .bucket(where.bucket)
    .exists()
    .then(([found]) => found)
    .catch(() => undefined);
  return await Promise.race([exists, aborted]);
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0]?.slice(0, 200) ?? "";
}
