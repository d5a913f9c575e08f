// metav1.Status errors, spelled as kube-apiserver spells them (k8s.io/apimachinery pkg/api/errors/errors.go),
// so a client's error handling sees what a real server sends.

import type { JsonObject } from "../../shared/base/index.js";
import type { ResourceInfo } from "./types.js";

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: JsonObject;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: JsonObject;
  code: number;
}

/** A request that fails with a Status; the HTTP layer sends its body. */
export class ApiError extends Error {
  constructor(readonly body: StatusBody) {
    super(body.message ?? "");
  }
}

export interface Cause {
  reason: string;
  message: string;
  field: string;
}

export const MODIFIED =
  "the object has been modified; please apply your changes to the latest version and try again";

export function failure(
  code: number,
  reason: string | undefined,
  message: string,
  details?: JsonObject,
): ApiError {
  const body: StatusBody = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    code,
  };
  if (reason) body.reason = reason;
  if (details) body.details = details;
  return new ApiError(body);
}

/** "pods", or "deployments.apps" for a named group, as the apiserver spells a GroupResource. */
export function qualified(res: ResourceInfo): string {
  return res.group ? `${res.plural}.${res.group}` : res.plural;
}

export function detailsOf(res: ResourceInfo, name: string, kind = res.plural): JsonObject {
  const details: JsonObject = { name };
  if (res.group) details.group = res.group;
  details.kind = kind;
  return details;
}

export function methodNotAllowed(): ApiError {
  return failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

export function notFound(res: ResourceInfo, name: string): ApiError {
  return failure(404, "NotFound", `${qualified(res)} "${name}" not found`, detailsOf(res, name));
}

export function pathNotFound(): ApiError {
  return failure(404, "NotFound", "the server could not find the requested resource", {});
}

export function alreadyExists(res: ResourceInfo, name: string): ApiError {
  return failure(409, "AlreadyExists", `${qualified(res)} "${name}" already exists`, detailsOf(res, name));
}

export function conflict(res: ResourceInfo, name: string, why: string): ApiError {
  return failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(res)} "${name}": ${why}`,
    detailsOf(res, name),
  );
}

export function invalid(res: ResourceInfo, name: string, causes: Cause[]): ApiError {
  const parts = causes.map((c) => `${c.field}: ${c.message}`);
  const list = parts.length === 1 ? parts[0] : `[${parts.join(", ")}]`;
  return failure(422, "Invalid", `${res.kind} "${name}" is invalid: ${list}`, {
    ...detailsOf(res, name, res.kind),
    causes,
  });
}

export function badRequest(message: string): ApiError {
  return failure(400, "BadRequest", message);
}

export function internalError(message: string): ApiError {
  return failure(500, "InternalError", `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** The NamespaceLifecycle admission plugin's answer to a create in a Terminating namespace. */
export function namespaceTerminating(res: ResourceInfo, name: string, namespace: string): ApiError {
  return failure(
    403,
    "Forbidden",
    `${qualified(res)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    {
      ...detailsOf(res, name),
      causes: [
        {
          reason: "NamespaceTerminating",
          message: `namespace ${namespace} is being terminated`,
          field: "metadata.namespace",
        },
      ],
    },
  );
}

/** A DELETE or write whose precondition (uid, resourceVersion) does not hold. */
export function preconditionFailed(
  res: ResourceInfo,
  name: string,
  field: "UID" | "ResourceVersion",
  wanted: unknown,
  actual: unknown,
): ApiError {
  return conflict(
    res,
    name,
    `Precondition failed: ${field} in precondition: ${String(wanted)}, ${field} in object meta: ${String(actual)}`,
  );
}
