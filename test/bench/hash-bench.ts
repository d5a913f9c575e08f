// Pod-spec hash cost against JSON.parse of the same spec text, measured in the same run so the ratio
// survives noisy machines. Also times a plain BigInt SipHash over the same byte stream, the
// implementation the 32-bit-halves one replaced.

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Unpackr } from "msgpackr";
import { podSpecHash, stableSpec } from "../../shared/hash/pod-hash.js";
import { referenceSipHash13 } from "../support/reference-siphash.js";

export interface BenchResult {
  name: string;
  baselineName: string;
  ratio: number;
  details: Record<string, number | string>;
}

const ROUNDS = 15;
const ROUND_BUDGET_MS = 25; // per round and contender: ~1 s in all, with the slow BigInt version

type Json = Record<string, unknown>;

// A real API-server pod (bare-pods.sktrace) when SimKube's traces are around, else one of that shape.
function realisticPod(): { pod: Json; source: string } {
  const here = dirname(fileURLToPath(import.meta.url));
  const path = [
    resolve(here, "../../../../shared/data/simkube-traces/bare-pods.sktrace"),
    resolve(here, "../../../shared/data/simkube-traces/bare-pods.sktrace"),
    resolve(process.cwd(), "../shared/data/simkube-traces/bare-pods.sktrace"),
  ].find((p) => existsSync(p));
  if (path) {
    const unpackr = new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false });
    const toPlain = (v: unknown): unknown =>
      v instanceof Map
        ? Object.fromEntries([...v].map(([k, x]) => [String(k), toPlain(x)]))
        : Array.isArray(v)
          ? v.map(toPlain)
          : v;
    const trace = toPlain(unpackr.unpack(readFileSync(path))) as Json;
    for (const event of trace.events as Json[]) {
      for (const obj of event.applied_objs as Json[])
        if (obj.kind === "Pod") return { pod: obj, source: "bare-pods.sktrace" };
    }
  }
  return { pod: builtInPod(), source: "built-in" };
}

function builtInPod(): Json {
  const toleration = (key: string) => ({
    effect: "NoExecute",
    key,
    operator: "Exists",
    tolerationSeconds: 300,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "bare-pod", namespace: "testing" },
    spec: {
      containers: [
        {
          command: ["sleep", "30"],
          image: "busybox:latest",
          imagePullPolicy: "Always",
          name: "sleeper",
          resources: {},
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          volumeMounts: [
            {
              mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
              name: "kube-api-access-plhnn",
              readOnly: true,
            },
          ],
        },
      ],
      dnsPolicy: "ClusterFirst",
      enableServiceLinks: true,
      nodeName: "kind-worker",
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
      restartPolicy: "Never",
      schedulerName: "default-scheduler",
      securityContext: {},
      serviceAccount: "default",
      serviceAccountName: "default",
      terminationGracePeriodSeconds: 30,
      tolerations: [toleration("node.kubernetes.io/not-ready"), toleration("node.kubernetes.io/unreachable")],
      volumes: [
        {
          name: "kube-api-access-plhnn",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { items: [{ key: "ca.crt", path: "ca.crt" }], name: "kube-root-ca.crt" } },
              {
                downwardAPI: {
                  items: [
                    { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" }, path: "namespace" },
                  ],
                },
              },
            ],
          },
        },
      ],
    },
  };
}

// ---- the naive version: the same byte stream into a number[], then SipHash-1-3 in BigInt ----

const encoder = new TextEncoder();

function naiveBytes(value: unknown, out: number[]): void {
  if (typeof value === "string") {
    out.push(...encoder.encode(value), 0xff);
  } else if (typeof value === "boolean") {
    out.push(value ? 1 : 0);
  } else if (typeof value === "number" || typeof value === "bigint") {
    let n = BigInt.asUintN(64, BigInt(value)); // pod specs hold integers only
    for (let i = 0; i < 8; i++, n >>= 8n) out.push(Number(n & 0xffn));
  } else if (value === null) {
    out.push(0, 0, 0, 0, 0, 0, 0, 0);
  } else if (Array.isArray(value)) {
    for (const v of value) naiveBytes(v, out);
  } else {
    const obj = value as Json;
    for (const key of Object.keys(obj).sort()) {
      naiveBytes(key, out);
      naiveBytes(obj[key], out);
    }
  }
}

function naivePodSpecHash(pod: Json): string {
  const out: number[] = [];
  naiveBytes(stableSpec(pod.spec), out);
  return referenceSipHash13(out).toString();
}

// ---- timing ----

let sink = 0; // results feed this so the work cannot be optimized away

/** Runs `fn` for about `budgetMs`, returns µs per call. */
function timeRound(fn: () => number, budgetMs: number): number {
  let calls = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(budgetMs * 1e6));
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 50; i++) sink ^= fn();
    calls += 50;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / 1000 / calls;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

export async function benchHash(): Promise<BenchResult> {
  const { pod, source } = realisticPod();
  const specText = JSON.stringify(pod.spec);
  const expected = podSpecHash(pod);
  if (naivePodSpecHash(pod) !== expected) throw new Error("naive and fast hashes disagree");

  const hash = () => podSpecHash(pod).length;
  const parse = () => ((JSON.parse(specText) as Json).containers === undefined ? 0 : 1);
  const naive = () => naivePodSpecHash(pod).length;

  for (let i = 0; i < 2000; i++) sink ^= hash() ^ parse(); // warm up the JIT
  for (let i = 0; i < 50; i++) sink ^= naive();

  // Interleaved rounds: a slow patch of the machine hits every contender alike.
  const hashUs: number[] = [];
  const parseUs: number[] = [];
  const naiveUs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    hashUs.push(timeRound(hash, ROUND_BUDGET_MS));
    parseUs.push(timeRound(parse, ROUND_BUDGET_MS));
    naiveUs.push(timeRound(naive, ROUND_BUDGET_MS));
  }
  const hashMedian = median(hashUs);
  const parseMedian = median(parseUs);
  const naiveMedian = median(naiveUs);
  return {
    name: "podSpecHash",
    baselineName: "JSON.parse (same spec)",
    ratio: round2(hashMedian / parseMedian),
    details: {
      pod: source,
      specBytes: specText.length,
      hash: expected,
      podSpecHashUs: round2(hashMedian),
      jsonParseUs: round2(parseMedian),
      naiveBigIntUs: round2(naiveMedian),
      naiveOverFast: round2(naiveMedian / hashMedian),
      sink: sink & 1, // keeps the results alive
    },
  };
}

// `node dist/test/bench/hash-bench.js` runs it alone.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchHash().then((result) => console.log(JSON.stringify(result, null, 2)));
}
