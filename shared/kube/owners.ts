// Owner chains: every object a pod is owned by, directly or through its owners, resolved through the API.
// SimKube follows ownerReferences recursively (sk-core/src/k8s/owners.rs); so do we, with differences that
// matter for a webhook that must fail closed: an API failure is an error, not a skipped owner (a skipped
// SimulationRoot would let a simulated pod through unmutated); an owner that is gone is marked in the chain,
// so the caller can tell "not the simulation's" from "cannot tell"; and lookups of owners that exist are
// cached and shared, while "not found" is never remembered past the admission that saw it.
// A tenant may give its objects several ownerReferences, layer by layer, so the walk is over a graph, not a
// chain: each owner is visited once per review (reached again, it is skipped), and a review's walk has a
// budget of owners, of references and of time. Over budget, it fails (the caller fails closed) saying why,
// having read and held no more than the budget (issue 35: walked once per path, 39 Deployments blocked the
// event loop for seconds per pod).

import { LRUCache } from "lru-cache";
import {
  type Logger,
  SIMKUBE_API_VERSION,
  SIMKUBE_IO_PREFIX,
  SIMULATION_KIND,
  SIMULATION_ROOT_KIND,
  withDeadline,
} from "../base/index.js";
import type { KubeApi, KubeObject, OwnerReference } from "./api.js";
import { isNotFound, kubeErrorOf } from "./api.js";
import { groupOfApiVersion, guessResourceOfKind } from "./resource-names.js";

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
  /** Owners one review may look up (found or gone). Default 64; a real chain has 2 to 5. */
  maxObjects?: number;
  /** Owner references one review may examine, the pod's own included. Default 256. */
  maxReferences?: number;
  /** How long one review's walk may take, API reads included. Default 5 s, well inside the webhook's 30 s. */
  walkMs?: number;
}

// Deeper than any real controller hierarchy; protects against reference cycles.
const MAX_DEPTH = 16;
export const DEFAULT_OWNER_WALK_MAX_OBJECTS = 64;
export const DEFAULT_OWNER_WALK_MAX_REFERENCES = 256;
export const DEFAULT_OWNER_WALK_MS = 5_000;

/** A review's owner walk went over its budget: the pod is refused (fail closed), and this says why. */
export class OwnerGraphTooLarge extends Error {
  override name = "OwnerGraphTooLarge";
}

/**
 * The function's account may not read an owner in the pod's chain (the rendered RBAC reads SimKube's six
 * built-in workload kinds): the pod is refused, and the message names the kind and the flag that grants it.
 */
export class OwnerReadForbidden extends Error {
  override name = "OwnerReadForbidden";
  constructor(ref: Pick<OwnerReference, "apiVersion" | "kind" | "name">, cause: unknown) {
    const group = groupOfApiVersion(ref.apiVersion);
    const resource = guessResourceOfKind(ref.kind);
    const grant = group
      ? `manifests --owner-resource ${resource}.${group} (the chart: ownerResources), or --owner-kinds-from-trace TRACE for every kind the trace tracks`
      : `a get rule on ${resource} in the core group`;
    super(
      `may not read the pod's owner ${ref.kind} ${ref.name} (${ref.apiVersion}); grant it with ${grant}`,
      {
        cause,
      },
    );
  }
}

/** One review's budget, and what it has spent. */
interface Budget {
  maxObjects: number;
  maxReferences: number;
  walkMs: number;
  now: () => number;
  /** When the walk's clock started: at its first time check (the walk over the cache never reads the clock). */
  started: number | undefined;
  objects: number;
  references: number;
}

function newBudget(options: OwnerResolverOptions, now: () => number): Budget {
  return {
    maxObjects: options.maxObjects ?? DEFAULT_OWNER_WALK_MAX_OBJECTS,
    maxReferences: options.maxReferences ?? DEFAULT_OWNER_WALK_MAX_REFERENCES,
    walkMs: options.walkMs ?? DEFAULT_OWNER_WALK_MS,
    now,
    started: undefined,
    objects: 0,
    references: 0,
  };
}

/** Milliseconds the walk has taken, its clock started by the first call. */
function elapsedMs(budget: Budget): number {
  const now = budget.now();
  budget.started ??= now;
  return now - budget.started;
}

