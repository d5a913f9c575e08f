// The review latency histogram (simkube_fn_admission_duration_seconds{function,outcome}), kept in plain
// arrays and written as Prometheus text next to the Registry's (metrics.ts's exposition), in the same text
// prom-client's own Histogram writes (test/unit/latency-histogram.test.ts compares the two). Why not
// prom-client's Histogram: it validates and hashes the label set on every observe, 1.2-1.4 µs of every review
// in the profiles (docs/performance.md, "History"); here an observe is a Map lookup and a walk over the
// bounds. Why not a metric object registered into the Registry: the Registry formats only its own metric
// classes through public API (a foreign object works only through its undocumented getForPromString/get
// protocol), and this text format is small and fixed (Prometheus exposition format 0.0.4).

interface Series {
  /** Observations per bucket (not cumulative), one per bound. */
  buckets: number[];
  sum: number;
  count: number;
  /** The series' labels, formatted once: function="...",outcome="..." */
  labels: string;
}

/** A label value or HELP text as the exposition format escapes it (backslash, newline; and " in labels). */
function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value as Prometheus writes it (+Inf, -Inf, NaN). */
function sampleValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : "-Inf";
  return String(value);
}

export class LatencyHistogram {
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly fn: string,
  ) {}

  observe(outcome: string, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    let series = this.series.get(outcome);
    if (series === undefined) {
      const labels = `function="${escapeLabelValue(this.fn)}",outcome="${escapeLabelValue(outcome)}"`;
      series = { buckets: this.bounds.map(() => 0), sum: 0, count: 0, labels };
      this.series.set(outcome, series);
    }
    const i = this.bounds.findIndex((bound) => seconds <= bound);
    if (i >= 0) series.buckets[i] = (series.buckets[i] as number) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  /**
   * The metric in the text exposition format, as a Registry holding only prom-client's Histogram writes it:
   * HELP and TYPE, then per series (in order of first observation) the cumulative buckets, +Inf, sum and
   * count; one line each, the last one ending in a newline.
   */
  exposition(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets[i] as number;
        lines.push(`${this.name}_bucket{le="${sampleValue(le)}",${s.labels}} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket{le="+Inf",${s.labels}} ${s.count}`);
      lines.push(`${this.name}_sum{${s.labels}} ${sampleValue(s.sum)}`);
      lines.push(`${this.name}_count{${s.labels}} ${s.count}`);
    }
    return `${lines.join("\n")}\n`;
  }

  reset(): void {
    this.series.clear();
  }
}
