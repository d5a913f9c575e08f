// Owner chains: every object a pod is owned by, directly or through its owners, resolved through the API.
// SimKube follows ownerReferences recursively (sk-core/src/k8s/owners.rs); so do we, with differences that
// matter for a webhook that must fail closed: an API failure is an error, not a skipped owner (a skipped
// SimulationRoot would let a simulated pod through unmutated); an owner that is gone is marked in the chain,
// so the caller can tell "not the simulation's" from "cannot tell"; and lookups of owners that exist are
// cached and shared, while "not found" is never remembered past the admission that saw it.

import { LRUCache } from "lru-cache";
import type { Logger } from "../base/index.js";
import {
  SIMKUBE_API_VERSION,
  SIMKUBE_IO_PREFIX,
  SIMULATION_KIND,
  SIMULATION_ROOT_KIND,
} from "../base/index.js";
import type { KubeApi, KubeObject, OwnerReference } from "./api.js";
import { isNotFound } from "./api.js";

/** One owner in a chain, with the owner's own ownerReferences. */
export interface OwnerLink {
  ref: OwnerReference;
  /** Empty when the owner is gone. */
  ownedBy: OwnerReference[];
  /** The owner was not found (deleted, or a kind the cluster does not serve): the chain stops here. */
  gone?: true;
}

export interface OwnerResolver {
  ownerChain(object: KubeObject): Promise<OwnerLink[]>;
  /**
   * The same chain when every owner in it is cached and nothing in it needs a warning (no API read, no
   * promise); undefined otherwise, and ownerChain then resolves it. Nearly every review of a burst hits.
   */
  cachedOwnerChain(object: KubeObject): OwnerLink[] | undefined;
}

export interface OwnerResolverOptions {
  /** How many existing owners' references are remembered; owners rarely change during a simulation. */
  maxEntries?: number;
  ttlMs?: number;
  now?: () => number;
}

// Deeper than any real controller hierarchy; protects against reference cycles.
const MAX_DEPTH = 16;

export function ownerReferencesOf(object: KubeObject): OwnerReference[] {
  const refs = object.metadata?.ownerReferences;
  return Array.isArray(refs) ? refs : [];
}

export function isSimkubeOwner(ref: Pick<OwnerReference, "apiVersion">): boolean {
  return typeof ref.apiVersion === "string" && ref.apiVersion.startsWith(SIMKUBE_IO_PREFIX);
}

/** The chain's owners that are not SimKube's own objects (SimKube's "filtered owners"). */
export function workloadOwners(chain: readonly OwnerLink[]): OwnerReference[] {
  return chain.map((link) => link.ref).filter((ref) => !isSimkubeOwner(ref));
}

/** When `link` is a SimulationRoot: the names of the Simulations its owner references name; else none. */
export function simulationsOwning(link: OwnerLink): string[] {
  if (link.ref.apiVersion !== SIMKUBE_API_VERSION || link.ref.kind !== SIMULATION_ROOT_KIND) return [];
  return link.ownedBy
    .filter((owner) => owner.apiVersion === SIMKUBE_API_VERSION && owner.kind === SIMULATION_KIND)
    .map((owner) => owner.name);
}

/** A pod the simulation owns through a SimulationRoot that the Simulation `simName` owns. */
export function simulationRootOf(chain: readonly OwnerLink[], simName: string): OwnerReference | undefined {
  return chain.find((link) => simulationsOwning(link).includes(simName))?.ref;
}

/** A SimulationRoot in the chain and the Simulation that owns it. */
export interface SimulationOwnership {
  root: OwnerReference;
  simName: string;
}

/**
 * The first SimulationRoot in the chain that a Simulation owns, whichever Simulation that is: how a
 * deployment without SIM_NAME tells which simulation a pod (or a virtual namespace) belongs to.
 */
export function simulationOwnershipOf(chain: readonly OwnerLink[]): SimulationOwnership | undefined {
  for (const link of chain) {
    const simName = simulationsOwning(link).find((name) => typeof name === "string" && name !== "");
    if (simName) return { root: link.ref, simName };
  }
  return undefined;
}

/** The same object: apiVersion, kind, name and uid all equal (uid required: a name alone may be reused). */
export function refersTo(
  ref: Pick<OwnerReference, "apiVersion" | "kind" | "name" | "uid">,
  target: Pick<OwnerReference, "apiVersion" | "kind" | "name" | "uid">,
): boolean {
  return (
    Boolean(target.uid) &&
    ref.uid === target.uid &&
    ref.apiVersion === target.apiVersion &&
    ref.kind === target.kind &&
    ref.name === target.name
  );
}

/** `owner` is among the object's ownerReferences. */
export function isOwnedBy(
  object: KubeObject,
  owner: Pick<OwnerReference, "apiVersion" | "kind" | "name" | "uid">,
): boolean {
  return ownerReferencesOf(object).some(
    (ref) => typeof ref === "object" && ref !== null && refersTo(ref, owner),
  );
}

/** Bare: no owner outside simkube.io, so nothing would recreate the pod if it went away. Needs no API call. */
export function isBarePod(pod: KubeObject): boolean {
  return ownerReferencesOf(pod).every(isSimkubeOwner);
}

function ownerKey(namespace: string, ref: OwnerReference): string {
  return `${ref.apiVersion}|${ref.kind}|${namespace}|${ref.name}`;
}

function isUsableRef(ref: unknown): ref is OwnerReference {
  if (typeof ref !== "object" || ref === null) return false;
  const r = ref as Record<string, unknown>;
  return (
    typeof r.apiVersion === "string" &&
    typeof r.kind === "string" &&
    typeof r.name === "string" &&
    r.name !== ""
  );
}

