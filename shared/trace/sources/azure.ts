// Reads a trace from Azure Blob Storage (azure://container/key, az://, abfs(s)://) with Microsoft's SDK.
// Loaded only when such a location is read (shared/trace/source.ts imports it dynamically; the bundle builds
// it as dist/bundle/trace-sources/azure.cjs).
//
// As in SimKube's object_store, the URL names the container, not the account: the account is
// AZURE_STORAGE_ACCOUNT_NAME (an abfs(s)://container@account.dfs.core.windows.net URL may name it instead).
// Credentials: AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_ACCESS_KEY), the account's shared key; else
// @azure/identity's DefaultAzureCredential (workload identity, managed identity, AZURE_CLIENT_ID/SECRET...).
// Endpoint: AZURE_STORAGE_ENDPOINT (or AZURE_ENDPOINT), the blob service URL, for Azurite
// http://127.0.0.1:10000/devstoreaccount1; else https://<account>.blob.core.windows.net.

import type { Readable } from "node:stream";
import { DefaultAzureCredential } from "@azure/identity";
import { BlobServiceClient, RestError, StorageSharedKeyCredential } from "@azure/storage-blob";
import type { ObjectBody, ObjectLocation } from "../object-location.js";

let cached: { key: string; client: BlobServiceClient } | undefined;

export async function openObject(
  where: ObjectLocation,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
  _timeoutMs?: number,
  known?: string,
): Promise<ObjectBody | undefined> {
  const blob = serviceFor(where, env).getContainerClient(where.bucket).getBlobClient(where.key);
  // The version is the ETag; asked with If-None-Match, the service answers 304 while it still matches.
  const ifNoneMatch = known?.startsWith("etag:") ? known.slice("etag:".length) : undefined;
  try {
    // No retries of a broken body: the deadline is the caller's, and a partial trace is never used.
    const response = await blob.download(0, undefined, {
      abortSignal: signal,
      maxRetryRequests: 0,
      ...(ifNoneMatch ? { conditions: { ifNoneMatch } } : {}),
    });
    if (!response.readableStreamBody) throw new Error("the response has no body");
    const version = response.etag ? `etag:${response.etag}` : undefined;
    return { body: response.readableStreamBody as Readable, length: response.contentLength, version };
  } catch (err) {
    if (ifNoneMatch && err instanceof RestError && err.statusCode === 304) return undefined;
    throw err;
  }
}

/** One client per process, made again only if its settings change. */
function serviceFor(where: ObjectLocation, env: NodeJS.ProcessEnv): BlobServiceClient {
  const account = where.account ?? env.AZURE_STORAGE_ACCOUNT_NAME;
  if (!account) {
    throw new Error(
      "no Azure storage account: set AZURE_STORAGE_ACCOUNT_NAME (an azure:// URL names only the container)",
    );
  }
  const accountKey = env.AZURE_STORAGE_ACCOUNT_KEY || env.AZURE_STORAGE_ACCESS_KEY;
  const endpoint =
    env.AZURE_STORAGE_ENDPOINT || env.AZURE_ENDPOINT || `https://${account}.blob.core.windows.net`;
  const key = JSON.stringify([account, accountKey, endpoint]);
  if (cached?.key !== key) {
    const credential = accountKey
      ? new StorageSharedKeyCredential(account, accountKey)
      : new DefaultAzureCredential();
    cached = { key, client: new BlobServiceClient(endpoint, credential) };
  }
  return cached.client;
}

export function explainError(err: unknown): string | undefined {
  if (err instanceof RestError) {
    switch (err.code) {
      case "BlobNotFound":
        return "no such object";
      case "ContainerNotFound":
        return "no such container";
      case "AuthenticationFailed":
      case "AuthorizationFailure":
      case "AuthorizationPermissionMismatch":
        return `access denied (${err.code})`;
    }
    if (err.statusCode === 404) return "not found";
    if (err.statusCode) return `HTTP ${err.statusCode}${err.code ? ` ${err.code}` : ""}`;
    return undefined;
  }
  const name = (err as { name?: unknown }).name;
  if (name === "CredentialUnavailableError" || name === "AuthenticationError") {
    return `no Azure credentials: set AZURE_STORAGE_ACCOUNT_KEY or configure workload identity (${name})`;
  }
  return undefined;
}
