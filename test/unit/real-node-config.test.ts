// The real node's pure parts: its addresses (all inside 198.18.0.0/15), the configuration files it renders for
// containerd, CNI, kubelet and kube-proxy, the cgroup mounts it reads, client-certificate kubeconfigs, and the
// sandbox image archive (same bytes every time).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import { renderKubeconfig } from "../../functions/local-cluster/kubeconfig.js";
import {
  indexOrder,
  KUBERNETES_SERVICE_IP,
  nodeAddresses,
  SERVICE_CIDR,
} from "../../functions/local-cluster/real-node/addresses.js";
import { cgroupMountPoints } from "../../functions/local-cluster/real-node/cgroups.js";
import {
  cniConflist,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  REAL_NODE_TAINT,
} from "../../functions/local-cluster/real-node/configs.js";
import { ociArchitecture, writePauseImage } from "../../functions/local-cluster/real-node/pause-image.js";
import { missingNodePrograms } from "../../functions/local-cluster/real-node/real-node.js";

const inBenchmarkRange = (ip: string) => /^198\.(18|19)\.\d{1,3}\.\d{1,3}$/.test(ip);

const paths = {
  containerdRoot: "/run-dir/node/containerd/root",
  containerdState: "/run-dir/node/containerd/state",
  containerdSocket: "/run-dir/node/containerd/containerd.sock",
  cniConfDir: "/run-dir/node/cni/net.d",
  cniDataDir: "/run-dir/node/cni/ipam",
  kubeletRoot: "/run-dir/node/kubelet",
  podLogs: "/run-dir/node/pod-logs",
};

test("every address of a node is in 198.18.0.0/15, and two indexes share none", () => {
  const a = nodeAddresses(7);
  const b = nodeAddresses(8);
  for (const ip of [a.hostIp, a.nodeIp, a.podGateway, b.hostIp, KUBERNETES_SERVICE_IP])
    assert.ok(inBenchmarkRange(ip), ip);
  assert.equal(a.podCidr, "198.18.7.0/24");
  assert.equal(a.hostIp, "198.19.7.1");
  assert.equal(a.nodeIp, "198.19.7.2");
  assert.notEqual(a.podCidr, b.podCidr);
  assert.notEqual(a.hostVeth, b.hostVeth);
  assert.ok(a.hostVeth.length <= 15, "interface names are at most 15 bytes");
  assert.ok(nodeAddresses(254).hostVeth.length <= 15);
  // The Service range is the one /24 no node's link can take.
  assert.equal(SERVICE_CIDR, "198.19.255.0/24");
  assert.throws(() => nodeAddresses(255), RangeError);
  assert.throws(() => nodeAddresses(-1), RangeError);
  assert.throws(() => nodeAddresses(1.5), RangeError);
});

test("indexOrder visits every index once, from the start given", () => {
  const order = indexOrder(254 + 255);
  assert.equal(order[0], 254);
  assert.equal(order[1], 0);
  assert.equal(new Set(order).size, 255);
  assert.equal(indexOrder(-1)[0], 254);
});

