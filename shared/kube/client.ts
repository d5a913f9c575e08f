// The one adapter of the KubeApi port, and the only module that imports values from @kubernetes/client-node.
//
// Why not call KubernetesObjectApi.read/create/replace directly: in client-node 1.x those methods push every
// object through the generated typed models. For built-in kinds that (a) drops fields the model does not know
// (a newer pod field vanishes from a clone we create) and (b) turns every date-time into a Date instance, so
// read() would not return the plain JSON the port promises. We keep the library's URL building, auth and error
// type, and send/receive raw JSON, discovery included (the library's caching per apiVersion, done as raw JSON
// too; skipped for the few kinds we address ourselves, KNOWN_RESOURCES).
//
// The kinds in KNOWN_RESOURCES skip the library's request stack altogether (kube-http.ts): its per-call
// authentication and node-fetch cost more CPU than the request itself. The library still reads the kubeconfig
// and its credentials for them; any other kind, and any cluster behind a proxy-url, go through it as below.
//
// Two more things the library does not do, added here:
// - a timeout per HTTP request (an AbortSignal): the admission webhook itself has ~10 s, a hung API call
//   must fail as a KubeError(0, "ConnectionError") well before that;
// - connection reuse: KubeConfig.applySecurityAuthentication builds a fresh http(s).Agent (keepAlive off) for
//   every request, i.e. a new TCP (and TLS) connection per call. We swap it for one shared keep-alive agent
//   built from the same TLS options (proxy agents are left alone).

import http from "node:http";
import https from "node:https";
// Deep imports (the package has no "exports" map) rather than the index: the index also loads watch, exec,
// attach, port-forward, cp and their dependencies (ws, tar), which the bundle would parse on every cold start.
import { KubeConfig } from "@kubernetes/client-node/dist/config.js";
import { ApiException } from "@kubernetes/client-node/dist/gen/apis/exception.js";
import { createConfiguration } from "@kubernetes/client-node/dist/gen/configuration.js";
import {
  HttpMethod,
  type RequestContext,
  type ResponseContext,
} from "@kubernetes/client-node/dist/gen/http/http.js";
import type { V1APIResource } from "@kubernetes/client-node/dist/gen/models/V1APIResource.js";
import { ServerConfiguration } from "@kubernetes/client-node/dist/gen/servers.js";
import { KubernetesObjectApi } from "@kubernetes/client-node/dist/object.js";
import { SIMKUBE_API_VERSION, SIMULATION_KIND, SIMULATION_ROOT_KIND } from "../base/index.js";
import {
  type KubeApi,
  KubeError,
  type KubeObject,
  kubeErrorOfStatus,
  type ObjectRef,
  type ReadOptions,
  refOf,
} from "./api.js";
import { createLeanTransport, KeepAliveAgent, leanPathFits } from "./http.js";
import { asPartialObjectMetadata, PARTIAL_METADATA_ACCEPT } from "./partial-metadata.js";

export interface KubeApiOptions {
  /** A kubeconfig file; otherwise KubeConfig.loadFromDefault() ($KUBECONFIG, ~/.kube/config, in-cluster). */
  kubeconfigPath?: string;
  /** Per HTTP request (discovery and the call itself each get their own, so a first call of a kind can take twice this). Default 4000 ms: two of them still fit in the webhook's 10 s. */
  timeoutMs?: number;
  /** Reuse connections through one keep-alive agent. Default true. */
  keepAlive?: boolean;
}

export const DEFAULT_KUBE_TIMEOUT_MS = 4000;

/** A kubeconfig that cannot be used; the message says which and what to do. */
export class KubeConfigError extends Error {
  override readonly name = "KubeConfigError";
}

const KUBECONFIG_HELP =
  "point KUBECONFIG at a kubeconfig with a current context (`kubectl config view --minify` shows what it selects), or run in a pod with a service account";

