// The KubeApi port: the few API calls the functions make, as plain objects and one error type.
// Only shared/kube/client.ts implements it with @kubernetes/client-node; tests may hand in their own.

import type { V1ObjectMeta } from "@kubernetes/client-node";

export type { V1OwnerReference as OwnerReference } from "@kubernetes/client-node";

/**
 * Object metadata as it travels on the wire. client-node's V1ObjectMeta types timestamps as Date because its
 * typed models convert them; this port passes plain JSON through, where they are RFC 3339 strings.
 */
export type ObjectMeta = Omit<V1ObjectMeta, "creationTimestamp" | "deletionTimestamp"> & {
  creationTimestamp?: string;
  deletionTimestamp?: string;
};

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
}

export interface ReadOptions {
  /**
   * Only the metadata (a PartialObjectMetadata, shared/kube/partial-metadata.ts): for reads that judge owners,
   * labels, uids and deletion, never the spec. RBAC still authorizes it as `get`.
   */
  metadataOnly?: boolean;
}

export interface KubeApi {
  /** GET one object. Throws KubeError (404 NotFound, and UnknownKind for kinds the server does not serve). */
  read<T extends KubeObject = KubeObject>(ref: ObjectRef, options?: ReadOptions): Promise<T>;
  /** POST; throws KubeError 409 AlreadyExists, 403 Forbidden (e.g. terminating namespace). */
  create<T extends KubeObject = KubeObject>(object: T): Promise<T>;
  /** PUT with the object's resourceVersion as precondition; throws KubeError 409 Conflict when stale. */
  replace<T extends KubeObject = KubeObject>(object: T): Promise<T>;
}

/** metav1.StatusReason for an HTTP code, as the API server (and client-go, when a body lacks one) uses them. */
export const STATUS_REASON_BY_CODE: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** A failed API call, reduced to what callers branch on. status 0 means no HTTP answer at all. */
export class KubeError extends Error {
  override readonly name = "KubeError";
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export function kubeErrorOf(err: unknown): KubeError | undefined {
  return err instanceof KubeError ? err : undefined;
}

export function isNotFound(err: unknown): boolean {
  const e = kubeErrorOf(err);
  return e !== undefined && (e.status === 404 || e.reason === "UnknownKind");
}

export function isAlreadyExists(err: unknown): boolean {
  const e = kubeErrorOf(err);
  return e !== undefined && e.status === 409 && e.reason === "AlreadyExists";
}

export function isConflict(err: unknown): boolean {
  const e = kubeErrorOf(err);
  return e !== undefined && e.status === 409 && e.reason !== "AlreadyExists";
}

/** Worth retrying: no answer, throttled, or a server-side failure. */
export function isTransient(err: unknown): boolean {
  const e = kubeErrorOf(err);
  if (e === undefined) return false;
  return e.status === 0 || e.status === 429 || e.status >= 500;
}

export function refOf(object: KubeObject): ObjectRef {
  const ref: ObjectRef = {
    apiVersion: object.apiVersion ?? "",
    kind: object.kind ?? "",
    name: object.metadata?.name ?? "",
  };
  if (object.metadata?.namespace) ref.namespace = object.metadata.namespace;
  return ref;
}

export function describeRef(ref: ObjectRef): string {
  return `${ref.apiVersion}/${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}

/**
 * An HTTP answer outside 2xx as KubeError: the reason and message of its metav1.Status body (raw JSON text, or
 * already parsed), the reason derived from the code as client-go does when the body has none (HTML from a
 * proxy, or nothing), "Unknown" when the code has none either.
 */
export function kubeErrorOfStatus(code: number, body: unknown): KubeError {
  const status = parseStatusBody(body);
  return new KubeError(
    code,
    status.reason || STATUS_REASON_BY_CODE[code] || "Unknown",
    status.message ?? `HTTP ${code}${bodySnippet(body)}`,
  );
}

function parseStatusBody(body: unknown): { reason?: string; message?: string } {
  let value = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return {};
    }
  }
  if (typeof value !== "object" || value === null) return {};
  const { reason, message } = value as { reason?: unknown; message?: unknown };
  const out: { reason?: string; message?: string } = {};
  if (typeof reason === "string" && reason) out.reason = reason;
  if (typeof message === "string" && message) out.message = message;
  return out;
}

function bodySnippet(body: unknown): string {
  if (typeof body !== "string" || body.trim() === "") return "";
  return `: ${body.trim().slice(0, 200)}`;
}
