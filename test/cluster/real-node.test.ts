// `cluster up --real-node`: a real kubelet node (containerd, runc, kube-proxy, the CNI bridge) in its own
// namespaces beside the KWOK nodes. It runs a pod from the locally made sandbox image, keeps pods without its
// toleration off, keeps kube-proxy's iptables inside the node's network namespace, and leaves no process,
// veth, cgroup directory or file behind, whether stopped or SIGKILLed. Skipped with one loud line when Go or
// the node's programs (scripts/install-real-node.sh) are missing; fails under CI=true.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import type { V1Pod } from "@kubernetes/client-node";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { REAL_NODE_LABEL, REAL_NODE_TAINT } from "../../functions/local-cluster/real-node/configs.js";
import { PAUSE_IMAGE } from "../../functions/local-cluster/real-node/pause-image.js";
import { clientsFor, eventually, readPod, waitPodPhase } from "../support/cluster/kube.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";

const suite = await openClusterSuite({ realNode: true });
const here = path.dirname(fileURLToPath(import.meta.url));
const sbin = {
  env: { ...process.env, PATH: `/usr/sbin:/sbin:${process.env.PATH}` },
  encoding: "utf8" as const,
};

function cluster(): LocalCluster {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

function nodePod(name: string, tolerate: boolean): V1Pod {
  return {
    metadata: { name, namespace: "default" },
    spec: {
      nodeSelector: { [REAL_NODE_LABEL]: "true" },
      ...(tolerate ? { tolerations: [{ key: REAL_NODE_TAINT.key, operator: "Exists" }] } : {}),
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "c", image: PAUSE_IMAGE, imagePullPolicy: "Never" }],
    },
  };
}

const hostVethExists = (name: string) => existsSync(`/sys/class/net/${name}`);
const cgroupDirs = (name: string) =>
  readdirSync("/sys/fs/cgroup").filter((h) => existsSync(path.join("/sys/fs/cgroup", h, name)));
/** Processes whose command line names the run directory (every node process's config lives there). */
function processesUsing(dir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function assertNothingLeft(dir: string, hostVeth: string, cgroupName: string): Promise<void> {
  await eventually(
    "the run's processes, veth, cgroups and files gone",
    async () =>
      processesUsing(dir).length === 0 &&
      !hostVethExists(hostVeth) &&
      cgroupDirs(cgroupName).length === 0 &&
      !existsSync(dir),
    20_000,
  );
}

const runsAPod: ClusterCase = {
  name: "the real node is Ready and tainted, and runs a pod from the local sandbox image in its pod range",
  run: async () => {
    const c = cluster();
    const { core } = clientsFor(c.kubeconfig);
    const node = await core.readNode({ name: "real-node" });
    const taint = node.spec?.taints?.find((t) => t.key === REAL_NODE_TAINT.key);
    assert.deepEqual({ key: taint?.key, value: taint?.value, effect: taint?.effect }, REAL_NODE_TAINT);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, "v1.36.3");
    assert.match(node.status?.nodeInfo?.containerRuntimeVersion ?? "", /^containerd:\/\//);
    await core.createNamespacedPod({ namespace: "default", body: nodePod("on-real-node", true) });
    const pod = await waitPodPhase(core, "default", "on-real-node", "Running", 60_000);
    assert.equal(pod.spec?.nodeName, "real-node");
    const prefix = c.realNode?.namespaces.addresses.podCidr.replace(/0\/24$/, "") ?? "none";
    assert.ok(pod.status?.podIP?.startsWith(prefix), `${pod.status?.podIP} in ${prefix}0/24`);
  },
};

const taintHolds: ClusterCase = {
  name: "a pod that does not tolerate the taint is never scheduled on the real node",
  run: async () => {
    const { core } = clientsFor(cluster().kubeconfig);
    await core.createNamespacedPod({ namespace: "default", body: nodePod("no-toleration", false) });
    const pod = await eventually(
      "the scheduler's verdict",
      async () => {
        const p = await readPod(core, "default", "no-toleration");
        const scheduled = p?.status?.conditions?.find((cond) => cond.type === "PodScheduled");
        return scheduled?.status === "False" ? p : undefined;
      },
      30_000,
    );
    const scheduled = pod.status?.conditions?.find((cond) => cond.type === "PodScheduled");
    assert.equal(scheduled?.reason, "Unschedulable");
    assert.match(scheduled?.message ?? "", /had untolerated taint/);
    assert.equal(pod.spec?.nodeName, undefined);
  },
};

const iptablesInside: ClusterCase = {
  name: "kube-proxy's rules are in the node's network namespace, never the host's",
  run: async () => {
    const c = cluster();
    const initPid = String(c.realNode?.namespaces.initPid);
    const natInNode = () =>
      execFileSync("nsenter", ["--target", initPid, "--net", "--", "iptables-save", "-t", "nat"], sbin);
    const inNode = await eventually(
      "the kubernetes Service's rule in the node",
      async () => (/198\.19\.255\.1\/32.*default\/kubernetes/.test(natInNode()) ? natInNode() : undefined),
      30_000,
    );
    assert.match(inNode, /KUBE-SERVICES/);
    const onHost = execFileSync("iptables-save", ["-t", "nat"], sbin);
    assert.doesNotMatch(onHost, /KUBE-/);
  },
};

/** `cluster up --real-node` in a child process, SIGKILLed once it is ready. */
const killedLauncher: ClusterCase = {
  name: "a SIGKILLed launcher leaves no process, veth, cgroup directory or run directory",
  timeoutMs: 180_000,
  run: async () => {
    const main = path.join(here, "..", "..", "functions", "cli", "main.js");
    const child = spawn(process.execPath, [main, "cluster", "up", "--real-node", "--json"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    const ready = await eventually(
      "the child cluster's JSON line",
      async () => {
        const line = out.split("\n").find((l) => l.startsWith("{"));
        return line ? (JSON.parse(line) as { logDir: string; realNode: { podCidr: string } }) : undefined;
      },
      150_000,
    );
    const dir = path.dirname(ready.logDir);
    const index = Number(ready.realNode.podCidr.split(".")[2]);
    assert.ok(processesUsing(dir).length >= 3, "containerd, kubelet and kube-proxy run");
    child.kill("SIGKILL");
    await assertNothingLeft(dir, `skfn-node${index}`, `simkube-fn-node-${index}`);
  },
};

const stopsClean: ClusterCase = {
  name: "stop() leaves no process, veth, cgroup directory or run directory",
  run: async () => {
    const c = cluster();
    const a = c.realNode?.namespaces.addresses;
    assert.ok(a);
    assert.ok(hostVethExists(a.hostVeth));
    assert.ok(cgroupDirs(`simkube-fn-node-${a.index}`).length > 0);
    await c.stop();
    await assertNothingLeft(c.dir, a.hostVeth, `simkube-fn-node-${a.index}`);
  },
};

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});

registerClusterCases("real-node.test.ts", suite, [
  runsAPod,
  taintHolds,
  iptablesInside,
  killedLauncher,
  stopsClean,
]);