/**
 * client-node's loading, with errors that say what to do: an empty or unparsable file otherwise surfaces as
 * "Cannot read properties of undefined (reading 'clusters')", and one without a current cluster only at the
 * first API call.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  const source = path ?? "the default kubeconfig ($KUBECONFIG, ~/.kube/config or in-cluster)";
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (err) {
    const reason = err instanceof TypeError ? "it is empty or not a kubeconfig" : (err as Error).message;
    throw new KubeConfigError(`cannot load ${source}: ${reason}; ${KUBECONFIG_HELP}`);
  }
  const missing = missingCredentials(kc, path);
  if (missing) throw new KubeConfigError(`${missing}; ${KUBECONFIG_HELP}`);
  if (!kc.getCurrentCluster()) {
    throw new KubeConfigError(
      `${source} selects no cluster (no current-context, or it names no cluster); ${KUBECONFIG_HELP}`,
    );
  }
  return kc;
}

/**
 * What loadFromDefault made of nothing: with no $KUBECONFIG, no ~/.kube/config and no service account token it
 * falls back to http://localhost:8080 without credentials (and in a pod without KUBERNETES_SERVICE_HOST to
 * https://undefined:undefined), which only fails at the first API call, with a message about that address.
 */
function missingCredentials(kc: KubeConfig, path: string | undefined): string | undefined {
  if (path) return undefined;
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (cluster?.name === "cluster" && cluster.server === "http://localhost:8080" && user?.name === "user") {
    return "no kubeconfig ($KUBECONFIG unset, no ~/.kube/config) and no in-cluster service account (no token at /var/run/secrets/kubernetes.io/serviceaccount/token)";
  }
  if (cluster?.name === "inCluster" && cluster.server.includes("//undefined")) {
    return "a service account token is mounted but KUBERNETES_SERVICE_HOST is unset, so the in-cluster API server is unknown";
  }
  return undefined;
}

export function createKubeApi(options: KubeApiOptions = {}): KubeApi {
  const kc = loadKubeConfig(options.kubeconfigPath);
  const transport = {
    timeoutMs: options.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS,
    keepAlive: options.keepAlive ?? true,
  };
  const client = RawObjectApi.fromKubeConfig(kc, transport);
  // The kinds with known paths go the lean way (kube-http.ts), unless a proxy or keepAlive: false needs the library's agents.
  const lean = transport.keepAlive && leanPathFits(kc) ? createLeanTransport(kc, transport) : undefined;
  const defaultNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace || "default";
  const leanPath = (ref: ObjectRef, withName: boolean) =>
    lean ? knownResourcePath(ref, defaultNamespace, withName) : undefined;
  return {
    async read<T extends KubeObject = KubeObject>(ref: ObjectRef, options: ReadOptions = {}): Promise<T> {
      const accept = options.metadataOnly ? PARTIAL_METADATA_ACCEPT : undefined;
      const path = leanPath(ref, true);
      const spec = { apiVersion: ref.apiVersion, kind: ref.kind, metadata: metaOf(ref.name, ref.namespace) };
      const answer = (await call(() =>
        lean && path
          ? lean("GET", path, undefined, accept)
          : client.send(HttpMethod.GET, spec, "read", undefined, accept),
      )) as KubeObject;
      // Reduced either way: a server without the transform answers with the whole object.
      return (options.metadataOnly ? asPartialObjectMetadata(answer) : answer) as T;
    },
    async create<T extends KubeObject = KubeObject>(object: T): Promise<T> {
      const path = leanPath(refOf(object), false);
      if (lean && path) return (await call(() => lean("POST", path, object))) as T;
      return (await call(() => client.send(HttpMethod.POST, pathSpec(object), "create", object))) as T;
    },
    async replace<T extends KubeObject = KubeObject>(object: T): Promise<T> {
      const path = leanPath(refOf(object), true);
      if (lean && path) return (await call(() => lean("PUT", path, object))) as T;
      return (await call(() => client.send(HttpMethod.PUT, pathSpec(object), "replace", object))) as T;
    },
  };
}

/**
 * The path of a KNOWN_RESOURCES object (of its collection when !withName), built as the library's
 * specUriPath builds it (namespaced kinds default to the context's namespace, the whole path lower-cased);
 * undefined for any other kind, or a missing name, which the library path handles and reports.
 */
export function knownResourcePath(
  ref: ObjectRef,
  defaultNamespace: string,
  withName: boolean,
): string | undefined {
  const apiVersion = ref.apiVersion || "v1";
  const known = KNOWN_RESOURCES[apiVersion]?.[ref.kind];
  if (!known || (withName && !ref.name)) return undefined;
  const parts = [apiVersion.includes("/") ? "/apis" : "/api", apiVersion];
  if (known.namespaced) parts.push("namespaces", encodeURIComponent(ref.namespace || defaultNamespace));
  parts.push(known.name);
  if (withName) parts.push(encodeURIComponent(ref.name));
  return parts.join("/").toLowerCase();
}