type OwnerCache = LRUCache<string, OwnerReference[], { namespace: string; ref: OwnerReference }>;

/**
 * Existing owners' ownerReferences, cached; concurrent lookups of one owner share one API call, which is
 * what a burst of pods from one ReplicaSet needs. A "not found" (the owner is gone, or its kind is not
 * served, e.g. a CRD not installed) resolves those waiting lookups to undefined and is not stored: an owner
 * that comes back (a Deployment recreated) is seen by the next admission.
 */
function createOwnerCache(kube: KubeApi, options: OwnerResolverOptions): OwnerCache {
  const now = options.now ?? (() => performance.now());
  return new LRUCache({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? 5 * 60_000,
    perf: { now },
    // Read the clock on every get: the default caches it for 1 ms behind a timer, one more timer per review.
    ttlResolution: 0,
    fetchMethod: async (_key, _stale, { context }) => {
      const { namespace, ref } = context;
      try {
        // Only the owner's ownerReferences are followed: its spec (a pod template, env included) is never read.
        const owner = await kube.read(
          { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, namespace },
          { metadataOnly: true },
        );
        return ownerReferencesOf(owner);
      } catch (err) {
        // lru-cache stores nothing for undefined: this is what keeps "not found" out of the cache.
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
  });
}

/** One admission's walk up the owner chain: the shared cache, and the owners this admission found gone. */
interface OwnerWalk {
  cache: OwnerCache;
  log: Logger;
  namespace: string;
  /** Owners not found in this admission, so one reached twice in the chain is read once. */
  gone: Set<string>;
}

/** The owner's own ownerReferences, or undefined when it is gone: at once when cached, else from the API. */
function lookUp(
  walk: OwnerWalk,
  ref: OwnerReference,
  key: string,
): OwnerReference[] | undefined | Promise<OwnerReference[] | undefined> {
  if (walk.gone.has(key)) return undefined;
  // A hit needs no promise: fetch() makes one even for a cached value, and most lookups are hits.
  return walk.cache.get(key) ?? fetchOwner(walk, ref, key);
}

async function fetchOwner(
  walk: OwnerWalk,
  ref: OwnerReference,
  key: string,
): Promise<OwnerReference[] | undefined> {
  const { namespace } = walk;
  const ownedBy = await walk.cache.fetch(key, { context: { namespace, ref } });
  if (ownedBy === undefined) {
    walk.gone.add(key);
    walk.log.warn(
      { owner: { kind: ref.kind, name: ref.name, namespace } },
      "owner not found; the chain stops here",
    );
  }
  return ownedBy;
}

async function resolve(
  walk: OwnerWalk,
  refs: OwnerReference[],
  depth: number,
  seen: Set<string>,
): Promise<OwnerLink[]> {
  const chain: OwnerLink[] = [];
  for (const ref of refs) {
    if (!isUsableRef(ref)) {
      walk.log.warn({ ref }, "malformed owner reference; skipping it");
      continue;
    }
    const key = ownerKey(walk.namespace, ref);
    if (seen.has(key) || depth >= MAX_DEPTH) {
      walk.log.warn(
        { owner: { kind: ref.kind, name: ref.name } },
        "owner reference cycle or chain too deep; stopping",
      );
      continue;
    }
    const found = lookUp(walk, ref, key);
    const ownedBy = found instanceof Promise ? await found : found;
    if (ownedBy === undefined) {
      chain.push({ ref, ownedBy: [], gone: true });
      continue;
    }
    chain.push({ ref, ownedBy });
    chain.push(...(await resolve(walk, ownedBy, depth + 1, new Set([...seen, key]))));
  }
  return chain;
}

/**
 * The chain when every owner in it is cached and well-formed, walked without a promise; undefined as soon
 * as anything needs resolve's care (a miss, a malformed reference, a cycle, the depth limit: resolve logs
 * them), which then walks it again.
 * In a burst nearly every chain is cached, and the async walk paid a promise and a Set per level.
 */
function cachedChain(
  cache: OwnerCache,
  namespace: string,
  refs: OwnerReference[],
  path: string[],
  chain: OwnerLink[],
): OwnerLink[] | undefined {
  for (const ref of refs) {
    if (!isUsableRef(ref) || path.length >= MAX_DEPTH) return undefined;
    const key = ownerKey(namespace, ref);
    if (path.includes(key)) return undefined;
    const ownedBy = cache.get(key);
    if (ownedBy === undefined) return undefined;
    chain.push({ ref, ownedBy });
    path.push(key);
    const rest = cachedChain(cache, namespace, ownedBy, path, chain);
    path.pop();
    if (rest === undefined) return undefined;
  }
  return chain;
}

export function createOwnerResolver(
  kube: KubeApi,
  log: Logger,
  options: OwnerResolverOptions = {},
): OwnerResolver {
  const cache = createOwnerCache(kube, options);
  const cachedOwnerChain = (object: KubeObject) =>
    cachedChain(cache, object.metadata?.namespace ?? "", ownerReferencesOf(object), [], []);
  return {
    cachedOwnerChain,
    ownerChain(object) {
      const cached = cachedOwnerChain(object);
      if (cached) return Promise.resolve(cached);
      const namespace = object.metadata?.namespace ?? "";
      return resolve({ cache, log, namespace, gone: new Set() }, ownerReferencesOf(object), 0, new Set());
    },
  };
}
