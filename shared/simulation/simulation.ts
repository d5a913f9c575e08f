// The simkube.io/v1 Simulations this function serves: its shape, pure readers, and a short-lived cache.

import { LRUCache } from "lru-cache";
import { SIMKUBE_API_VERSION, SIMULATION_KIND } from "../base/index.js";
import type { KubeApi, KubeObject } from "../kube/index.js";

export interface LifecycleParams {
  imagePullDelay?: number;
  imagePullJitter?: number;
  podStartupDelay?: number;
  podStartupJitter?: number;
}

export interface SimulationSpec {
  speed?: number;
  rescheduleInterruptedBarePods?: boolean;
  lifecycleParams?: LifecycleParams;
  driver?: { namespace?: string; virtualNsPrefix?: string; tracePath?: string };
}

export type SimulationState =
  | "Blocked"
  | "Initializing"
  | "Finished"
  | "Failed"
  | "Paused"
  | "Retrying"
  | "Running";

export interface Simulation extends KubeObject {
  spec?: SimulationSpec;
  status?: { state?: SimulationState | string; startTime?: string; endTime?: string };
}

export const DEFAULT_VIRTUAL_NS_PREFIX = "virtual";

/** spec.speed, 1 when unset; a non-positive or non-finite speed is a broken Simulation, not a default. */
export function simulationSpeed(sim: Simulation): number {
  const speed = sim.spec?.speed;
  if (speed === undefined || speed === null) return 1;
  if (typeof speed !== "number" || !Number.isFinite(speed) || speed <= 0) {
    throw new Error(`Simulation ${sim.metadata?.name ?? ""} has an invalid spec.speed: ${String(speed)}`);
  }
  return speed;
}

/**
 * The SimulationRoot SimKube's driver creates for the Simulation `simName`: its driver Job is named
 * `sk-<sim>-driver` and the root is that name plus `-root` (sk-ctrl/src/objects.rs, sk-driver/src/runner.rs).
 * It owns the simulation's virtual namespaces and every object the driver applies.
 */
export function driverRootName(simName: string): string {
  return `sk-${simName}-driver-root`;
}

export function virtualNsPrefix(sim: Simulation): string {
  return sim.spec?.driver?.virtualNsPrefix || DEFAULT_VIRTUAL_NS_PREFIX;
}

export function wantsBarePodRescheduling(sim: Simulation): boolean {
  return sim.spec?.rescheduleInterruptedBarePods === true;
}

/** Finished, failed or being deleted: nothing the simulation does from now on is an interruption. */
export function isSimulationOver(sim: Simulation): boolean {
  const state = sim.status?.state;
  return state === "Finished" || state === "Failed" || Boolean(sim.metadata?.deletionTimestamp);
}

/** The lifecycleParams delay, as the `<n>ms` string KWOK's stages read; 0 when unset. */
export function delayAnnotationValue(millis: number | undefined): string {
  if (millis === undefined || millis === null) return "0ms";
  if (!Number.isInteger(millis) || millis < 0)
    throw new Error(`lifecycleParams delay must be a whole number of ms, got ${millis}`);
  return `${millis}ms`;
}

export interface SimulationSource {
  /**
   * The Simulation `name` (default: the one the source was created for), read at most once per TTL however
   * many reviews ask at once. One source serves every Simulation a deployment without SIM_NAME meets.
   */
  get(name?: string): Promise<Simulation>;
  /** The Simulation `name` if a copy younger than the TTL is cached (no read, no promise); else undefined. */
  cached(name?: string): Simulation | undefined;
  /** Forget the cached copies (the next get() reads the API). */
  invalidate(): void;
}

export interface SimulationSourceOptions {
  ttlMs?: number;
  /** Milliseconds clock; injectable so tests need no sleeps. */
  now?: () => number;
  /** How many Simulations are remembered at once. */
  maxEntries?: number;
}

export function createSimulationSource(
  kube: KubeApi,
  simName?: string,
  options: SimulationSourceOptions = {},
): SimulationSource {
  const now = options.now ?? (() => performance.now());
  const cache = new LRUCache<string, Simulation>({
    max: options.maxEntries ?? 256,
    ttl: options.ttlMs ?? 5_000,
    perf: { now },
    // Read the clock on every get: the default caches it for 1 ms behind a timer, one more timer per review.
    ttlResolution: 0,
    fetchMethod: async (name) =>
      kube.read<Simulation>({ apiVersion: SIMKUBE_API_VERSION, kind: SIMULATION_KIND, name }),
  });
  return {
    cached: (name = simName) => (name ? cache.get(name) : undefined),
    async get(name = simName) {
      if (!name) throw new Error("no Simulation name: SIM_NAME is unset and none was found for this pod");
      // A hit needs no fetch(): it makes a promise and its bookkeeping even for a cached value.
      const sim = cache.get(name) ?? (await cache.fetch(name));
      if (sim === undefined) throw new Error(`Simulation ${name} could not be read`);
      return sim;
    },
    invalidate() {
      cache.clear();
    },
  };
}

/** spec.driver.tracePath: where the Simulation's driver reads its trace (file path, file:// or http(s):// URL). */
export function simulationTracePath(sim: Simulation): string | undefined {
  const location = sim.spec?.driver?.tracePath;
  return typeof location === "string" && location.trim() !== "" ? location.trim() : undefined;
}