/**
 * Why the counts are over budget, or undefined. `refs` more references and `objects` more owners are charged
 * first. The walk over the cache checks only these: bounded by them and by MAX_DEPTH, it cannot run long.
 */
function overCounts(budget: Budget, refs: number, objects: number): string | undefined {
  budget.references += refs;
  budget.objects += objects;
  if (budget.references > budget.maxReferences)
    return `the pod's owner graph has more than ${budget.maxReferences} owner references`;
  if (budget.objects > budget.maxObjects)
    return `the pod's owner graph has more than ${budget.maxObjects} owners`;
  return undefined;
}

/** overCounts, and the walk's time (API reads included). */
function overBudget(budget: Budget, refs: number, objects: number): string | undefined {
  const counts = overCounts(budget, refs, objects);
  if (counts) return counts;
  if (elapsedMs(budget) > budget.walkMs)
    return `walking the pod's owner graph took longer than ${budget.walkMs} ms`;
  return undefined;
}

function charge(budget: Budget, refs: number, objects: number): void {
  const why = overBudget(budget, refs, objects);
  if (why) throw new OwnerGraphTooLarge(`${why} (simkube-fn walks at most that much per review)`);
}

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
 * that comes back (a Deployment recreated) is seen by the next admission. An owner's references are kept only
 * up to one past the walk's reference budget (a walk reaching it fails anyway), and the cache is bounded in
 * references kept, so a tenant's objects with thousands of ownerReferences cannot fill the heap.
 */
function createOwnerCache(kube: KubeApi, options: OwnerResolverOptions, now: () => number): OwnerCache {
  const keep = (options.maxReferences ?? DEFAULT_OWNER_WALK_MAX_REFERENCES) + 1;
  const maxEntries = options.maxEntries ?? 10_000;
  return new LRUCache({
    max: maxEntries,
    // Each entry's size is its references plus one: at most about 10 MiB of references by default.
    maxSize: Math.max(maxEntries * 5, keep * 4),
    sizeCalculation: (refs) => refs.length + 1,
    ttl: options.ttlMs ?? 5 * 60_000,
    perf: { now },
    // Read the clock on every get: the default caches it for 1 ms behind a timer, one more timer per review.
    ttlResolution: 0,
    // An expired entry stays (get() only skips it) until it is fetched again, which hands it to fetchMethod:
    // the last references of an owner deleted since (below).
    noDeleteOnStaleGet: true,
    fetchMethod: async (_key, stale, { context }) => {
      const { namespace, ref } = context;
      try {
        // Only the owner's ownerReferences are followed: its spec (a pod template, env included) is never read.
        const owner = await kube.read(
          { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, namespace },
          { metadataOnly: true },
        );
        return ownerReferencesOf(owner).slice(0, keep);
      } catch (err) {
        // An owner this process saw earlier in the run and that is gone now keeps its last references, as
        // SimKube keeps an object's chain for the whole run: a pod created after its Job or ReplicaSet was
        // deleted still reaches the root. lru-cache stores nothing for undefined: an owner never seen is not
        // found, and that is never remembered.
        if (isNotFound(err)) return stale;
        throw err;
      }
    },
  });
}

/** One admission's walk over the owner graph: the shared cache, its budget, what it has visited. */
interface OwnerWalk {
  cache: OwnerCache;
  log: Logger;
  namespace: string;
  budget: Budget;
  /** Every owner this admission has reached: reached again (a diamond, a layered graph), it is skipped. */
  visited: Set<string>;
  /** The owners from the pod to the current one: one reached again on it is a cycle, and warned about. */
  path: string[];
}

/** The owner's own ownerReferences, or undefined when it is gone: at once when cached, else from the API. */
function lookUp(
  walk: OwnerWalk,
  ref: OwnerReference,
  key: string,
): OwnerReference[] | undefined | Promise<OwnerReference[] | undefined> {
  // A hit needs no promise: fetch() makes one even for a cached value, and most lookups are hits.
  return walk.cache.get(key) ?? fetchOwner(walk, ref, key);
}

