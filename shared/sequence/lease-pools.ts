// This replica's lease on a shard as it lives in this process: the pools of numbers reserved ahead and
// handed out without a write, refilled before they run out, and the timer that renews the lease or lets
// it go. The rules themselves (when a lease binds, how a reserve grows) are pure, in lease.ts.

import type { Counter, ShardWrite, StoreState } from "./counter-state.js";
import { HOLDER_VALID_MS, LEASE_IDLE_MS, LEASE_RENEW_MS, type Pool } from "./lease.js";

/** Pools to refill before callers have to wait for a write: those with less than half their reserve left. */
export function lowPools(counter: Counter): string[] {
  const lease = counter.lease;
  if (lease === undefined || lease.releasing) return [];
  const low: string[] = [];
  for (const [hash, pool] of lease.pools) if (isLow(pool)) low.push(hash);
  return low;
}

export const isLow = (pool: Pool): boolean => pool.limit - pool.next < pool.reserve / 2;

/** The next number of a hash from our lease's pool, if the lease is ours to use now and the pool has one. */
export function takeFromPool(counter: Counter, hash: string, now: number): number | undefined {
  const lease = counter.lease;
  if (lease === undefined || lease.releasing || now >= lease.validUntil) return undefined;
  const pool = lease.pools.get(hash);
  if (pool === undefined || pool.next >= pool.limit) return undefined;
  lease.lastUse = now;
  const seq = pool.next;
  pool.next += 1;
  return seq;
}

/** Waiting callers get numbers from the pools, in queue order. */
export function serveFromPools(state: StoreState, counter: Counter): void {
  if (counter.lease === undefined) return;
  const now = state.settings.now();
  for (const p of counter.queue) {
    if (p.settled) continue;
    const seq = takeFromPool(counter, p.hash, now);
    if (seq === undefined) continue;
    p.settled = true;
    p.resolve(seq);
  }
}

/** A lease write landed: the lease is ours (again) for HOLDER_VALID_MS, with the pools grown. */
export function installPools(state: StoreState, counter: Counter, write: ShardWrite): void {
  let lease = counter.lease;
  if (lease === undefined) {
    const timer = setInterval(() => leaseTick(state, counter), LEASE_RENEW_MS);
    timer.unref();
    lease = {
      pools: new Map(),
      validUntil: 0,
      renewedAt: 0,
      lastUse: write.plannedAt,
      wanted: false,
      releasing: false,
      timer,
    };
    counter.lease = lease;
  }
  for (const [hash, grown] of write.grow) {
    const pool = lease.pools.get(hash);
    if (pool === undefined) {
      lease.pools.set(hash, {
        next: grown.from,
        limit: grown.limit,
        reserve: grown.reserve,
        refilledAt: write.plannedAt,
      });
    } else {
      pool.limit = grown.limit;
      pool.reserve = grown.reserve;
      pool.refilledAt = write.plannedAt;
    }
  }
  lease.renewedAt = write.plannedAt;
  lease.validUntil = write.plannedAt + HOLDER_VALID_MS;
  if (counter.chore === "renew") counter.chore = undefined;
  serveFromPools(state, counter);
}

/** The lease is over (let go, or lost): what its pools held is no longer ours to hand out. */
export function dropLease(counter: Counter): void {
  if (counter.lease === undefined) return;
  clearInterval(counter.lease.timer);
  counter.lease = undefined;
}

/** Every LEASE_RENEW_MS while we hold a lease: let go when idle or asked, else renew it (and so see requests). */
function leaseTick(state: StoreState, counter: Counter): void {
  const lease = counter.lease;
  if (lease === undefined) return;
  const now = state.settings.now();
  if (now - lease.lastUse >= LEASE_IDLE_MS || lease.wanted) counter.chore = "release";
  else if (now - lease.renewedAt >= LEASE_RENEW_MS) counter.chore ??= "renew";
  else return;
  state.startDrain(counter);
}
