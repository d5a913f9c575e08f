// Reads a trace from S3 or an S3-compatible store (s3://bucket/key, s3a://bucket/key) with the AWS SDK.
// Loaded only when such a location is read (shared/trace/source.ts imports it dynamically; the bundle builds
// it as dist/bundle/trace-sources/s3.cjs).
//
// Credentials: the SDK's default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, web identity
// as IRSA sets it, ECS and EC2 instance metadata). Endpoint: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, which
// the SDK reads itself. Region: AWS_REGION, else AWS_DEFAULT_REGION (object_store's name), else us-east-1,
// with the SDK following S3's redirect to the bucket's own region.

import type { Readable } from "node:stream";
import { GetObjectCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import type { ObjectBody, ObjectLocation } from "../object-location.js";

let cached: { key: string; client: S3Client } | undefined;

export async function openObject(
  where: ObjectLocation,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
  _timeoutMs?: number,
  known?: string,
): Promise<ObjectBody | undefined> {
  // The version is the ETag; asked with If-None-Match, S3 answers 304 while it still matches.
  const IfNoneMatch = known?.startsWith("etag:") ? known.slice("etag:".length) : undefined;
  const command = new GetObjectCommand({ Bucket: where.bucket, Key: where.key, IfNoneMatch });
  try {
    const output = await clientFor(env).send(command, { abortSignal: signal });
    if (!output.Body) throw new Error("the response has no body");
    const version = output.ETag ? `etag:${output.ETag}` : undefined;
    return { body: output.Body as Readable, length: output.ContentLength, version };
  } catch (err) {
    if (IfNoneMatch && (err as S3ServiceException).$metadata?.httpStatusCode === 304) return undefined;
    throw err;
  }
}

/** One client per process (it keeps its connections), made again only if its settings change. */
function clientFor(env: NodeJS.ProcessEnv): S3Client {
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1";
  const custom = Boolean(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL);
  // S3-compatible stores (MinIO, Ceph, emulators) expect path-style requests; object_store sends them unless
  // AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true, and so does this reader for a custom endpoint.
  const forcePathStyle = custom && env.AWS_VIRTUAL_HOSTED_STYLE_REQUEST !== "true";
  // The SDK keeps the credentials it found; a different key id or profile is a different client.
  const key = JSON.stringify([
    region,
    forcePathStyle,
    env.AWS_ENDPOINT_URL_S3,
    env.AWS_ENDPOINT_URL,
    env.AWS_ACCESS_KEY_ID,
    env.AWS_PROFILE,
  ]);
  if (cached?.key !== key) {
    cached = { key, client: new S3Client({ region, forcePathStyle, followRegionRedirects: true }) };
  }
  return cached.client;
}

export function explainError(err: unknown): string | undefined {
  if (!(err instanceof S3ServiceException)) return undefined;
  const status = err.$metadata.httpStatusCode;
  switch (err.name) {
    case "NoSuchKey":
      return "no such object";
    case "NoSuchBucket":
      return "no such bucket";
    case "AccessDenied":
    case "InvalidAccessKeyId":
    case "SignatureDoesNotMatch":
      return `access denied (${err.name})`;
  }
  return status === 404 ? "not found" : `${err.name}${status ? ` (HTTP ${status})` : ""}: ${err.message}`;
}
