// Named counters a function keeps about its decisions; the server serves a snapshot at GET /stats.

export interface Counters {
  inc(name: string, by?: number): void;
  get(name: string): number;
  snapshot(): Record<string, number>;
}

export function createCounters(): Counters {
  const values = new Map<string, number>();
  return {
    inc(name, by = 1) {
      values.set(name, (values.get(name) ?? 0) + by);
    },
    get(name) {
      return values.get(name) ?? 0;
    },
    snapshot() {
      return Object.fromEntries([...values.entries()].sort(([a], [b]) => a.localeCompare(b)));
    },
  };
}