async function call(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return await fn();
  } catch (err) {
    throw kubeErrorFrom(err);
  }
}

function metaOf(
  name: string | undefined,
  namespace: string | undefined,
): { name?: string; namespace?: string } {
  const meta: { name?: string; namespace?: string } = {};
  if (name) meta.name = name;
  if (namespace) meta.namespace = namespace;
  return meta;
}

/** specUriPath mutates what it gets (fills apiVersion, namespace): hand it a small copy, never the caller's object. */
function pathSpec(object: KubeObject): {
  apiVersion: string;
  kind: string;
  metadata: Record<string, string>;
} {
  return {
    apiVersion: object.apiVersion ?? "",
    kind: object.kind ?? "",
    metadata: metaOf(object.metadata?.name, object.metadata?.namespace),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Errors

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

/**
 * Any failure of the client library (or already a KubeError) as a KubeError:
 * - ApiException: its HTTP code and the metav1.Status in its body (raw JSON text, or absent, or HTML from a
 *   proxy); a missing reason is derived from the code as client-go does, "Unknown" when there is none;
 * - "Unrecognized API version and kind", or discovery answering 404 for the group-version: 404 UnknownKind;
 * - no HTTP answer (refused, reset, DNS, our timeout): status 0, reason "ConnectionError";
 * - anything else (a ref without a name, a bad kubeconfig): 400 "ClientError" (not transient, not retried).
 */
export function kubeErrorFrom(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  if (isApiException(err)) {
    const answer = kubeErrorOfStatus(err.code, err.body);
    if (err.code === 404 && isDiscoveryFailure(err)) {
      return new KubeError(404, "UnknownKind", `the server does not serve this kind: ${answer.message}`);
    }
    return answer;
  }
  if (err instanceof Error) {
    if (err.message.includes("Unrecognized API version and kind")) {
      return new KubeError(404, "UnknownKind", err.message);
    }
    if (isNetworkError(err)) return new KubeError(0, "ConnectionError", networkMessage(err));
    return new KubeError(400, "ClientError", err.message);
  }
  return new KubeError(400, "ClientError", String(err));
}

function isApiException(err: unknown): err is { code: number; body: unknown; message: string } {
  if (err instanceof ApiException) return true;
  // Duck-typed as well: a second copy of the library (bundling) would fail instanceof.
  return (
    err instanceof Error &&
    typeof (err as { code?: unknown }).code === "number" &&
    "body" in err &&
    err.message.startsWith("HTTP-Code:")
  );
}

/** KubernetesObjectApi.resource() rewrites the message of errors from the discovery GET. */
function isDiscoveryFailure(err: { message: string }): boolean {
  return err.message.startsWith("Failed to fetch resource metadata for");
}

// The library rejects with node-fetch's FetchError and AbortError, whose prototypes carry those names: checking
// the name recognises them without importing the library's index (see the imports above).
function isNetworkError(err: Error): boolean {
  if (err.name === "AbortError" || err.name === "TimeoutError" || err.name === "FetchError") return true;
  const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NETWORK_CODES.has(code);
}

function networkMessage(err: Error): string {
  if (err.name === "AbortError" || err.name === "TimeoutError") {
    return `no answer from the API server in time (${err.message})`;
  }
  return err.message;
}

// ---------------------------------------------------------------------------------------------------------
// The client

type Agent = http.Agent | https.Agent;

interface TransportOptions {
  timeoutMs: number;
  keepAlive: boolean;
}

/**
 * The resources this project reads and writes, as discovery would describe them: their paths are fixed by
 * Kubernetes (core v1) and by SimKube's CRDs (simkube.io/v1, both cluster-scoped), as a typed client would
 * compile them in. Without this every cold start pays a discovery round trip per group-version before its
 * first call (measured: one of the first review's four sequential API requests), and parses /api/v1's whole
 * resource list. Any other kind (an owner's, say a ReplicaSet) is still discovered (resource() below).
 */
export const KNOWN_RESOURCES: Record<string, Record<string, { name: string; namespaced: boolean }>> = {
  v1: {
    Pod: { name: "pods", namespaced: true },
    ConfigMap: { name: "configmaps", namespaced: true },
    Namespace: { name: "namespaces", namespaced: false },
    // mutate-create's Event on a Simulation it cannot serve rescheduling for (RESCHEDULE_SERVED=false).
    Event: { name: "events", namespaced: true },
  },
  // reschedule-delete's per-namespace pod-read bindings (--pod-reads virtual-namespaces).
  "rbac.authorization.k8s.io/v1": {
    RoleBinding: { name: "rolebindings", namespaced: true },
  },
  [SIMKUBE_API_VERSION]: {
    [SIMULATION_KIND]: { name: "simulations", namespaced: false },
    [SIMULATION_ROOT_KIND]: { name: "simulationroots", namespaced: false },
  },
};

class RawObjectApi extends KubernetesObjectApi {
  static fromKubeConfig(kc: KubeConfig, transport: TransportOptions): RawObjectApi {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new KubeError(400, "ClientError", "kubeconfig has no current cluster");
    const shared = new KeepAliveAgent();
    const configuration = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [
        {
          // Runs after auth has put its per-request agent on the context.
          pre: async (ctx: RequestContext) => {
            const fresh = ctx.getAgent();
            if (transport.keepAlive && fresh) ctx.setAgent(sharedInsteadOf(fresh, shared));
            ctx.setSignal(AbortSignal.timeout(transport.timeoutMs));
            return ctx;
          },
          post: async (rsp: ResponseContext) => rsp,
        },
      ],
    });
    const client = new RawObjectApi(configuration);
    client.setDefaultNamespace(kc);
    return client;
  }

  /** Discovered resource lists, per apiVersion. */
  private readonly discovered = new Map<string, V1APIResource[]>();

  /**
   * What the library's resource() does (GET the group-version's APIResourceList once, fetch it again when a
   * kind is missing from it: a CRD installed since), as raw JSON like every other call here, so that nothing
   * goes through the library's typed models (the serve bundle leaves them out: scripts/client-node-slim.mjs).
   */
  protected override async resource(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    const known = KNOWN_RESOURCES[apiVersion]?.[kind];
    if (known) return { ...known, kind, singularName: kind.toLowerCase(), verbs: [] };
    const cached = this.discovered.get(apiVersion)?.find((r) => r.kind === kind);
    if (cached) return cached;
    const ctx = this.configuration.baseServer.makeRequestContext(
      this.apiVersionPath(apiVersion),
      HttpMethod.GET,
    );
    ctx.setHeaderParam("Accept", "application/json");
    try {
      const list = (await this.requestPromise(ctx)) as { resources?: unknown };
      const resources = Array.isArray(list?.resources) ? (list.resources as V1APIResource[]) : [];
      this.discovered.set(apiVersion, resources);
      return resources.find((r) => r.kind === kind);
    } catch (err) {
      // The library's wording, which kubeErrorFrom recognises as a discovery failure (404: UnknownKind).
      if (err instanceof Error)
        err.message = `Failed to fetch resource metadata for ${apiVersion}/${kind}: ${err.message}`;
      throw err;
    }
  }

  async send(
    method: HttpMethod,
    spec: { apiVersion: string; kind: string; metadata: Record<string, string> },
    action: "read" | "create" | "replace",
    body?: unknown,
    accept = "application/json",
  ): Promise<unknown> {
    const path = await this.specUriPath(spec, action);
    const ctx = this.configuration.baseServer.makeRequestContext(path, method);
    ctx.setHeaderParam("Accept", accept);
    if (body !== undefined) {
      ctx.setHeaderParam("Content-Type", "application/json");
      ctx.setBody(JSON.stringify(body));
    }
    return this.requestPromise(ctx);
  }

  /** Every call here is raw JSON (send, resource): the library's typed deserialization is never used. */
  protected override async processResponse<T>(response: ResponseContext): Promise<T> {
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) {
      return JSON.parse(await response.body.text()) as T;
    }
    throw new ApiException(
      response.httpStatusCode,
      "Unsuccessful HTTP Request",
      await response.getBodyAsAny(),
      response.headers,
    );
  }
}

/**
 * The keep-alive agent standing in for the fresh agent the library made for this request (KeepAliveAgent);
 * proxy agents pass through untouched.
 */
function sharedInsteadOf(fresh: Agent, shared: KeepAliveAgent): Agent {
  const isHttps = fresh instanceof https.Agent && fresh.constructor === https.Agent;
  const isHttp = !isHttps && fresh instanceof http.Agent && fresh.constructor === http.Agent;
  if (!isHttps && !isHttp) return fresh;
  return shared.for((fresh as Agent & { options: Record<string, unknown> }).options, isHttps);
}