test("containerd runs from the run directory, with runc, cgroupfs, the local sandbox image and the oom clamp", () => {
  const toml = containerdConfig({
    paths,
    runcPath: "/usr/sbin/runc",
    cniBinDir: "/usr/lib/cni",
    sandboxImage: "dev.local/p:1",
  });
  assert.match(toml, /^version = 2$/m);
  assert.match(toml, /^root = "\/run-dir\/node\/containerd\/root"$/m);
  assert.match(toml, /^state = "\/run-dir\/node\/containerd\/state"$/m);
  assert.match(toml, /^ {2}address = "\/run-dir\/node\/containerd\/containerd.sock"$/m);
  assert.match(toml, /^ {2}address = "\/run-dir\/node\/containerd\/containerd.sock.ttrpc"$/m);
  assert.match(toml, /restrict_oom_score_adj = true/);
  assert.match(toml, /SystemdCgroup = false/);
  assert.match(toml, /BinaryName = "\/usr\/sbin\/runc"/);
  assert.match(toml, /sandbox_image = "dev.local\/p:1"/);
  assert.match(toml, /conf_dir = "\/run-dir\/node\/cni\/net.d"/);
  // Every absolute path it names is the run directory's or a program's.
  for (const quoted of toml.match(/"\/[^"]*"/g) ?? [])
    assert.ok(/^"\/(run-dir|usr)\//.test(quoted), `path outside the run directory: ${quoted}`);
});

test("the CNI network is one bridge in the node's pod range, without NAT or port mapping", () => {
  const a = nodeAddresses(3);
  const conf = JSON.parse(cniConflist(a, "/run-dir/ipam"));
  const [bridge, loopback] = conf.plugins;
  assert.equal(bridge.type, "bridge");
  assert.equal(bridge.bridge, a.bridge);
  assert.equal(bridge.ipMasq, false);
  assert.deepEqual(bridge.ipam.ranges, [[{ subnet: "198.18.3.0/24", gateway: "198.18.3.1" }]]);
  assert.equal(bridge.ipam.dataDir, "/run-dir/ipam");
  assert.equal(loopback.type, "loopback");
  assert.ok(!conf.plugins.some((p: { type: string }) => p.type === "portmap"));
});

test("kubelet: cgroupfs, cgroup v1 allowed, swap tolerated, tainted, its own cgroup root, webhook authz", () => {
  const a = nodeAddresses(4);
  const config = parse(
    kubeletConfig({ paths, addresses: a, caFile: "/run-dir/ca.crt", cgroupRoot: "/simkube-fn-node-4" }),
  );
  assert.equal(config.kind, "KubeletConfiguration");
  assert.equal(config.cgroupDriver, "cgroupfs");
  assert.equal(config.failCgroupV1, false);
  assert.equal(config.failSwapOn, false);
  assert.equal(config.cgroupRoot, "/simkube-fn-node-4");
  assert.equal(config.containerRuntimeEndpoint, "unix:///run-dir/node/containerd/containerd.sock");
  assert.equal(config.address, "198.19.4.2");
  assert.deepEqual(config.registerWithTaints, [REAL_NODE_TAINT]);
  assert.equal(config.authentication.anonymous.enabled, false);
  assert.equal(config.authorization.mode, "Webhook");
  assert.equal(config.readOnlyPort, 0);
});

test("kube-proxy: iptables in the node's namespace, leaving the kernel's conntrack table alone", () => {
  const config = parse(kubeProxyConfig(nodeAddresses(5), "/k", "real-node"));
  assert.equal(config.mode, "iptables");
  assert.equal(config.hostnameOverride, "real-node");
  assert.equal(config.clusterCIDR, "198.18.5.0/24");
  assert.deepEqual(config.conntrack, {
    maxPerCore: 0,
    min: 0,
    tcpEstablishedTimeout: "0s",
    tcpCloseWaitTimeout: "0s",
  });
});

test("cgroup mount points come from mountinfo: v1 and v2, nothing else", () => {
  const mountinfo = [
    "25 30 0:22 / /sys rw,nosuid - sysfs sysfs rw",
    "33 25 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
    "34 25 0:29 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw",
    "35 25 0:30 / /sys/fs/cgroup/name\\040x rw - cgroup cgroup rw,name=x",
    "",
  ].join("\n");
  assert.deepEqual(cgroupMountPoints(mountinfo), [
    "/sys/fs/cgroup/memory",
    "/sys/fs/cgroup/unified",
    "/sys/fs/cgroup/name x",
  ]);
});

test("a kubeconfig takes a client certificate when there is no token, and refuses neither", () => {
  const config = parse(
    renderKubeconfig({
      server: "https://198.19.0.1:6443",
      caFile: "/ca",
      user: "system:node:n",
      clientCertificate: "/c",
      clientKey: "/k",
    }),
  );
  assert.deepEqual(config.users[0].user, { "client-certificate": "/c", "client-key": "/k" });
  assert.throws(
    () => renderKubeconfig({ server: "s", caFile: "/ca", user: "u" }),
    /neither a token nor a client certificate/,
  );
});

test("missingNodePrograms names the programs that are absent", () => {
  assert.deepEqual(
    missingNodePrograms(() => true),
    [],
  );
  const missing = missingNodePrograms((file) => !file.endsWith("/runc"));
  assert.deepEqual(missing, ["/usr/sbin/runc"]);
});

test("the sandbox image archive is a valid OCI layout and the same bytes twice", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pause-image-"));
  try {
    const binary = path.join(dir, "pause-bin");
    writeFileSync(binary, "#!/bin/sh\n");
    chmodSync(binary, 0o755);
    const first = readFileSync(await writePauseImage(binary, path.join(dir, "a"), "dev.local/p:1"));
    const second = readFileSync(await writePauseImage(binary, path.join(dir, "b"), "dev.local/p:1"));
    assert.ok(first.equals(second));
    const listing = execFileSync("tar", ["-tf", path.join(dir, "a", "pause.oci.tar")], { encoding: "utf8" });
    assert.match(listing, /^oci-layout$/m);
    assert.match(listing, /^index\.json$/m);
    const index = JSON.parse(
      execFileSync("tar", ["-xOf", path.join(dir, "a", "pause.oci.tar"), "index.json"], { encoding: "utf8" }),
    );
    assert.equal(index.manifests[0].annotations["io.containerd.image.name"], "dev.local/p:1");
    assert.equal(ociArchitecture("x64"), "amd64");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
