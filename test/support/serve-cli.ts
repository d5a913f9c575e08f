// `simkube-fn serve` from the built bundle (dist/bundle/simkube-fn.mjs, what users and the image run) as a
// child process, for end-to-end tests.

import { type ChildProcess, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const CLI = path.resolve(here, "../../bundle/simkube-fn.mjs");

export interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** Starts `simkube-fn serve` and resolves once it logs "listening" (bounded). */
export async function serveFunction(
  name: string,
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<Served> {
  const child = spawn(process.execPath, [CLI, "serve", name, "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", HOME: tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    out += String(d);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "listening" within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const check = () => {
      for (const line of out.split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
        return;
      }
    };
    child.stdout?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}/`, output: () => out };
}
