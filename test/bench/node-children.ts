// Node children of the benchmarks, started alike: this Node, no NODE_OPTIONS (so every server runs with the
// same flags unless a caller adds some), optionally pinned to a core, cwd at the repository. And the API
// double, a child of its own.

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestCount } from "./api-double-main.js";
import { type Child, isTimedOut, startChild, waitUntil, within } from "./processes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "../../..");
const API_DOUBLE = join(HERE, "api-double-main.js");
const START_TIMEOUT_MS = 20_000;

/** node [...nodeFlags] ...args, behind the pin prefix (e.g. taskset -c 1). */
export function startNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  pin: string[],
  ipc = false,
  nodeFlags: string[] = [],
): Child {
  const { NODE_OPTIONS: _ignored, ...clean } = env;
  const [command, ...rest] = [...pin, process.execPath, ...nodeFlags, ...args] as [string, ...string[]];
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
