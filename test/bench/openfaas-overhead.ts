// npm run bench:openfaas-overhead: what OpenFaaS CE's data path adds per review, on `cluster up --openfaas`
// with the functions deployed as an OpenFaaS user deploys them (test/support/cluster/openfaas-functions.ts).
// The same CREATE reviews go to mutate-create's one pod along three paths, in one run, the order reversed
// every round:
//   direct     the pod's IP (:8080): of-watchdog in the pod, then the function's handler; no gateway;
//   gateway    the gateway's pod (:8080) at /function/<name>/<secret>, plain HTTP: the gateway proxies to the
//              function's endpoint, then of-watchdog, then the handler;
//   tls-front  what the API server calls: https://localhost:<port>/function/<name>/<secret> over TLS from the
//              run's CA, the TLS front (install.ts; a user's ingress) carrying the bytes to the gateway. The
//              front runs in this process, beside the load, so its figures carry the load's CPU too.
// Each path gets a sequential run (one review at a time: latency per review) and a burst
// (BENCH_OPENFAAS_BURST reviews, BENCH_OPENFAAS_CONCURRENCY at a time: throughput); test/bench/overhead-rows.ts
// says what the reviews are. Prints one JSON object on stdout.

import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import type { DeploymentOptions } from "../../knative/options.js";
import { deployThroughOpenfaas, openfaasFunctionName } from "../support/cluster/openfaas-functions.js";
import { startOpenfaasBenchCluster } from "./bench-clusters.js";
import { measureRounds, type Target as OverheadTarget, overheadSettings, summary } from "./overhead-rows.js";

const SETTINGS = overheadSettings("BENCH_OPENFAAS");
const WATCHDOG_PORT = 8080;
const PATHS = ["direct", "gateway", "tls-front"] as const;
type Target = OverheadTarget<(typeof PATHS)[number]>;

async function functionPodIp(c: LocalCluster, namespace: string, name: string): Promise<string> {
  const list = await c.admin.request<{ items: { status?: { phase?: string; podIP?: string } }[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`faas_function=${name}`)}`,
  );
  const running = list.items.filter((p) => p.status?.phase === "Running" && p.status.podIP);
  if (running.length !== 1) throw new Error(`${name}: ${running.length} running pods, want exactly 1`);
  return running[0]?.status?.podIP ?? "";
}

async function targets(c: LocalCluster, options: DeploymentOptions): Promise<Target[]> {
  const o = resolveOptions(options);
  const openfaas = c.openfaas;
  if (!openfaas) throw new Error("no OpenFaaS");
  const name = openfaasFunctionName(options, "mutate-create");
  const secretPath = `/${o.pathSecret ?? ""}`;
  const ip = await functionPodIp(c, o.namespace, name);
  const front = new URL(openfaas.webhookGatewayUrl);
  return [
    { name: "direct", url: new URL(`http://${ip}:${WATCHDOG_PORT}${secretPath}`) },
    { name: "gateway", url: new URL(`/function/${name}${secretPath}`, openfaas.gatewayUrl) },
    {
      name: "tls-front",
      url: new URL(`/function/${name}${secretPath}`, front),
      tls: { ca: c.caCertPem, servername: front.hostname },
    },
  ];
}

async function main(): Promise<void> {
  const { cluster: c, images } = await startOpenfaasBenchCluster();
  try {
    const deployed = await deployThroughOpenfaas(c, images);
    const all = await targets(c, deployed.options);
    const rows = await measureRounds(SETTINGS, all, (line) =>
      process.stderr.write(`  openfaas bench: ${line}\n`),
    );
    process.stdout.write(
      `${JSON.stringify({ concurrency: SETTINGS.concurrency, summary: summary(rows, PATHS, "direct"), rows }, null, 2)}\n`,
    );
  } finally {
    await c.stop();
  }
}

await main();
