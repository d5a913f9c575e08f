// What the API server's own counters say about one webhook: how many times it called it, and how many
// requests its match conditions kept from it. Read from kube-apiserver's /metrics (Prometheus text format;
// k8s.io/apiserver pkg/admission/metrics/metrics.go), so a bench can show a webhook was registered and
// evaluated even when it was never called. Pure parsing here; the GET is the caller's.

/** A webhook's counters at one moment (each a running total since the API server started). */
export interface WebhookCounters {
  /** apiserver_admission_webhook_admission_duration_seconds_count: calls made, answered or not. */
  calls: number;
  /** apiserver_admission_match_condition_exclusions_total: requests a match condition kept from it. */
  matchConditionExclusions: number;
}

const CALLS = "apiserver_admission_webhook_admission_duration_seconds_count";
const EXCLUSIONS = "apiserver_admission_match_condition_exclusions_total";

/** `name{labels} value` → its parts; undefined for comments and blank lines. */
function sample(line: string): { metric: string; labels: string; value: number } | undefined {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
  if (!match) return undefined;
  return { metric: match[1] ?? "", labels: match[2] ?? "", value: Number(match[3]) };
}

function labelStartsWith(labels: string, label: string, prefix: string): boolean {
  return labels.startsWith(`${label}="${prefix}`) || labels.includes(`,${label}="${prefix}`);
}

/** The counters of every webhook whose name starts with `webhookPrefix`, summed over their other labels. */
export function webhookCounters(metricsText: string, webhookPrefix: string): WebhookCounters {
  const counters: WebhookCounters = { calls: 0, matchConditionExclusions: 0 };
  for (const line of metricsText.split("\n")) {
    const s = sample(line);
    if (!s || !labelStartsWith(s.labels, "name", webhookPrefix)) continue;
    if (s.metric === CALLS) counters.calls += s.value;
    else if (s.metric === EXCLUSIONS) counters.matchConditionExclusions += s.value;
  }
  return counters;
}

/** What happened between two readings. */
export function countersBetween(before: WebhookCounters, after: WebhookCounters): WebhookCounters {
  return {
    calls: after.calls - before.calls,
    matchConditionExclusions: after.matchConditionExclusions - before.matchConditionExclusions,
  };
}
