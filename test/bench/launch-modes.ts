// npm run bench:launch: how the launcher's choices change a cold start of `serve mutate-create`, on the Node
// that runs this (run it under each major: `npx -p node@22 -- npm run bench:launch`). Contenders, each a copy of
// dist/bundle started in alternating rounds (BENCH_LAUNCH_RUNS, default 12):
//   code cache         as shipped: functions/cli/launcher.ts with V8's code cache, written by this Node
//   code cache, no maps  the same without the .map files (stacks are mapped lazily: this should not differ)
//   compile cache      module.enableCompileCache instead (compile-cache-launcher.ts), warmed by one start
//   no cache           the launcher without a cache file: what the image runs (docs/deploying.md, "The image")
// Per start: spawn to the "listening" log line, and the CPU all its threads used by then (/proc schedstat,
// nanoseconds, Linux). No API server is needed before the first review: the kubeconfig points at port 1.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { REPO } from "./node-children.js";

interface Contender {
  label: string;
  launcher: string;
  maps: boolean;
  warm: boolean;
}

const CONTENDERS: Contender[] = [
  { label: "code cache", launcher: "simkube-fn.mjs", maps: true, warm: true },
  { label: "code cache, no maps", launcher: "simkube-fn.mjs", maps: false, warm: true },
  { label: "compile cache", launcher: "compile-cache-launcher.mjs", maps: true, warm: true },
  { label: "no cache", launcher: "simkube-fn.mjs", maps: true, warm: false },
];
const RUNS = Number(process.env.BENCH_LAUNCH_RUNS || 12);

function environment(dir: string): NodeJS.ProcessEnv {
  const kubeconfig = path.join(dir, "kubeconfig");
  const server = { name: "n", cluster: { server: "https://127.0.0.1:1" } };
  const context = { name: "n", context: { cluster: "n", user: "n" } };
  const config = { apiVersion: "v1", kind: "Config", clusters: [server], contexts: [context] };
  const current = { "current-context": "n" };
  writeFileSync(
    kubeconfig,
    JSON.stringify({ ...config, ...current, users: [{ name: "n", user: { token: "t" } }] }),
  );
  const settings = {
    SIM_NAME: "launch",
    KUBECONFIG: kubeconfig,
    SEQUENCE_STORE: "memory",
    LOG_LEVEL: "info",
  };
  return { PATH: process.env.PATH, HOME: dir, ...settings };
}

/** A copy of dist/bundle for one contender, its cache written by this Node when it has one. */
async function prepare(scratch: string, c: Contender, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = path.join(scratch, c.label.replace(/\W+/g, "-"));
  cpSync(path.join(REPO, "dist/bundle"), dir, { recursive: true });
  for (const f of readdirSync(dir))
    if (f.endsWith(".cache") || (!c.maps && f.endsWith(".map"))) rmSync(path.join(dir, f));
  await build({
    entryPoints: [path.join(REPO, "test/bench/compile-cache-launcher.ts")],
    outfile: path.join(dir, "compile-cache-launcher.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    minifySyntax: true,
    minifyWhitespace: true,
    logLevel: "warning",
  });
  if (c.warm) {
    const args = [path.join(dir, c.launcher), "serve", "mutate-create", "--check", "--port", "0"];
    const warm = spawnSync(process.execPath, args, { env: { ...env, SIMKUBE_FN_WRITE_CODE_CACHE: "1" } });
    if (warm.status !== 0) throw new Error(`${c.label}: warming failed: ${warm.stderr}`);
  }
  return dir;
}

/** CPU time of every thread of `pid` so far, in ms. */
function cpuMs(pid: number): number {
  const tasks = readdirSync(`/proc/${pid}/task`);
  const ns = tasks.map((t) => Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]));
  return ns.reduce((a, b) => a + b, 0) / 1e6;
}

function start(dir: string, c: Contender, env: NodeJS.ProcessEnv): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now();
  const args = [path.join(dir, c.launcher), "serve", "mutate-create", "--port", "0"];
  const child: ChildProcess = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      out += String(d);
      if (!out.includes('"listening"') || child.pid === undefined) return;
      const sample = { ms: performance.now() - started, cpuMs: cpuMs(child.pid) };
      child.stdout?.removeAllListeners("data");
      child.once("exit", () => resolve(sample));
      child.kill("SIGKILL");
    });
    child.stderr?.on("data", (d) => {
      out += String(d);
    });
    child.once("exit", (code) => {
      if (!out.includes('"listening"')) reject(new Error(`${c.label} exited ${code}:\n${out}`));
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "simkube-fn-launch-"));
  try {
    const env = environment(scratch);
    const dirs = await Promise.all(CONTENDERS.map((c) => prepare(scratch, c, env)));
    const samples = CONTENDERS.map(() => [] as { ms: number; cpuMs: number }[]);
    for (let round = 0; round < RUNS; round++) {
      const order = CONTENDERS.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order)
        samples[i]?.push(await start(dirs[i] as string, CONTENDERS[i] as Contender, env));
    }
    const base = median((samples[0] ?? []).map((s) => s.cpuMs));
    console.log(
      `Node ${process.version}, ${RUNS} alternating starts each, load ${os.loadavg()[0]?.toFixed(1)}`,
    );
    console.log("contender              CPU ms median (min)   / code cache   to listening ms median (min)");
    CONTENDERS.forEach((c, i) => {
      const cpu = (samples[i] ?? []).map((s) => s.cpuMs);
      const ms = (samples[i] ?? []).map((s) => s.ms);
      const row = [
        c.label.padEnd(22),
        `${median(cpu).toFixed(1)} (${Math.min(...cpu).toFixed(1)})`.padEnd(21),
        `${(median(cpu) / base).toFixed(2)}`.padEnd(14),
        `${median(ms).toFixed(0)} (${Math.min(...ms).toFixed(0)})`,
      ];
      console.log(row.join(" "));
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
