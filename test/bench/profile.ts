// `npm run bench:profile -- <create|teardown> [seconds] [--tls]`: where a function's time goes per review, under the
// bench's load. Starts the API double, then the function from the compiled modules (dist/functions/cli/main.js,
// not the bundle: every profile entry then names its source file, which is what groups it) with
// `node --cpu-prof` (and BENCH_SERVE_FLAGS, if set), pinned like the bench's servers; checks 1,000 answers with the Node client, loads it
// with wrk for `seconds` (default 10), stops it, and reads the profile V8 wrote at exit.
// `--bare` profiles the bench's baseline (bare-server.ts) under the same load instead, `--floor` the CREATE
// floor (floor-server.ts: bare plus the hash, sequence and patch every CREATE answer needs). `--tls`: over https
// (`serve --tls-cert --tls-key`; the reference servers with TLS_CERT_FILE and TLS_KEY_FILE), as bench:vs-simkube.
// Prints self time per group (µs per review) and the top self-time functions; writes the .cpuprofile under
// dist/profiles/ (open it in Chrome DevTools or VS Code for the call tree).

import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { Agent, get } from "node:https";
import { join } from "node:path";
import { runLoad } from "../../functions/cli/loadtest/load.js";
import { createPki } from "../../functions/local-cluster/pki.js";
import { freePort } from "../../functions/local-cluster/ports.js";
import { removeKubeconfig, writeKubeconfig } from "../support/kubeconfig.js";
import { benchReviews } from "./bench-reviews.js";
import { BENCH_SIM_NAME, BENCH_STORE_NAMESPACE } from "./bench-world.js";
import { REPO, serveNodeEnv, serveNodeFlags, startApiDouble, startNode } from "./node-children.js";
import { pinTo, waitUntil } from "./processes.js";
import { type CpuProfile, formatProfile, summarizeProfile } from "./profile-summary.js";
import { createWrkWorkspace, runWrk, wrkErrors, wrkInstalled } from "./wrk.js";

type Path = "create" | "teardown";
const FUNCTION_OF: Record<Path, string> = { create: "mutate-create", teardown: "reschedule-delete" };
const CHECKED_REVIEWS = 1000;

/** A reference server profiled instead of the function: its label and compiled entry. */
const BASELINES = {
  bare: { label: "bare node:http", entry: "dist/test/bench/bare-server.js" },
  floor: { label: "CREATE floor", entry: "dist/test/bench/floor-server.js" },
} as const;
type Baseline = keyof typeof BASELINES;

/** The certificate and key to serve https with (the local cluster's webhook pair, for 127.0.0.1). */
async function tlsFiles(dir: string): Promise<{ certFile: string; keyFile: string; ca: string }> {
  mkdirSync(join(dir, "pki"));
  const pki = await createPki(join(dir, "pki"));
  return { certFile: pki.webhookCertFile, keyFile: pki.webhookKeyFile, ca: pki.caCertPem };
}

/** Whether the server answers GET /healthz (over https: trusting the run's CA). */
async function healthy(url: URL, ca: string | undefined): Promise<boolean> {
  if (!ca) return (await fetch(new URL("/healthz", url)).catch(() => null))?.ok ?? false;
  return new Promise((resolve) => {
    get(new URL("/healthz", url), { agent: new Agent({ ca }) }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on("error", () => resolve(false));
  });
}

async function profile(
  path: Path,
  seconds: number,
  baseline: Baseline | undefined,
  tls: boolean,
): Promise<number> {
  const fn = baseline ? BASELINES[baseline].label : FUNCTION_OF[path];
  const dir = join(REPO, "dist/profiles", `${path}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const pki = tls ? await tlsFiles(dir) : undefined;
  const api = await startApiDouble(pinTo(0));
  const kubeconfig = await writeKubeconfig(api.url);
  const workspace = createWrkWorkspace();
  try {
    const port = await freePort();
    const env = {
      ...process.env,
      ...(baseline ? {} : serveNodeEnv()),
      PORT: String(port),
      SIM_NAME: BENCH_SIM_NAME,
      KUBECONFIG: kubeconfig,
      LOG_LEVEL: "warn",
      SEQUENCE_STORE: "memory",
      SEQUENCE_NAMESPACE: BENCH_STORE_NAMESPACE,
      ...(pki && baseline ? { TLS_CERT_FILE: pki.certFile, TLS_KEY_FILE: pki.keyFile } : {}),
    };
    // --bare, --floor: a reference server under the same load, to compare group by group (Node HTTP above all).
    const args = baseline
      ? [join(REPO, BASELINES[baseline].entry)]
      : [
          ...[join(REPO, "dist/functions/cli/main.js"), "serve", fn],
          ...(pki ? ["--tls-cert", pki.certFile, "--tls-key", pki.keyFile] : []),
        ];
    const flags = baseline ? [] : serveNodeFlags();
    const server = startNode(args, env, pinTo(1), false, [...flags, "--cpu-prof", `--cpu-prof-dir=${dir}`]);
    const url = new URL(`${pki ? "https" : "http"}://127.0.0.1:${port}/`);
    const ready = await waitUntil(() => healthy(url, pki?.ca), 20_000, 20);
    if (!ready) throw new Error(`${fn} did not start:\n${server.output()}`);
    const requests = benchReviews(path);
    const checked = await runLoad({
      target: url,
      requests: requests.slice(0, CHECKED_REVIEWS),
      concurrency: 64,
      timeoutMs: 30_000,
      check: { allowPatch: path === "create" },
      ...(pki ? { tls: { ca: pki.ca } } : {}),
    });
    const report = await runWrk({
      url,
      script: workspace.script,
      bodies: workspace.writeBodies(path, requests),
      seconds,
      connections: 64,
      noPatch: path === "teardown",
      pin: pinTo(0),
    });
    await server.stop();
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error(`${fn} wrote no profile in ${dir}:\n${server.output()}`);
    const cpu = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
    // Only the wrk run counts: start-up and the checked warm-up come before it.
    const reviews = report.requests;
    process.stdout.write(
      `${fn} (${path}): ${reviews} reviews in the last ${seconds} s profiled (errors: ${checked.errors} checked, ${wrkErrors(report)} wrk), ` +
        `${(report.requests / (report.durationUs / 1e6)).toFixed(0)} rev/s under --cpu-prof\n` +
        `${formatProfile(summarizeProfile(cpu, REPO, report.durationUs), reviews)}\nprofile: ${join(dir, file)}\n`,
    );
    return 0;
  } finally {
    workspace.remove();
    await api.child.stop();
    await removeKubeconfig(kubeconfig);
  }
}

async function cli(args: string[]): Promise<number> {
  const baseline = args.includes("--bare") ? "bare" : args.includes("--floor") ? "floor" : undefined;
  const tls = args.includes("--tls");
  const [path, secondsText] = args.filter((a) => !a.startsWith("--"));
  if ((path !== "create" && path !== "teardown") || (baseline === "floor" && path !== "create")) {
    process.stderr.write(
      "usage: npm run bench:profile -- <create|teardown> [seconds] [--bare | --floor (create only)] [--tls]\n",
    );
    return 2;
  }
  if (!wrkInstalled()) {
    process.stderr.write("bench:profile needs wrk, the load generator: apt-get install -y wrk\n");
    return 2;
  }
  const seconds = Number(secondsText ?? 10);
  return profile(path, Number.isInteger(seconds) && seconds > 0 ? seconds : 10, baseline, tls);
}

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) {
  cli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `bench:profile failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