async function fetchOwner(
  walk: OwnerWalk,
  ref: OwnerReference,
  key: string,
): Promise<OwnerReference[] | undefined> {
  const { namespace, budget } = walk;
  const left = Math.max(0, budget.walkMs - elapsedMs(budget));
  const fetched = walk.cache.fetch(key, { context: { namespace, ref } }).catch((err: unknown) => {
    throw kubeErrorOf(err)?.status === 403 ? new OwnerReadForbidden(ref, err) : err;
  });
  const ownedBy = await withDeadline(fetched, left, () => {
    throw new OwnerGraphTooLarge(`walking the pod's owner graph took longer than ${budget.walkMs} ms`);
  });
  if (ownedBy === undefined) {
    walk.log.warn(
      { owner: { kind: ref.kind, name: ref.name, namespace } },
      "owner not found; the chain stops here",
    );
  }
  return ownedBy;
}

/** Appends to `chain` the owners `refs` lead to, each once, depth first; throws when over budget. */
async function resolve(walk: OwnerWalk, refs: OwnerReference[], chain: OwnerLink[]): Promise<void> {
  charge(walk.budget, refs.length, 0);
  for (const ref of refs) {
    if (!isUsableRef(ref)) {
      walk.log.warn({ ref }, "malformed owner reference; skipping it");
      continue;
    }
    const key = ownerKey(walk.namespace, ref);
    if (walk.path.includes(key) || walk.path.length >= MAX_DEPTH) {
      walk.log.warn(
        { owner: { kind: ref.kind, name: ref.name } },
        "owner reference cycle or chain too deep; stopping",
      );
      continue;
    }
    if (walk.visited.has(key)) continue;
    walk.visited.add(key);
    charge(walk.budget, 0, 1);
    const found = lookUp(walk, ref, key);
    const ownedBy = found instanceof Promise ? await found : found;
    if (ownedBy === undefined) {
      chain.push({ ref, ownedBy: [], gone: true });
      continue;
    }
    chain.push({ ref, ownedBy });
    walk.path.push(key);
    await resolve(walk, ownedBy, chain);
    walk.path.pop();
  }
}

/**
 * The same walk as resolve's when every owner on it is cached and well-formed, without a promise; false as
 * soon as anything needs resolve's care (a miss, a malformed reference, a cycle, the depth limit, the budget:
 * resolve logs or throws them), which then walks it again.
 * In a burst nearly every chain is cached, and the async walk paid a promise and a Set per level.
 */
function cachedChain(walk: OwnerWalk, refs: OwnerReference[], chain: OwnerLink[]): boolean {
  if (overCounts(walk.budget, refs.length, 0)) return false;
  const { path, visited } = walk;
  for (const ref of refs) {
    if (!isUsableRef(ref) || path.length >= MAX_DEPTH) return false;
    const key = ownerKey(walk.namespace, ref);
    if (path.includes(key)) return false;
    if (visited.has(key)) continue;
    visited.add(key);
    if (overCounts(walk.budget, 0, 1)) return false;
    const ownedBy = walk.cache.get(key);
    if (ownedBy === undefined) return false;
    chain.push({ ref, ownedBy });
    path.push(key);
    const ok = cachedChain(walk, ownedBy, chain);
    path.pop();
    if (!ok) return false;
  }
  return true;
}

export function createOwnerResolver(
  kube: KubeApi,
  log: Logger,
  options: OwnerResolverOptions = {},
): OwnerResolver {
  const now = options.now ?? (() => performance.now());
  const cache = createOwnerCache(kube, options, now);
  const walkOf = (object: KubeObject): OwnerWalk => ({
    cache,
    log,
    namespace: object.metadata?.namespace ?? "",
    budget: newBudget(options, now),
    visited: new Set(),
    path: [],
  });
  const cachedOwnerChain = (object: KubeObject) => {
    const chain: OwnerLink[] = [];
    return cachedChain(walkOf(object), ownerReferencesOf(object), chain) ? chain : undefined;
  };
  return {
    cachedOwnerChain,
    async ownerChain(object) {
      const cached = cachedOwnerChain(object);
      if (cached) return cached;
      const chain: OwnerLink[] = [];
      await resolve(walkOf(object), ownerReferencesOf(object), chain);
      return chain;
    },
  };
}
