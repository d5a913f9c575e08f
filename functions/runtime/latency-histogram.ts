// The review latency histogram (simkube_fn_admission_duration_seconds{function,outcome}), kept in plain
// arrays and served through prom-client's Registry as the same text prom-client's own Histogram writes
// (test/unit/latency-histogram.test.ts compares the two). Why not prom-client's Histogram: it validates and
// hashes the label set on every observe, 1.2-1.4 µs of every review in the profiles (docs/performance.md, "History");
// here an observe is a Map lookup and a walk over the bounds.

import type { Metric, Registry } from "prom-client";

interface Series {
  /** Observations per bucket (not cumulative), one per bound. */
  buckets: number[];
  sum: number;
  count: number;
  /** One object per series: the Registry caches its formatted labels by identity. */
  labels: { function: string; outcome: string };
}

/** One sample as prom-client's Registry formats it (its Histogram's shape). */
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels: Series["labels"];
  value: number;
  metricName: string;
}

export class LatencyHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly fn: string,
    registry: Registry,
  ) {
    // The Registry only calls name, help, type, get() and reset(); its type lists prom-client's classes.
    registry.registerMetric(this as unknown as Metric);
  }

  observe(outcome: string, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let series = this.series.get(outcome);
    if (series === undefined) {
      const labels = { function: this.fn, outcome };
      series = { buckets: this.bounds.map(() => 0), sum: 0, count: 0, labels };
      this.series.set(outcome, series);
    }
    const i = this.bounds.findIndex((bound) => seconds <= bound);
    if (i >= 0) series.buckets[i] = (series.buckets[i] as number) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  /**
   * What the Registry formats for /metrics (it prefers this to get()): the samples in prom-client's order,
   * cumulative buckets, +Inf, sum, count, series in order of first observation.
   */
  getForPromString(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets[i] as number;
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** As prom-client's get() (the Registry's JSON): each sample's labels with the series' labels merged in. */
  get(): ReturnType<LatencyHistogram["getForPromString"]> {
    const data = this.getForPromString();
    const values = data.values.map((v) => ({ ...v, labels: { ...v.labels, ...v.sharedLabels } }));
    return { ...data, values };
  }

  reset(): void {
    this.series.clear();
  }
}
