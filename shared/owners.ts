// Owner chains: every object a pod is owned by, directly or through its owners, resolved through the API.
// SimKube follows ownerReferences recursively (sk-core/src/k8s/owners.rs); so do we, with two differences
// that matter for a webhook that must fail closed: an API failure is an error, not a skipped owner (a
// skipped SimulationRoot would let a simulated pod through unmutated), and lookups are cached and shared.

import type { V1OwnerReference } from "@kubernetes/client-node";
import { LRUCache } from "lru-cache";
import { SIMKUBE_API_VERSION, SIMKUBE_IO_PREFIX, SIMULATION_KIND, SIMULATION_ROOT_KIND } from "./keys.js";
import type { KubeApi, KubeObject } from "./kube-api.js";
import { isNotFound } from "./kube-api.js";
import type { Logger } from "./log.js";

export type OwnerReference = V1OwnerReference;

/** One owner in a chain, with the owner's own ownerReferences (empty when it could not be found). */
export interface OwnerLink {
  ref: OwnerReference;
  ownedBy: OwnerReference[];
}

export interface OwnerResolver {
  ownerChain(object: KubeObject): Promise<OwnerLink[]>;
}

export interface OwnerResolverOptions {
  /** How many owners' references are remembered; owners rarely change during a simulation. */
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

/** A pod the simulation owns through a SimulationRoot that the Simulation `simName` owns. */
export function simulationRootOf(chain: readonly OwnerLink[], simName: string): OwnerReference | undefined {
  return chain.find(
    (link) =>
      link.ref.apiVersion === SIMKUBE_API_VERSION &&
      link.ref.kind === SIMULATION_ROOT_KIND &&
      link.ownedBy.some(
        (owner) =>
          owner.apiVersion === SIMKUBE_API_VERSION &&
          owner.kind === SIMULATION_KIND &&
          owner.name === simName,
      ),
  )?.ref;
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

export function createOwnerResolver(
  kube: KubeApi,
  log: Logger,
  options: OwnerResolverOptions = {},
): OwnerResolver {
  const now = options.now ?? (() => performance.now());
  // Caches each owner's own ownerReferences; fetch() also merges concurrent lookups of one owner into one
  // API call, which is what a burst of pods from one ReplicaSet needs.
  const cache = new LRUCache<string, OwnerReference[], { namespace: string; ref: OwnerReference }>({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? 5 * 60_000,
    perf: { now },
    fetchMethod: async (_key, _stale, { context }) => {
      const { namespace, ref } = context;
      try {
        const owner = await kube.read({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          name: ref.name,
          namespace,
        });
        return ownerReferencesOf(owner);
      } catch (err) {
        // Gone, or a kind this cluster does not serve (e.g. a CRD that was not installed): skip it, as SimKube does.
        if (isNotFound(err)) {
          log.warn(
            { owner: { kind: ref.kind, name: ref.name, namespace }, err },
            "owner not found; skipping it",
          );
          return [];
        }
        throw err;
      }
    },
  });

  async function resolve(
    namespace: string,
    refs: OwnerReference[],
    depth: number,
    seen: Set<string>,
  ): Promise<OwnerLink[]> {
    const chain: OwnerLink[] = [];
    for (const ref of refs) {
      if (!isUsableRef(ref)) {
        log.warn({ ref }, "malformed owner reference; skipping it");
        continue;
      }
      const key = ownerKey(namespace, ref);
      if (seen.has(key) || depth >= MAX_DEPTH) {
        log.warn(
          { owner: { kind: ref.kind, name: ref.name } },
          "owner reference cycle or chain too deep; stopping",
        );
        continue;
      }
      const ownedBy = (await cache.fetch(key, { context: { namespace, ref } })) ?? [];
      chain.push({ ref, ownedBy });
      chain.push(...(await resolve(namespace, ownedBy, depth + 1, new Set([...seen, key]))));
    }
    return chain;
  }

  return {
    ownerChain(object) {
      return resolve(object.metadata?.namespace ?? "", ownerReferencesOf(object), 0, new Set());
    },
  };
}
