// An in-memory kube-apiserver double on node:http (127.0.0.1, port 0): the embedded local default `replay` runs
// against, and what the integration tests use. Discovery,
// CRUD with real metav1.Status errors, resourceVersion preconditions, two-phase pod deletion, namespace
// lifecycle, selectors, fault injection, and (optionally) mutating admission webhooks called with real
// AdmissionReview v1 bodies. What it does not do is listed at the end of this file.
//
// Behaviour follows kube-apiserver (k8s.io/apiserver pkg/endpoints/handlers/create.go,
// pkg/registry/generic/registry/store.go, pkg/registry/rest/delete.go, and
// pkg/admission/plugin/webhook/mutating/dispatcher.go): the order of a
// create is namespace lifecycle -> defaulting -> mutating webhooks -> name generation -> validation (422) ->
// storage (409 AlreadyExists), as in the real request path.
//
// This module starts the server and is the one to import. The parts: store.ts (objects and resourceVersions),
// resources.ts and discovery.ts (the kinds served), routing.ts (URL -> handler), reads.ts, writes.ts (create,
// update, patch), deletion.ts (DeleteOptions, graceful pod deletes, finalizers, DeleteCollection),
// storage-retry.ts (admission inside the storage retry loop), admission.ts (calls the webhooks), status.ts
// (metav1.Status errors), http.ts (users, faults, the log); pods.ts, names.ts, selectors.ts, objects.ts and
// request-body.ts are the pure pieces they share.
//
// Where it differs from a real kube-apiserver, as measured: the same deletion paths run on both and the
// DELETE reviews are compared (test/cluster/real-cluster.test.ts, test/support/cluster/double-scenarios.ts).
// - It never reviews a step twice. The real server sometimes sends one phase's review twice in a row: it
//   re-runs delete admission when the update or the storage delete retries (a conflict, or a stale
//   watch-cache copy). The functions must be idempotent either way, so the double keeps one call.
// - It ignores webhook matchConditions, so it sends the driver's and the teardown controllers' first-phase
//   DELETE reviews, and the final-phase ones of undisrupted pods, that the real server's
//   "not-driver-deletes", "not-teardown-controller-deletes" and "final-phase-only-when-disrupted"
//   conditions filter out. reschedule-delete judges those reviews itself, so the extra reviews exercise that
//   judgement instead of hiding it.
// - It has no eviction subresource, and no taint manager, garbage collector or pod GC: those controllers
//   live in kube-controller-manager, not the API server. Tests play their part by sending the requests
//   those controllers send, with their users (test/support/cluster/double-scenarios.ts).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { isRecord, type JsonObject, NAMESPACE_CONTROLLER_USER } from "../../shared/base/index.js";
import { AdmissionCaller } from "./admission.js";
import type { Backend } from "./backend.js";
import { FaultQueue, type Front, requestListener } from "./http.js";
import { str } from "./objects.js";
import { basePathOf, ResourceRegistry } from "./resources.js";
import { ObjectStore } from "./store.js";
import type {
  AdmissionCall,
  FakeApiServer,
  FakeApiServerOptions,
  FakeStore,
  FakeWebhook,
  Fault,
  RawRequestOptions,
  RequestRecord,
  ResourceInfo,
} from "./types.js";

export { DEFAULT_USER } from "./http.js";
export { BUILTIN_RESOURCES } from "./resources.js";
export type {
  AdmissionCall,
  FakeApiServer,
  FakeApiServerOptions,
  FakeStore,
  FakeWebhook,
  Fault,
  ObjectKey,
  RawRequestOptions,
  RequestRecord,
  ResourceInfo,
} from "./types.js";

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** What the HTTP front, the admission caller and the handle share while the server runs. */
interface Shared {
  requests: RequestRecord[];
  admissions: AdmissionCall[];
  faults: FaultQueue;
  webhooks: FakeWebhook[];
  latencyMs: number;
  connections: number;
}

/** The running double: its state for tests to read, and the cluster actors tests play through it. */
class RunningFakeApiServer implements FakeApiServer {
  readonly url: string;
  readonly store: FakeStore;
  readonly requests: RequestRecord[];
  readonly admissions: AdmissionCall[];
  private closed = false;

  constructor(
    private readonly backend: Backend,
    private readonly shared: Shared,
    private readonly server: http.Server,
    port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.store = backend.store.facade();
    this.requests = shared.requests;
    this.admissions = shared.admissions;
  }

  get webhooks(): FakeWebhook[] {
    return this.shared.webhooks;
  }

