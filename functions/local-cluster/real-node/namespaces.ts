// The real node's own namespaces, like a kind node container without the container: one init process in new
// PID, mount and network namespaces (util-linux unshare), joined to the host by a veth pair. containerd,
// kubelet and kube-proxy are started inside them (nsenter), so kube-proxy's iptables rules, the CNI bridge and
// every pod network live in the node's network namespace, and kubelet's and containerd's mounts in its mount
// namespace. When the init process dies (stop(), or this process dying: unshare runs under setpriv
// --pdeathsig and kills its child), the kernel kills everything in the PID namespace, containers included,
// and the namespaces, their mounts and both veth ends go with them.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { type ManagedProcess, type StartProcessOptions, startProcess } from "../processes.js";
import { waitUntil } from "../readiness.js";
import { indexOrder, type NodeAddresses, nodeAddresses } from "./addresses.js";

const exec = promisify(execFile);

/**
 * Kernel settings kubelet writes at start when they differ (they are machine-wide, not per namespace). Inside
 * the node's mount namespace each /proc/sys file is covered by a file already holding kubelet's value, so
 * kubelet finds nothing to change and the machine keeps its own.
 */
export const KUBELET_SYSCTLS: Record<string, string> = {
  "vm/overcommit_memory": "1",
  "vm/panic_on_oom": "0",
  "kernel/panic": "10",
  "kernel/panic_on_oops": "1",
  "kernel/keys/root_maxkeys": "1000000",
  "kernel/keys/root_maxbytes": "25000000",
};

/**
 * PID 1 of the node: private /run, /var/lib and /var/log (containerd's shim sockets, runc state, pod network
 * namespaces, CNI's cache and kubelet's /var/log/containers links never reach the host's), the sysctl covers,
 * then it waits, reaping the orphans the namespace hands it.
 */
const INIT_SCRIPT = `set -eu
for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=0755 simkube-fn-node "$d"; done
for key in "$@"; do mount --bind "$SYSCTL_DIR/$(echo "$key" | tr / -)" "/proc/sys/$key"; done
echo ready
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $! || true; done
`;

export interface NodeNamespaces {
  readonly addresses: NodeAddresses;
  /** The init process's pid as the host sees it. */
  readonly initPid: number;
  /** Starts a long-running program inside the node's namespaces. */
  start(name: string, bin: string, args: string[], logFile: string): ManagedProcess;
  /** Runs a short command in the node's network namespace and returns its stdout. */
  run(bin: string, args: string[]): Promise<string>;
  stop(): Promise<void>;
}

const SBIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

function childPid(pid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/);
    const first = Number(children[0]);
    return Number.isInteger(first) && first > 0 ? first : undefined;
  } catch {
    return undefined;
  }
}

async function ip(args: string[]): Promise<void> {
  try {
    await exec("ip", args, { env: { ...process.env, PATH: SBIN_PATH } });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`ip ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
  }
}

async function nsenterIp(initPid: number, args: string[]): Promise<void> {
  try {
    await exec("nsenter", ["--target", String(initPid), "--net", "--", "ip", ...args], {
      env: { ...process.env, PATH: SBIN_PATH },
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`(node) ip ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
  }
}

/** Takes the first free index: the host veth's name is the lock (a second `ip link add` fails). */
async function claimVeth(initPid: number): Promise<NodeAddresses> {
  for (const index of indexOrder(Math.floor(Math.random() * 1000))) {
    const a = nodeAddresses(index);
    try {
      await ip([
        "link",
        "add",
        a.hostVeth,
        "type",
        "veth",
        "peer",
        "name",
        a.nodeVeth,
        "netns",
        String(initPid),
      ]);
      return a;
    } catch (err) {
      if (!/exists/i.test((err as Error).message)) throw err;
    }
  }
  throw new Error("no free real-node index: every skfn-node<i> veth exists");
}

async function wireVeth(initPid: number, a: NodeAddresses): Promise<void> {
  const inNode = (args: string[]) => nsenterIp(initPid, args);
  await ip(["addr", "add", `${a.hostIp}/${a.linkPrefix}`, "dev", a.hostVeth]);
  await ip(["link", "set", a.hostVeth, "up"]);
  await inNode(["link", "set", "lo", "up"]);
  await inNode(["addr", "add", `${a.nodeIp}/${a.linkPrefix}`, "dev", a.nodeVeth]);
  await inNode(["link", "set", a.nodeVeth, "up"]);
  // The API server (on the host) reaches pods, and so the webhook Services' endpoints, through the node.
  await ip(["route", "add", a.podCidr, "via", a.nodeIp, "dev", a.hostVeth]);
}

async function startInit(dir: string, logFile: string): Promise<{ holder: ManagedProcess; initPid: number }> {
  for (const [key, value] of Object.entries(KUBELET_SYSCTLS))
    await writeFile(path.join(dir, key.replaceAll("/", "-")), `${value}\n`);
  const holder = startProcess(
    "node-namespaces",
    "/usr/bin/env",
    [
      `SYSCTL_DIR=${dir}`,
      "unshare",
      "--pid",
      "--fork",
      "--kill-child",
      "--mount",
      "--propagation=private",
      "--mount-proc",
      "--net",
      "--",
      "bash",
      "-c",
      INIT_SCRIPT,
      "node-init",
      ...Object.keys(KUBELET_SYSCTLS),
    ],
    logFile,
  );
  let initPid: number | undefined;
  await waitUntil(
    "the real node's namespaces",
    async () => {
      initPid = childPid(holder.pid);
      return initPid !== undefined && holder.logTail(5).includes("ready");
    },
    { timeoutMs: 10_000, intervalMs: 50, process: holder },
  );
  return { holder, initPid: initPid as number };
}

export async function createNodeNamespaces(dir: string, logFile: string): Promise<NodeNamespaces> {
  const { holder, initPid } = await startInit(dir, logFile);
  const started: ManagedProcess[] = [];
  let addresses: NodeAddresses | undefined;
  const stop = async () => {
    for (const p of started.reverse()) await p.stop(10_000);
    await holder.stop(1_000);
    // The veth pair goes with the namespace; delete the host end in case the namespace outlived us.
    if (addresses) await ip(["link", "del", addresses.hostVeth]).catch(() => undefined);
  };
  try {
    addresses = await claimVeth(initPid);
    await wireVeth(initPid, addresses);
  } catch (err) {
    await stop();
    throw err;
  }
  const enter = ["--target", String(initPid), "--pid", "--mount", "--net", "--"];
  const options = (p: () => ManagedProcess | undefined): StartProcessOptions => ({
    stopTarget: () => {
      const wrapper = p();
      return wrapper ? childPid(wrapper.pid) : undefined;
    },
  });
  return {
    addresses,
    initPid,
    start(name, bin, args, logFile) {
      let p: ManagedProcess | undefined;
      p = startProcess(
        name,
        "nsenter",
        [...enter, "/usr/bin/env", `PATH=${SBIN_PATH}`, bin, ...args],
        logFile,
        options(() => p),
      );
      started.push(p);
      return p;
    },
    async run(bin, args) {
      const { stdout } = await exec("nsenter", ["--target", String(initPid), "--net", "--", bin, ...args], {
        env: { ...process.env, PATH: SBIN_PATH },
      });
      return stdout;
    },
    stop,
  };
}
