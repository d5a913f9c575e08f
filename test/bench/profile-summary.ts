// Pure: a V8 CPU profile (.cpuprofile, as `node --cpu-prof` writes it) summarised as self time per group and
// per function. Groups say what kind of work it is (JSON, patch building, logging, counters, HTTP...), from
// the source file a function comes from, so they only mean something for a profile of unbundled modules.

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  /** Self time in microseconds. */
  us: number;
}

export interface ProfileSummary {
  /** Busy self time (everything but idle), µs. */
  busyUs: number;
  idleUs: number;
  groups: ProfileEntry[];
  top: ProfileEntry[];
}

// First match wins: the more specific patterns come first.
const GROUPS: readonly [string, RegExp][] = [
  ["GC", /^\(garbage collector\)@/],
  ["V8 runtime/compiler (program)", /^\(program\)@/],
  [
    "logging (pino, shared/log)",
    /node_modules\/(pino|sonic-boom|thread-stream|pino-std-serializers|quick-format-unescaped|fast-redact|@pinojs)|\/shared\/log\.js/,
  ],
  [
    "patch building (fast-json-patch, plans)",
    /node_modules\/fast-json-patch|\/functions\/mutate-create\/.*plan\.js/,
  ],
  ["pod hash (shared/pod-hash, siphash)", /\/shared\/(pod-hash|siphash)\.js/],
  ["counters (shared/counters, stats)", /\/shared\/counters\.js|\/functions\/[^/]+\/stats\.js/],
  ["JSON parse/serialise", /^(parse|stringify|JSONParse|JsonParse|JsonStringify|SerializeJSON)@(node:)?$/],
  ["admission parse/answer (shared/admission)", /\/shared\/admission\.js/],
  ["HTTP adapter (runtime/http-server)", /\/functions\/runtime\/http-server\.js/],
  ["express", /node_modules\/(express|router|body-parser|finalhandler|send|on-finished|qs|debug)\//],
  [
    "Node HTTP, streams, sockets (node:*)",
    /@node:|^(writev|writeUtf8String|writeBuffer|writeLatin1String|onStreamRead|execute|consume)@$/,
  ],
  ["function code (handlers, shared/*)", /\/(functions|shared)\//],
  ["other libraries", /node_modules\//],
];

/** Pure: which group a function (name@url) belongs to. */
export function groupOf(functionName: string, url: string): string {
  const key = `${functionName}@${url}`;
  for (const [group, pattern] of GROUPS) if (pattern.test(key)) return group;
  return url === "" ? "native (V8 builtins, other)" : "other";
}

function shortUrl(url: string, repoRoot: string): string {
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) return path.slice(nm + "node_modules/".length);
  return path.startsWith(repoRoot) ? path.slice(repoRoot.length + 1) : path;
}

function sorted(map: Map<string, number>, limit = Number.POSITIVE_INFINITY): ProfileEntry[] {
  return [...map]
    .map(([name, us]) => ({ name, us }))
    .sort((a, b) => b.us - a.us)
    .slice(0, limit);
}

/**
 * Self time per group and per function, counting only the last `windowUs` of samples (the load; start-up,
 * module loading and warm-up come before it and are not per-review costs). Default: the whole profile.
 */
export function summarizeProfile(
  profile: CpuProfile,
  repoRoot: string,
  windowUs = Number.POSITIVE_INFINITY,
  topN = 15,
): ProfileSummary {
  const times: number[] = [];
  let t = 0;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  const from = t - windowUs;
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    if ((times[i] ?? 0) < from) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const group = groupOf(functionName, url);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const name = `${functionName || "(anonymous)"} ${url ? `${shortUrl(url, repoRoot)}:${lineNumber + 1}` : "(native)"}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  return { busyUs, idleUs, groups: sorted(groups), top: sorted(functions, topN) };
}

/** Pure: the summary as text, in µs per review. */
export function formatProfile(summary: ProfileSummary, reviews: number): string {
  const perReview = (us: number) => (us / Math.max(1, reviews)).toFixed(1).padStart(7);
  const share = (us: number) => `${((100 * us) / Math.max(1, summary.busyUs)).toFixed(1).padStart(5)}%`;
  const lines = [
    `busy ${perReview(summary.busyUs)} µs/review (idle ${((100 * summary.idleUs) / Math.max(1, summary.busyUs + summary.idleUs)).toFixed(0)}% of the profile)`,
    "self time by group (µs/review, share of busy):",
    ...summary.groups.map((g) => `  ${perReview(g.us)}  ${share(g.us)}  ${g.name}`),
    "top functions by self time:",
    ...summary.top.map((f) => `  ${perReview(f.us)}  ${share(f.us)}  ${f.name}`),
  ];
  return lines.join("\n");
}
