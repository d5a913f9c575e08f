// Is the simulation being torn down around this pod? Usernames cannot tell: the final deletes of a teardown
// come from KWOK's identity, and a controller-manager without service-account credentials deletes everything
// as system:kube-controller-manager. The objects can: a Simulation that is finished, failed or deleted, a
// SimulationRoot being deleted (the driver's cleanup deletes it with foreground propagation), or a namespace
// that is terminating.
//
// A teardown sends thousands of DELETE reviews in a burst, so every answer is cached, and concurrent checks
// of one object share one API call (lru-cache's fetch() coalesces them):
// - "over" answers are sticky: a root being deleted never comes back, and a terminating namespace only
//   terminates. They are keyed by the SimulationRoot's uid, so a later run (a new root) starts clean.
// - "alive" answers are kept briefly, so a teardown that starts is noticed within that time.

import { LRUCache } from "lru-cache";
import type { KubeApi, KubeObject, OwnerReference } from "../../shared/kube/index.js";
import { isSimulationOver, type Simulation } from "../../shared/simulation/index.js";
import { type CachedReads, createCachedReads } from "./cached-reads.js";
import type { TeardownReason } from "./outcomes.js";

export interface TeardownTarget {
  /** The pod's namespace. */
  namespace: string;
  /** The SimulationRoot the pod belongs to (cluster-scoped). */
  root: Pick<OwnerReference, "apiVersion" | "kind" | "name" | "uid">;
}

export interface TeardownGuard {
  /** What is already known to be torn down, with no API call: the fast path. */
  known(target: TeardownTarget): TeardownReason | undefined;
  /** Reads (cached) the SimulationRoot and the namespace; undefined when both are alive. */
  check(target: TeardownTarget): Promise<TeardownReason | undefined>;
  /** The Simulation as the caller just read it: "simulation-over" (remembered for this root) or undefined. */
  observeSimulation(sim: Simulation, target: TeardownTarget): TeardownReason | undefined;
  /** Something else showed the namespace terminating (a 403 on create into it): remember it. */
  markNamespaceTerminating(target: TeardownTarget): void;
}

export interface TeardownGuardOptions {
  /** How long "alive" answers are trusted. Default 2 s. */
  aliveTtlMs?: number;
  /** How long "over" answers are kept (bounded only to free memory; they do not change). Default 1 h. */
  overTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
  /**
   * Where the root and the namespace are read. Pass the reads the caller also uses, so that one review's
   * teardown check and its own look at the same namespace cost one API call. Default: its own, with aliveTtlMs.
   */
  reads?: CachedReads;
}

type Verdict = { over: false } | { over: true; reason: TeardownReason };

const ALIVE: Verdict = { over: false };

/** The phase is absent from a metadata-only read; the deletionTimestamp is set first and says the same. */
export function isNamespaceTerminating(namespace: KubeObject): boolean {
  const phase = (namespace.status as { phase?: unknown } | undefined)?.phase;
  return phase === "Terminating" || Boolean(namespace.metadata?.deletionTimestamp);
}

/** Being deleted, or gone and replaced by another object of the same name (a later run's root). */
export function rootVerdict(root: KubeObject | undefined, expectedUid: string | undefined): Verdict {
  if (root === undefined) return { over: true, reason: "root-gone" };
  if (expectedUid && root.metadata?.uid && root.metadata.uid !== expectedUid) {
    return { over: true, reason: "root-gone" };
  }
  if (root.metadata?.deletionTimestamp) return { over: true, reason: "root-deleting" };
  return ALIVE;
}

export function namespaceVerdict(namespace: KubeObject | undefined): Verdict {
  if (namespace === undefined) return { over: true, reason: "namespace-gone" };
  if (isNamespaceTerminating(namespace)) return { over: true, reason: "namespace-terminating" };
  return ALIVE;
}

interface FetchContext {
  read: () => Promise<Verdict>;
}

type VerdictCache = LRUCache<string, Verdict, FetchContext>;

// Answers are scoped by the root's uid, so a later run (a new root of the same name) starts clean.
const scopeOf = (target: TeardownTarget) => target.root.uid || target.root.name;
const rootKey = (target: TeardownTarget) => `root|${target.root.name}|${scopeOf(target)}`;
const namespaceKey = (target: TeardownTarget) => `ns|${scopeOf(target)}|${target.namespace}`;
const simulationKey = (target: TeardownTarget) => `sim|${scopeOf(target)}`;

/** Verdicts, "alive" for aliveTtl and "over" for overTtl; concurrent fetches of one key share one read. */
function createVerdictCache(now: () => number, aliveTtl: number, overTtl: number, max: number): VerdictCache {
  return new LRUCache<string, Verdict, FetchContext>({
    max,
    ttl: aliveTtl,
    perf: { now },
    // Read the clock on every check (the default caches it for 1 ms through a timer, which an injected
    // clock would not move).
    ttlResolution: 0,
    fetchMethod: async (_key, _stale, { options: entry, context }) => {
      const verdict = await context.read();
      entry.ttl = verdict.over ? overTtl : aliveTtl;
      return verdict;
    },
  });
}

/** The root's and the namespace's verdicts, both at once: a check sits on the path of a delete. */
async function fetchVerdicts(cache: VerdictCache, reads: CachedReads, target: TeardownTarget) {
  const { apiVersion, kind, name, uid } = target.root;
  const namespaceRef = { apiVersion: "v1", kind: "Namespace", name: target.namespace };
  return Promise.all([
    cache.fetch(rootKey(target), {
      context: { read: async () => rootVerdict(await reads.read({ apiVersion, kind, name }), uid) },
    }),
    cache.fetch(namespaceKey(target), {
      context: { read: async () => namespaceVerdict(await reads.read(namespaceRef)) },
    }),
  ]);
}

export function createTeardownGuard(kube: KubeApi, options: TeardownGuardOptions = {}): TeardownGuard {
  const now = options.now ?? (() => performance.now());
  const aliveTtl = options.aliveTtlMs ?? 2_000;
  const overTtl = options.overTtlMs ?? 60 * 60_000;
  const reads = options.reads ?? createCachedReads(kube, { ttlMs: aliveTtl, now });
  const cache = createVerdictCache(now, aliveTtl, overTtl, options.maxEntries ?? 10_000);

  function overReason(key: string): TeardownReason | undefined {
    const verdict = cache.get(key);
    return verdict?.over ? verdict.reason : undefined;
  }

  function remember(key: string, reason: TeardownReason): void {
    cache.set(key, { over: true, reason }, { ttl: overTtl });
  }

  return {
    known(target) {
      return (
        overReason(simulationKey(target)) ?? overReason(rootKey(target)) ?? overReason(namespaceKey(target))
      );
    },

    observeSimulation(sim, target) {
      if (!isSimulationOver(sim)) return undefined;
      remember(simulationKey(target), "simulation-over");
      return "simulation-over";
    },

    markNamespaceTerminating(target) {
      remember(namespaceKey(target), "namespace-terminating");
    },

    async check(target) {
      const known = this.known(target);
      if (known) return known;
      const [root, namespace] = await fetchVerdicts(cache, reads, target);
      if (root?.over) return root.reason;
      if (namespace?.over) return namespace.reason;
      return undefined;
    },
  };
}
