// AdmissionReview v1: parse and validate what the API server sends, and build what it expects back.
// Pure: no I/O, no clock.

import type { Operation } from "fast-json-patch";
import { isRecord } from "../base/index.js";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
const OPERATIONS: readonly string[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
}

export interface AdmissionRequest {
  uid: string;
  kind?: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo?: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionStatus {
  code?: number;
  message?: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: "JSONPatch";
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: "AdmissionReview";
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export type ParsedReview =
  | { ok: true; request: AdmissionRequest }
  | { ok: false; uid: string; message: string };

/**
 * Validates the parts of a review this project relies on. A review that fails here is answered with
 * allowed: false and the reason (see rejectReview), never with a crash.
 */
export function parseReview(body: unknown): ParsedReview {
  if (!isRecord(body)) return { ok: false, uid: "", message: "admission review must be a JSON object" };
  const request = body.request;
  const bodyUid = isRecord(request) && typeof request.uid === "string" ? request.uid : "";
  if (body.kind !== undefined && body.kind !== "AdmissionReview") {
    return { ok: false, uid: bodyUid, message: `expected kind AdmissionReview, got ${String(body.kind)}` };
  }
  if (body.apiVersion !== undefined && body.apiVersion !== ADMISSION_API_VERSION) {
    return {
      ok: false,
      uid: bodyUid,
      message: `unsupported apiVersion ${String(body.apiVersion)}; only ${ADMISSION_API_VERSION} is served`,
    };
  }
  if (!isRecord(request)) return { ok: false, uid: "", message: "admission review has no request" };
  if (typeof request.uid !== "string" || request.uid === "") {
    return { ok: false, uid: "", message: "admission request has no uid" };
  }
  if (typeof request.operation !== "string" || !OPERATIONS.includes(request.operation)) {
    return { ok: false, uid: request.uid, message: `unknown operation ${String(request.operation)}` };
  }
  if (request.userInfo !== undefined && !isRecord(request.userInfo)) {
    return { ok: false, uid: request.uid, message: "request.userInfo must be an object" };
  }
  if (
    isRecord(request.userInfo) &&
    request.userInfo.username !== undefined &&
    typeof request.userInfo.username !== "string"
  ) {
    return { ok: false, uid: request.uid, message: "request.userInfo.username must be a string" };
  }
  for (const field of ["kind", "resource"] as const) {
    if (request[field] !== undefined && !isRecord(request[field])) {
      return { ok: false, uid: request.uid, message: `request.${field} must be an object` };
    }
  }
  if (isRecord(request.kind) && request.kind.kind !== undefined && typeof request.kind.kind !== "string") {
    return { ok: false, uid: request.uid, message: "request.kind.kind must be a string" };
  }
  for (const field of ["name", "namespace", "subResource"] as const) {
    if (request[field] !== undefined && typeof request[field] !== "string") {
      return { ok: false, uid: request.uid, message: `request.${field} must be a string` };
    }
  }
  if (request.dryRun !== undefined && typeof request.dryRun !== "boolean") {
    return { ok: false, uid: request.uid, message: "request.dryRun must be a boolean" };
  }
  return { ok: true, request: request as unknown as AdmissionRequest };
}

export function toReview(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: "AdmissionReview", response };
}

export function allow(request: Pick<AdmissionRequest, "uid">, warnings?: string[]): AdmissionReview {
  const response: AdmissionResponse = { uid: request.uid, allowed: true };
  if (warnings && warnings.length > 0) response.warnings = warnings;
  return toReview(response);
}

export function deny(request: Pick<AdmissionRequest, "uid">, message: string, code = 403): AdmissionReview {
  return toReview({ uid: request.uid, allowed: false, status: { code, message } });
}

/**
 * A body that names no request uid cannot be answered with an AdmissionReview (the API server matches the
 * response's uid to its request). A handler that must never deny, such as reschedule-delete on a DELETE,
 * throws this instead of answering allowed: false; the adapters turn it into HTTP 400 with `{ message }`.
 */
export class UnanswerableReviewError extends Error {
  override readonly name = "UnanswerableReviewError";
}

/** The answer to a body that is JSON but not a usable review: denied, with the reason. */
export function rejectReview(parsed: { uid: string; message: string }): AdmissionReview {
  return toReview({ uid: parsed.uid, allowed: false, status: { code: 400, message: parsed.message } });
}

const EMPTY_PATCH_MEMBER = '"patch":""';
/** Responses whose patch withPatch wrote (base64), so reviewJson need not check it again. */
const base64Patched = new WeakSet<AdmissionResponse>();

/** Allowed with a JSONPatch; an empty op list means no patch at all (an empty patch on DELETE is fine, but none is clearer). */
export function withPatch(
  request: Pick<AdmissionRequest, "uid">,
  ops: readonly Operation[],
): AdmissionReview {
  if (ops.length === 0) return allow(request);
  const response: AdmissionResponse = {
    uid: request.uid,
    allowed: true,
    patchType: "JSONPatch",
    patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
  };
  base64Patched.add(response);
  return toReview(response);
}

/**
 * The review as JSON text, exactly as JSON.stringify writes it, for less: a patch is base64 and most of the
 * text, and JSON.stringify would scan it again for characters to escape, which base64 never has. So the
 * rest is stringified with an empty patch and the patch put in its place. Only for a patch withPatch wrote
 * (a regular expression to check any other costed as much as it saved) and an answer without a request, so
 * that the empty member is the only one in the text (inside a JSON string every quote is escaped).
 */
export function reviewJson(review: AdmissionReview): string {
  const response = review.response;
  const patch = response?.patch;
  if (!patch || review.request !== undefined || !base64Patched.has(response)) return JSON.stringify(review);
  const text = JSON.stringify({ ...review, response: { ...response, patch: "" } });
  const at = text.indexOf(EMPTY_PATCH_MEMBER) + EMPTY_PATCH_MEMBER.length - 1;
  return text.slice(0, at) + patch + text.slice(at);
}

/** Decodes a response's patch (tests and the load test read it). */
export function decodePatch(response: AdmissionResponse): Operation[] {
  if (!response.patch) return [];
  return JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) as Operation[];
}

/** What every function is, whatever fronts it: the parsed JSON body in, the review to send back out. */
export type ReviewHandler = (body: unknown) => Promise<AdmissionReview>;
