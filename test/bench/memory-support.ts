// What `npm run bench:memory` (memory.ts, memory-trace.ts) shares: the API double and mutate-create as child
// processes, ~3 MiB CREATE reviews, and posting them.

import http from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../functions/local-cluster/ports.js";
import { MAX_BODY_BYTES } from "../../functions/runtime/http-server.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import { buildCreateReview, buildPod, rootOwnerRef } from "../support/builders.js";
import { BENCH_ROOT_NAME, BENCH_ROOT_UID, BENCH_VIRTUAL_NAMESPACES } from "./bench-world.js";
import { procStatusBytes } from "./proc-status.js";
import { type Child, startChild, waitUntil } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "../../..");
/** Just under the server's limit, envelope included. */
const REVIEW_BYTES = MAX_BODY_BYTES - 4 * 1024;
export const MiB = 1024 * 1024;

export type Shape = "many small objects" | "one big string";

export function procKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  return (procStatusBytes(pid, field) ?? Number.NaN) / 1024;
}

/** A CREATE review of a pod of the bench simulation; Running pods need a lifecycle, so their trace. */
function review(name: string, phase: "Running" | null, fill?: (pod: ReturnType<typeof buildPod>) => void) {
  const pod = buildPod({
    name,
    namespace: BENCH_VIRTUAL_NAMESPACES[0] as string,
    phase,
    ownerReferences: [rootOwnerRef(BENCH_ROOT_NAME, BENCH_ROOT_UID)],
  });
  fill?.(pod);
  return JSON.stringify(buildCreateReview({ pod }));
}

export function smallReview(i: number, phase: "Running" | null = null): string {
  return review(`warm-${i}`, phase);
}

export function bigReview(i: number, shape: Shape, phase: "Running" | null = null): string {
  const room = REVIEW_BYTES - review(`big-${i}`, phase).length;
  const text = review(`big-${i}`, phase, (pod) => {
    if (shape === "one big string") {
      pod.metadata = { ...pod.metadata, annotations: { "example.com/config": "x".repeat(room - 40) } };
      return;
    }
    const env: { name: string; value: string }[] = [];
    for (let used = 0, n = 0; ; n++) {
      const entry = { name: `VAR_${i}_${n}`, value: "v".repeat(60) };
      used += JSON.stringify(entry).length + 1;
      if (used > room - 100) break;
      env.push(entry);
    }
    (pod.spec as { containers: Record<string, unknown>[] }).containers[0] = {
      name: "container-0",
      image: "nginx:1.27",
      env,
    };
  });
  if (text.length > MAX_BODY_BYTES) throw new Error(`review ${text.length} bytes is over the limit`);
  return text;
}

/** True when admitted with a patch; otherwise why not (HTTP status or the denial message). */
export function post(port: number, body: string): Promise<true | string> {
  return new Promise((resolvePost) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/",
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return resolvePost(`HTTP ${res.statusCode}`);
          const response = (JSON.parse(text) as AdmissionReview).response;
          if (response?.allowed === true && response.patch !== undefined) return resolvePost(true);
          resolvePost(response?.status?.message ?? "allowed without a patch");
        });
      },
    );
    req.on("error", (err) => resolvePost(err.message));
    req.end(body);
  });
}

export async function startApiDouble(env: NodeJS.ProcessEnv = {}): Promise<{ child: Child; url: string }> {
  const child = startChild(process.execPath, [join(HERE, "api-double-main.js")], {
    ipc: true,
    cwd: REPO,
    env: { ...process.env, ...env },
  });
  let url = "";
  const ready = await waitUntil(
    async () => {
      const line = child.output().split("\n")[0] ?? "";
      if (line.startsWith("{")) url = (JSON.parse(line) as { url: string }).url;
      return url !== "";
    },
    20_000,
    10,
  );
  if (!ready) throw new Error(`the API double did not start:\n${child.output()}`);
  return { child, url };
}

/** `serve mutate-create` from the built bundle, as deployed, on a free port; resolves once /healthz answers. */
export async function startMutateCreate(env: NodeJS.ProcessEnv): Promise<{ fn: Child; port: number }> {
  const port = await freePort();
  const fnEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port) };
  for (const [key, value] of Object.entries(fnEnv)) if (value === undefined) delete fnEnv[key];
  const fn = startChild(
    process.execPath,
    [join(REPO, "dist/bundle/simkube-fn.mjs"), "serve", "mutate-create"],
    {
      env: fnEnv,
      cwd: REPO,
    },
  );
  const up = await waitUntil(
    () =>
      new Promise((ok) =>
        http
          .get(`http://127.0.0.1:${port}/healthz`, (r) => ok(r.statusCode === 200))
          .on("error", () => ok(false)),
      ),
    20_000,
    20,
  );
  if (!up) {
    await fn.stop();
    throw new Error(`mutate-create did not start:\n${fn.output()}`);
  }
  return { fn, port };
}