  set webhooks(value: FakeWebhook[]) {
    this.shared.webhooks = value;
  }

  get connections(): number {
    return this.shared.connections;
  }

  count(method: string, path?: RegExp): number {
    const m = method.toUpperCase();
    return this.requests.filter((r) => (m === "*" || r.method === m) && (!path || path.test(r.path))).length;
  }

  failNext(fault: Fault): void {
    this.shared.faults.push(fault);
  }

  setLatency(ms: number): void {
    this.shared.latencyMs = ms;
  }

  registerKind = (resource: ResourceInfo): void => {
    this.backend.kinds.register(resource);
  };

  finalizeNamespace(name: string): void {
    this.backend.store.finalizeNamespace(name);
  }

  async terminateNamespace(
    name: string,
    opts: { user?: string; controllerUser?: string } = {},
  ): Promise<void> {
    const deleted = await this.request(
      "DELETE",
      `/api/v1/namespaces/${name}`,
      undefined,
      withUser(opts.user),
    );
    if (deleted.status !== 200)
      throw new Error(`fake-apiserver: deleting namespace ${name}: ${deleted.status}`);
    const controller = opts.controllerUser ?? NAMESPACE_CONTROLLER_USER;
    const { kinds, store } = this.backend;
    for (const res of kinds.all) {
      if (!res.namespaced || store.list(res, name).length === 0) continue;
      await this.request(
        "DELETE",
        `${basePathOf(res)}/namespaces/${name}/${res.plural}`,
        { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background" },
        { user: controller },
      );
    }
  }

  async finishPodTerminations(opts: { namespace?: string; user?: string } = {}): Promise<number> {
    let finished = 0;
    for (const pod of this.backend.store.list(this.backend.kinds.pods(), opts.namespace)) {
      const meta = pod.metadata;
      if (!meta?.deletionTimestamp || !meta.name || !meta.namespace) continue;
      const nodeName = isRecord(pod.spec) ? str(pod.spec.nodeName) : undefined;
      const body: JsonObject = { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0 };
      if (!opts.user) body.preconditions = { uid: meta.uid };
      const user = opts.user ?? `system:node:${nodeName ?? "unknown"}`;
      const path = `/api/v1/namespaces/${meta.namespace}/pods/${meta.name}`;
      const res = await this.request("DELETE", path, body, { user });
      if (res.status === 200) finished += 1;
    }
    return finished;
  }

  resetLog(): void {
    this.requests.length = 0;
    this.admissions.length = 0;
  }

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    opts: RawRequestOptions = {},
  ): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { "content-type": opts.contentType ?? "application/json" };
    if (opts.user) headers["x-fake-user"] = opts.user;
    if (opts.accept) headers.accept = opts.accept;
    if (opts.groups) headers["x-fake-groups"] = opts.groups.join(",");
    const init: RequestInit = { method, headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000) };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    const res = await fetch(`${this.url}${path}`, init);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.backend.admission.abortAll("fake apiserver closing");
    const done = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await done;
  }
}

function withUser(user: string | undefined): { user?: string } {
  return user ? { user } : {};
}

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const now = options.now ?? (() => new Date());
  const kinds = new ResourceRegistry(options.resources);
  const store = new ObjectStore(kinds, now);
  for (const ns of options.namespaces ?? ["default", "kube-system"]) store.ensureNamespace(ns);
  const shared: Shared = {
    requests: [],
    admissions: [],
    faults: new FaultQueue(),
    webhooks: [...(options.webhooks ?? [])],
    latencyMs: options.latencyMs ?? 0,
    connections: 0,
  };
  const admission = new AdmissionCaller(() => shared.webhooks, shared.admissions);
  const backend: Backend = { kinds, store, admission, now };
  const front: Front = {
    options,
    requests: shared.requests,
    faults: shared.faults,
    latencyMs: () => shared.latencyMs,
  };
  const server = http.createServer(requestListener(backend, front));
  server.on("connection", () => {
    shared.connections += 1;
  });
  const port = await listen(server);
  return new RunningFakeApiServer(backend, shared, server, port);
}

// Not modelled (say so in a test before relying on it): watch, server-side apply, strategic-merge list
// semantics (merge patches replace lists), ServiceAccount/LimitRange/priority admission plugins, validating
// webhooks as a separate phase, webhook reinvocation, namespaceSelector/objectSelector/matchConditions,
// pagination (limit/continue), the eviction subresource, garbage collection of dependents, authz.
