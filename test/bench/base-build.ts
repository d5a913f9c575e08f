// Another commit's code, compiled in a temporary copy, for benches that measure a change against its base in
// one run: `git archive <commit>` unpacked into a temporary folder, this checkout's node_modules linked in,
// `tsc -p tsconfig.json` (no bundle). The copy is removed afterwards; the checkout is never touched.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { REPO } from "./node-children.js";

export interface BaseBuild {
  commit: string;
  /** The compiled tree: <distRoot>/shared/..., <distRoot>/functions/... */
  distRoot: string;
  remove(): void;
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();

/** `ref` (default: the merge-base of HEAD and main) as a full commit id; throws saying what is missing. */
export function resolveBase(ref: string | undefined): string {
  try {
    return git("rev-parse", "--verify", `${ref ?? git("merge-base", "HEAD", "main")}^{commit}`);
  } catch (err) {
    throw new Error(
      `no base commit to compare with (${ref ?? "merge-base of HEAD and main"}): set BENCH_SEQUENCE_BASE=<commit> (${(err as Error).message.split("\n")[0]})`,
    );
  }
}

export function buildBase(ref: string | undefined): BaseBuild {
  const commit = resolveBase(ref);
  const dir = mkdtempSync(join(os.tmpdir(), "simkube-fn-base-"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const archive = spawnSync("git", ["archive", commit], { cwd: REPO, maxBuffer: 1 << 30 });
    if (archive.status !== 0) throw new Error(`git archive ${commit}: ${archive.stderr.toString()}`);
    const untar = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
    if (untar.status !== 0) throw new Error(`tar: ${untar.stderr.toString()}`);
    symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
    process.stdout.write(`building ${commit.slice(0, 12)} in ${dir} ...\n`);
    const tsc = spawnSync(join(REPO, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], {
      cwd: dir,
      encoding: "utf8",
    });
    if (tsc.status !== 0) throw new Error(`tsc in the base copy failed:\n${tsc.stdout}${tsc.stderr}`);
    return { commit, distRoot: join(dir, "dist"), remove };
  } catch (err) {
    remove();
    throw err;
  }
}
