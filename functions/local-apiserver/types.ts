// The API double's public types (what tests and `replay` see) and the shapes its modules pass a request in.

import type { AdmissionRequest, AdmissionResponse, UserInfo } from "../../shared/admission/index.js";
import type { KubeObject } from "../../shared/kube/index.js";

export interface ResourceInfo {
  /** "" for the core group. */
  group: string;
  version: string;
  kind: string;
  /** URL name, e.g. "pods". */
  plural: string;
  singular: string;
  namespaced: boolean;
  /** Has a /status subresource: writes to the main resource keep the stored status. Default true. */
  statusSubresource?: boolean;
  /** A CustomResource (list items keep kind/apiVersion; PUT needs a resourceVersion). Default true for extras. */
  custom?: boolean;
  shortNames?: string[];
}

export interface FakeWebhook {
  /** Shows up in error messages, as the MutatingWebhook's name does. Default "fake-webhook-<n>.simkube.io". */
  name?: string;
  /** Where to POST the AdmissionReview (e.g. the function server under test). */
  url: string;
  operations: ("CREATE" | "UPDATE" | "DELETE" | "*")[];
  /** As in webhook rules: "pods", "pods/status", "pods/*", "*", "*\/*". */
  resources: string[];
  /** Default "Fail". */
  failurePolicy?: "Fail" | "Ignore";
  /** Default 10000 ms (the real default timeoutSeconds). */
  timeoutMs?: number;
}

export interface AdmissionCall {
  webhook: string;
  request: AdmissionRequest;
  response?: AdmissionResponse;
  /** Transport failure (no usable answer). */
  error?: string;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: Record<string, string>;
  /** 0 while in flight (or for a "hang"/"reset" fault). */
  status: number;
  user?: string;
}

export interface Fault {
  method?: string;
  path?: RegExp;
  /** HTTP status of the Status body sent back. Default 500. */
  status?: number;
  /** Default derived from the status (503 ServiceUnavailable, 429 TooManyRequests, ...). */
  reason?: string;
  message?: string;
  /** How many matching requests fail. Default 1. */
  times?: number;
  /** "status" (default): answer with a Status; "reset": destroy the socket; "hang": never answer. */
  action?: "status" | "reset" | "hang";
}

export interface FakeApiServerOptions {
  /** Extra kinds served besides the built-in ones (core, apps, batch, simkube.io). */
  resources?: ResourceInfo[];
  /** Namespaces that exist at start. Default ["default", "kube-system"]. */
  namespaces?: string[];
  webhooks?: FakeWebhook[];
  /** Delay before answering every request. */
  latencyMs?: number;
  /** Bearer token -> user. The header `x-fake-user` (and `x-fake-groups`, comma-separated) wins. */
  users?: Record<string, UserInfo>;
  /** The user when neither a header nor a known token says otherwise. */
  defaultUser?: UserInfo;
  /** Clock for creationTimestamp/deletionTimestamp. Default () => new Date(). */
  now?: () => Date;
}

export interface ObjectKey {
  /** Optional: resolved from kind when the kind is unique. */
  apiVersion?: string;
  /** Kind ("Pod") or resource name ("pods"). */
  kind: string;
  name: string;
  namespace?: string;
}

export interface FakeStore {
  /**
   * Writes an object as is (no admission, no validation), filling uid, creationTimestamp and a fresh
   * resourceVersion; creates its namespace if missing. Returns a copy of what is stored.
   */
  put<T extends KubeObject = KubeObject>(object: KubeObject): T;
  get<T extends KubeObject = KubeObject>(key: ObjectKey): T | undefined;
  /** kind: Kind or resource name; namespace omitted = all namespaces. */
  list<T extends KubeObject = KubeObject>(kind: string, namespace?: string): T[];
  /** Changes a stored object in place (no admission, no validation) and bumps its resourceVersion. */
  update<T extends KubeObject = KubeObject>(key: ObjectKey, change: (object: T) => void): T;
  /** Removes at once (no admission, no grace). */
  remove(key: ObjectKey): boolean;
  /** The current global resourceVersion. */
  resourceVersion(): string;
}

/** Options of FakeApiServer.request(). */
export interface RawRequestOptions {
  user?: string;
  groups?: string[];
  contentType?: string;
  /** The Accept header, e.g. a metadata-only read's (shared/kube/partial-metadata.ts). */
  accept?: string;
  timeoutMs?: number;
}

export interface FakeApiServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly store: FakeStore;
  readonly requests: RequestRecord[];
  /** Every AdmissionReview sent to a webhook, in order, with the answer. */
  readonly admissions: AdmissionCall[];
  /** Mutable: push or replace webhooks after start (e.g. once the function server listens). */
  webhooks: FakeWebhook[];
  /** TCP connections accepted so far (to check keep-alive). */
  readonly connections: number;
  /** Requests whose method matches (case-insensitive, "*" = any) and whose path matches. */
  count(method: string, path?: RegExp): number;
  failNext(fault: Fault): void;
  setLatency(ms: number): void;
  registerKind(resource: ResourceInfo): void;
  /** What the namespace controller ends with: the namespace and everything in it disappear. */
  finalizeNamespace(name: string): void;
  /**
   * What `kubectl delete namespace` and the namespace controller do, through the normal request path (so
   * webhooks see it): DELETE the namespace (Terminating), then a DeleteCollection per namespaced kind as
   * `system:serviceaccount:kube-system:namespace-controller` (per-item reviews with an empty name). Bound pods
   * are left terminating; finishPodTerminations() plays the kubelet/KWOK part, finalizeNamespace() the end.
   */
  terminateNamespace(name: string, options?: { user?: string; controllerUser?: string }): Promise<void>;
  /**
   * The final grace-0 DELETE of every terminating pod (optionally in one namespace), as the kubelet sends it
   * (`system:node:<nodeName>`, with a UID precondition) unless `user` is given (KWOK: no precondition).
   * Returns how many pods were finished.
   */
  finishPodTerminations(options?: { namespace?: string; user?: string }): Promise<number>;
  /** Forget requests and admissions logged so far. */
  resetLog(): void;
  /**
   * A raw call to this server (JSON in, parsed JSON out), as `user` when given (the x-fake-user header).
   * contentType defaults to application/json; use application/merge-patch+json etc. for PATCH.
   */
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    options?: RawRequestOptions,
  ): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------
// What one API request carries between the modules.

/** The resource a URL names. */
export interface Target {
  res: ResourceInfo;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** The request as the handlers see it. */
export interface Ctx {
  method: string;
  query: URLSearchParams;
  body: string;
  contentType: string;
  /** The Accept header, when sent: a read may ask for the metadata only (negotiation.ts). */
  accept?: string;
  user: UserInfo;
}

/** What goes back on the wire. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}
