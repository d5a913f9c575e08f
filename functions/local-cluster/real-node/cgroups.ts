// The real node's cgroup root: one directory, /simkube-fn-node-<i>, in every cgroup hierarchy the machine
// mounts (kubelet's cgroupfs driver wants its cgroupRoot to exist in each). kubelet creates kubepods/... below
// it; nothing else of the machine's cgroups is touched. removeCgroupRoot takes the tree away, deepest first,
// once the node's processes are gone.

import { readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/** Mount points of cgroup v1 and v2 file systems, from /proc/self/mountinfo's text. */
export function cgroupMountPoints(mountinfo: string): string[] {
  const points: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fsType = right.split(" ")[0];
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    const mountPoint = left.split(" ")[4];
    if (mountPoint) points.push(mountPoint.replace(/\\040/g, " "));
  }
  return points;
}

export function machineCgroupMountPoints(): string[] {
  return cgroupMountPoints(readFileSync("/proc/self/mountinfo", "utf8"));
}

/** cpuset needs cpus and mems before a task may join; a new v1 cpuset directory starts with both empty. */
async function copyCpuset(mount: string, dir: string): Promise<void> {
  for (const file of ["cpuset.cpus", "cpuset.mems"]) {
    const parent = path.join(mount, file);
    const own = path.join(dir, file);
    try {
      if ((await readFile(own, "utf8")).trim() === "") await writeFile(own, await readFile(parent, "utf8"));
    } catch {
      // not a cpuset hierarchy
    }
  }
}

export async function createCgroupRoot(name: string, mounts = machineCgroupMountPoints()): Promise<void> {
  for (const mount of mounts) {
    const dir = path.join(mount, name);
    await mkdir(dir, { recursive: true });
    await copyCpuset(mount, dir);
  }
}

function removeTree(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).filter((entry) => statSync(path.join(dir, entry)).isDirectory());
  } catch {
    return [];
  }
  const left = entries.flatMap((entry) => removeTree(path.join(dir, entry)));
  try {
    rmdirSync(dir);
  } catch (err) {
    left.push(`${dir}: ${(err as Error).message}`);
  }
  return left;
}

/** Removes name's tree in every hierarchy; returns what could not be removed (still busy), empty when done. */
export function removeCgroupRoot(name: string, mounts = machineCgroupMountPoints()): string[] {
  return mounts.flatMap((mount) => removeTree(path.join(mount, name)));
}
