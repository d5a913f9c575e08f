// The functions as a user's cluster runs them: the image built here (scripts/build-image.sh) imported into
// the real node's containerd, deployed from `manifests --platform kubernetes` (Deployments and ClusterIP
// Services, webhooks in service mode, TLS from the run's CA, the path secret, per-function ServiceAccounts,
// RBAC and the pod-create policy as rendered, the client CA of --client-ca-secret), reached by the API server
// through the Services; also the rendered memory limit under the burst it is sized for (alone, and while a
// trace at the size cap reloads on a second deployment serving every Simulation), and an OOM kill below it
// (--memory-limit). Skipped with
// one loud line when Go, the node's programs or the image tools are missing; fails under CI=true.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { collectionPath, objectPath } from "../../functions/local-cluster/cluster-objects.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { REAL_NODE_NAME } from "../../functions/local-cluster/real-node/real-node.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildAllManifests, CONCURRENCY } from "../../knative/manifests.js";
import { podCreatePolicyName } from "../../knative/pod-create-policy.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { lifecycleHeavyTraceOf } from "../bench/memory-trace.js";
import { buildCreateReview } from "../support/builders.js";
import {
  buildImage,
  deployFunctionPods,
  execInPod,
  placeOnRealNode,
} from "../support/cluster/function-pods.js";
import {
  barePod,
  clientsFor,
  clonesOf,
  createVirtualNamespace,
  eventually,
  runningBarePod,
  waitPodPhase,
} from "../support/cluster/kube.js";
import {
  bigCreateReview,
  containerMemory,
  LOW_LIMIT_COMPONENT,
  lowLimitCopy,
  postToPod,
  type ReviewAnswer,
} from "../support/cluster/pod-memory.js";
import {
  type ClusterCase,
  clusterOf,
  openDeployedSuite,
  registerClusterCases,
} from "../support/cluster/suite.js";
import {
  createTraceSimulation,
  deleteTraceSimulation,
  deployTraceLoadingFunctions,
  serveTrace,
  TRACE_INSTANCE,
  TRACE_NAMESPACE,
  type TraceDeployment,
  traceDeploymentOptions,
} from "../support/cluster/trace-load.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NS = "virtual-pods";
const FUNCTIONS_NS = "simkube";

const opened = await openDeployedSuite({
  buildScript: "scripts/build-image.sh",
  build: () => buildImage(repoRoot),
  cluster: { realNode: true, reschedule: true, recordReviews: true },
  deploy: async (c, archive: string) => ({ pods: await deployFunctionPods(c, archive), archive }),
});

const cluster = (): LocalCluster => clusterOf(opened.suite);

const admin = () => clientsFor(cluster().kubeconfig).core;
const hostReviewsOf = (name: string) =>
  cluster().reviews.filter(
    (r) =>
      (r.request.name ??
        (r.request.oldObject as { metadata?: { name?: string } } | undefined)?.metadata?.name) === name,
  );

async function functionPods(core: CoreV1Api, fn: string): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({
    namespace: FUNCTIONS_NS,
    labelSelector: `app.kubernetes.io/instance=${resolveOptions(opened.deployed?.pods.options ?? {}).name},app.kubernetes.io/component=${fn}`,
  });
  return list.items.filter((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp);
}

/** Node's https client inside a function's pod, as its own ServiceAccount, against the in-cluster API. */
function apiCallScript(method: string, apiPath: string, body?: unknown): string {
  return `const fs=require("fs"),https=require("https");const d="/var/run/secrets/kubernetes.io/serviceaccount/";
const req=https.request({method:${JSON.stringify(method)},host:process.env.KUBERNETES_SERVICE_HOST,port:process.env.KUBERNETES_SERVICE_PORT,path:${JSON.stringify(apiPath)},ca:fs.readFileSync(d+"ca.crt"),headers:{"content-type":"application/json",authorization:"Bearer "+fs.readFileSync(d+"token","utf8")}},r=>{let b="";r.on("data",c=>b+=c);r.on("end",()=>console.log(JSON.stringify({status:r.statusCode,body:b})))});
req.on("error",e=>console.log(JSON.stringify({status:0,body:e.message})));req.end(${body === undefined ? "" : JSON.stringify(JSON.stringify(body))});`;
}

async function callAsFunction(fn: string, method: string, apiPath: string, body?: unknown) {
  const [pod] = await functionPods(admin(), fn);
  assert.ok(pod?.metadata?.name, `a running ${fn} pod`);
  const out = await execInPod(cluster().kubeconfig, FUNCTIONS_NS, pod.metadata.name, [
    "node",
    "-e",
    apiCallScript(method, apiPath, body),
  ]);
  return JSON.parse(out) as { status: number; body: string };
}

const runsAsPods: ClusterCase = {
  name: "both functions run from the image built here on the real node, as uid 1000 with a read-only root",
  run: async () => {
    const core = admin();
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const pods = await functionPods(core, fn);
      assert.equal(pods.length, fn === "mutate-create" ? 2 : 1, `${fn} replicas`);
      for (const pod of pods) {
        assert.equal(pod.spec?.nodeName, REAL_NODE_NAME);
        assert.ok(pod.status?.containerStatuses?.every((s) => s.ready));
      }
      const name = pods[0]?.metadata?.name ?? "";
      const id = await execInPod(cluster().kubeconfig, FUNCTIONS_NS, name, ["id", "-u"]);
      assert.equal(id.trim(), "1000");
      const write = await execInPod(cluster().kubeconfig, FUNCTIONS_NS, name, [
        "sh",
        "-c",
        "touch /app/x 2>&1 || true",
      ]);
      assert.match(write, /Read-only file system/);
    }
    process.stderr.write(
      `# function pods: Deployments applied to every replica Ready in ${opened.deployed?.pods.readyMs} ms\n`,
    );
  },
};

const mutatedThroughService: ClusterCase = {
  name: "a simulation pod is mutated by the mutate-create pod through its Service, not by the host process",
  run: async () => {
    const c = cluster();
    const core = admin();
    await createVirtualNamespace(c, core, NS);
    const t0 = Date.now();
    const created = await core.createNamespacedPod({ namespace: NS, body: barePod(c, "through-service") });
    process.stderr.write(`# function pods: first simulation pod create answered in ${Date.now() - t0} ms\n`);
    assert.equal(created.spec?.nodeSelector?.type, "virtual");
    assert.ok(created.spec?.tolerations?.some((t) => t.key === "kwok-provider"));
    assert.equal(created.metadata?.labels?.["simkube.io/simulation"], c.simName);
    assert.equal(hostReviewsOf("through-service").length, 0, "the host's mutate-create saw nothing");
  },
};

const interruptionCloned: ClusterCase = {
  name: "an interruption (a user's delete of a running bare pod) is cloned by the reschedule-delete pod",
  run: async () => {
    const c = cluster();
    const core = admin();
    await runningBarePod(c, core, NS, "interrupted");
    await core.deleteNamespacedPod({ name: "interrupted", namespace: NS });
    const clones = await eventually("the clone", async () => {
      const found = await clonesOf(core, NS, "interrupted");
      return found.length > 0 ? found : undefined;
    });
    assert.equal(clones[0]?.metadata?.name, "interrupted-clone-1");
    assert.equal(clones[0]?.spec?.nodeSelector?.type, "virtual", "the clone was mutated too");
    assert.equal(hostReviewsOf("interrupted").length, 0, "the host's functions saw nothing");
  },
};

const rbacRefusal: ClusterCase = {
  name: "RBAC: mutate-create's pod, as its own ServiceAccount, may not read Secrets",
  run: async () => {
    const answer = await callAsFunction("mutate-create", "GET", `/api/v1/namespaces/${FUNCTIONS_NS}/secrets`);
    assert.equal(answer.status, 403, answer.body);
    const { message } = JSON.parse(answer.body) as { message: string };
    assert.match(
      message,
      /User "system:serviceaccount:simkube:simkube-fn-mutate-create" cannot list resource "secrets"/,
    );
  },
};

const escapeByPolicy: ClusterCase = {
  name: "escape: reschedule-delete's pod creating a pod bound to the real node is refused by the pod-create policy",
  run: async () => {
    const pod = { ...barePod(cluster(), "escape-policy", { nodeName: REAL_NODE_NAME }) };
    const answer = await callAsFunction("reschedule-delete", "POST", `/api/v1/namespaces/${NS}/pods`, pod);
    assert.equal(answer.status, 403, answer.body);
    const policy = podCreatePolicyName(resolveOptions(opened.deployed?.pods.options ?? {}));
    assert.match(answer.body, new RegExp(`ValidatingAdmissionPolicy '${policy}'`));
  },
};

const escapeByKubelet: ClusterCase = {
  name: "escape: a simulation pod bound to the real node by its creator is mutated, then refused by the kubelet",
  run: async () => {
    const core = admin();
    const body = barePod(cluster(), "escape-kubelet", { nodeName: REAL_NODE_NAME });
    const created = await core.createNamespacedPod({ namespace: NS, body });
    assert.equal(created.spec?.nodeSelector?.type, "virtual", "mutate-create pinned it to the virtual nodes");
    const failed = await waitPodPhase(core, NS, "escape-kubelet", "Failed", 60_000);
    assert.equal(failed.status?.reason, "NodeAffinity");
  },
};

const sigtermDuringBurst: ClusterCase = {
  name: "SIGTERM from the kubelet during a burst: every review in flight is answered",
  timeoutMs: 180_000,
  run: async () => {
    const c = cluster();
    const core = admin();
    const [victim] = await functionPods(core, "mutate-create");
    const names = Array.from({ length: 80 }, (_, i) => `burst-${i}`);
    let answered = 0;
    let answeredAtSigterm = Number.NaN;
    let deleted: Promise<unknown> | undefined;
    // The replica is deleted from the third answer's callback, not after polling for it: a poll once came
    // back only after every review had been answered, with nothing left in flight for the SIGTERM to meet.
    const creates = names.map((name) =>
      core.createNamespacedPod({ namespace: NS, body: barePod(c, name) }).then((pod) => {
        answered += 1;
        if (answered === 3) {
          // Counted when the API server has accepted the deletion, after which the kubelet sends SIGTERM.
          deleted = core
            .deleteNamespacedPod({ name: victim?.metadata?.name ?? "", namespace: FUNCTIONS_NS })
            .then(() => {
              answeredAtSigterm = answered;
            });
        }
        return pod;
      }),
    );
    const pods = await Promise.all(creates);
    await deleted;
    assert.ok(deleted, "the replica was deleted during the burst");
    assert.ok(
      answeredAtSigterm < names.length,
      "reviews were still outstanding when the replica was deleted",
    );
    process.stderr.write(
      `# function pods: ${names.length - answeredAtSigterm} of ${names.length} creates outstanding at the delete, all answered\n`,
    );
    for (const pod of pods) assert.equal(pod.spec?.nodeSelector?.type, "virtual", pod.metadata?.name);
  },
};

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;
const pathSecret = () => resolveOptions(opened.deployed?.pods.options ?? {}).pathSecret;

/** Bytes of a memory quantity as `manifests` renders them (Mi, Gi). */
function quantityBytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`unexpected memory quantity ${q}`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 * MiB : MiB);
}

/** CONCURRENCY's in-flight bound of ~3 MiB CREATE reviews, posted to one pod at once as the API server would. */
async function burst(podIp: string, prefix: string): Promise<{ answers: ReviewAnswer[]; ms: number }> {
  const n = CONCURRENCY["mutate-create"].hard;
  const bodies = Array.from({ length: n }, (_, i) => bigCreateReview(cluster(), NS, `${prefix}-${i}`));
  const t0 = Date.now();
  const answers = await Promise.all(
    bodies.map((b) => postToPod(podIp, pathSecret(), b, cluster().webhookClient)),
  );
  return { answers, ms: Date.now() - t0 };
}

const clientCertificateTrust: ClusterCase = {
  name: "client certificates: the pods refuse a review without the API server's, and admit the API server's calls",
  run: async () => {
    const c = cluster();
    const core = admin();
    const client = c.webhookClient;
    assert.ok(client, "the cluster runs in production mode: the API server has a webhook client certificate");
    for (const fn of ["mutate-create", "reschedule-delete"]) {
      const d = await c.admin.request<{
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      }>("GET", `/apis/apps/v1/namespaces/${FUNCTIONS_NS}/deployments/simkube-fn-${fn}`);
      const env = d.spec.template.spec.containers[0]?.env ?? [];
      assert.ok(
        env.some((e) => e.name === "CLIENT_CA_FILE"),
        `${fn}'s rendered Deployment names CLIENT_CA_FILE`,
      );
    }
    const [pod] = await functionPods(core, "mutate-create");
    const ip = pod?.status?.podIP ?? "";
    const direct = barePod(c, "direct-review");
    direct.metadata = { ...direct.metadata, namespace: NS };
    const review = JSON.stringify(buildCreateReview({ pod: direct as never }));
    const without = await postToPod(ip, pathSecret(), review);
    assert.equal(without.status, 403, JSON.stringify(without));
    assert.match(without.message ?? "", /client certificate signed by the configured client CA is required/);
    const withCert = await postToPod(ip, pathSecret(), review, client);
    assert.equal(withCert.status, 200, JSON.stringify(withCert));
    assert.equal(withCert.allowed, true, JSON.stringify(withCert));
    const created = await core.createNamespacedPod({ namespace: NS, body: barePod(c, "through-api-server") });
    assert.equal(
      created.spec?.nodeSelector?.type,
      "virtual",
      "the API server's own call was admitted and mutated",
    );
  },
};

const burstAtRenderedLimit: ClusterCase = {
  name: "memory: a mutate-create pod at the rendered limit answers containerConcurrency ~3 MiB reviews at once, no restart",
  timeoutMs: 300_000,
  run: async () => {
    const c = cluster();
    const core = admin();
    const [pod] = await functionPods(core, "mutate-create");
    assert.ok(pod?.metadata?.name && pod.status?.podIP);
    const rendered = resolveOptions(opened.deployed?.pods.options ?? {}).resources.limits?.memory ?? "";
    const before = await containerMemory(c, pod);
    assert.equal(
      before.limitBytes,
      quantityBytes(rendered),
      `the cgroup's limit is the rendered ${rendered}`,
    );
    const restarts = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const { answers, ms } = await burst(pod.status.podIP, "limit-burst");
    const after = await containerMemory(c, pod);
    const now = await core.readNamespacedPod({ name: pod.metadata.name, namespace: FUNCTIONS_NS });
    const unanswered = answers.filter((a) => a.status !== 200);
    assert.deepEqual(unanswered, [], "every review answered with an AdmissionReview");
    assert.equal(now.status?.containerStatuses?.[0]?.restartCount ?? 0, restarts, "no restart");
    assert.ok(after.maxUsageBytes < after.limitBytes);
    const admitted = answers.filter((a) => a.allowed).length;
    process.stderr.write(
      `# function pods: ${answers.length} reviews of ~3 MiB at once at the ${rendered} limit: all answered in ${ms} ms (${admitted} admitted${admitted < answers.length ? `, first refusal: ${answers.find((a) => !a.allowed)?.message}` : ""}); cgroup usage ${mib(before.usageBytes)} before, peak (memory.max_usage_in_bytes) ${mib(after.maxUsageBytes)} of ${mib(after.limitBytes)}, failcnt ${after.failcnt}\n`,
    );
  },
};

/** What `manifests --memory-limit` renders for the OOM case: room to start and idle, not for the burst. */
const LOW_LIMIT = "160Mi";

const oomAtLowLimit: ClusterCase = {
  name: `memory: a mutate-create pod rendered with --memory-limit ${LOW_LIMIT} is OOM-killed by the same burst`,
  timeoutMs: 300_000,
  run: async () => {
    const c = cluster();
    const core = admin();
    const options = {
      ...opened.deployed?.pods.options,
      resources: { requests: { cpu: "100m", memory: LOW_LIMIT }, limits: { memory: LOW_LIMIT } },
    };
    const rendered = buildAllManifests(options).find(
      (o) => o.kind === "Deployment" && o.metadata?.name === "simkube-fn-mutate-create",
    );
    assert.ok(rendered, "the rendered mutate-create Deployment");
    const copy = lowLimitCopy(placeOnRealNode(rendered));
    await c.admin.ensure(collectionPath(copy as KubeObject), copy);
    try {
      const pod = await eventually(
        "the low-limit pod Ready",
        async () => {
          const list = await core.listNamespacedPod({
            namespace: FUNCTIONS_NS,
            labelSelector: `app.kubernetes.io/component=${LOW_LIMIT_COMPONENT}`,
          });
          return list.items.find((p) => p.status?.containerStatuses?.[0]?.ready);
        },
        120_000,
      );
      const name = pod.metadata?.name ?? "";
      const memory = await containerMemory(c, pod);
      assert.equal(memory.limitBytes, quantityBytes(LOW_LIMIT));
      assert.equal(
        pod.status?.containerStatuses?.[0]?.restartCount,
        0,
        "it started and idled within the limit",
      );
      const { answers, ms } = await burst(pod.status?.podIP ?? "", "oom-burst");
      const killed = await eventually(
        "the kubelet's report of the kill",
        async () => {
          const p = await core.readNamespacedPod({ name, namespace: FUNCTIONS_NS });
          return p.status?.containerStatuses?.[0]?.lastState?.terminated ? p : undefined;
        },
        60_000,
      );
      const status = killed.status?.containerStatuses?.[0];
      const terminated = status?.lastState?.terminated;
      process.stderr.write(
        `# function pods: at --memory-limit ${LOW_LIMIT} (idle usage ${mib(memory.usageBytes)}) the burst ended in ${ms} ms: ${answers.filter((a) => a.status === 200).length} answered, ${answers.filter((a) => a.status === 0).length} connections cut (${answers.find((a) => a.status === 0)?.message}); lastState.terminated: reason ${terminated?.reason}, exitCode ${terminated?.exitCode}, signal ${terminated?.signal ?? "-"}; restartCount ${status?.restartCount}\n`,
      );
      assert.equal(terminated?.reason, "OOMKilled", JSON.stringify(terminated));
      assert.equal(terminated?.exitCode, 137);
    } finally {
      await c.admin.request("DELETE", objectPath(copy as KubeObject));
    }
  },
};

/** Just under the rendered TRACE_MAX_MIB (64): the largest trace the pods load. */
const TRACE_MIB = 63;

const burstDuringTraceLoad: ClusterCase = {
  name: `memory: a mutate-create pod at the rendered limit answers containerConcurrency ~3 MiB reviews while a ${TRACE_MIB} MiB trace reloads, no restart`,
  timeoutMs: 420_000,
  run: async () => {
    const c = cluster();
    const core = admin();
    const hostIp = c.realNode?.namespaces.addresses.hostIp;
    assert.ok(hostIp, "the real node's veth");
    const bytes = lifecycleHeavyTraceOf(TRACE_MIB);
    const served = await serveTrace(bytes, hostIp);
    let deployment: TraceDeployment | undefined;
    try {
      const root = await createTraceSimulation(c, served.url);
      const options = traceDeploymentOptions(c, served.url);
      deployment = await deployTraceLoadingFunctions(c, options);
      const list = await core.listNamespacedPod({
        namespace: FUNCTIONS_NS,
        labelSelector: `app.kubernetes.io/instance=${TRACE_INSTANCE},app.kubernetes.io/component=mutate-create`,
      });
      const pod = list.items.find((p) => p.status?.containerStatuses?.[0]?.ready);
      assert.ok(pod?.metadata?.name && pod.status?.podIP, "the second mutate-create pod Ready");
      const ip = pod.status.podIP;
      const rendered = resolveOptions(options).resources.limits?.memory ?? "";
      const idle = await containerMemory(c, pod);
      assert.equal(
        idle.limitBytes,
        quantityBytes(rendered),
        `the cgroup's limit is the rendered ${rendered}`,
      );

      // The first Running pod needs its lifecycle: the trace is loaded once and kept.
      const secret = resolveOptions(options).pathSecret;
      const first = await postToPod(
        ip,
        secret,
        bigCreateReview(c, TRACE_NAMESPACE, "trace-first", { root, running: true }),
        c.webhookClient,
      );
      assert.deepEqual([first.status, first.allowed], [200, true], JSON.stringify(first));
      assert.equal(served.loads(), 1, "one download for the first Running pod");
      const loaded = await containerMemory(c, pod);

      // Replaced in place: after the 1 s recheck the next review loads it again while the old copy is held,
      // and the burst arrives at that moment.
      served.replace();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const bodies = Array.from({ length: CONCURRENCY["mutate-create"].hard }, (_, i) =>
        bigCreateReview(c, TRACE_NAMESPACE, `trace-burst-${i}`, { root, running: true }),
      );
      const t0 = Date.now();
      const answers = await Promise.all(bodies.map((b) => postToPod(ip, pathSecret(), b, c.webhookClient)));
      const ms = Date.now() - t0;
      const after = await containerMemory(c, pod);
      const now = await core.readNamespacedPod({ name: pod.metadata.name, namespace: FUNCTIONS_NS });
      process.stderr.write(
        `# function pods: a ${mib(bytes.byteLength)} trace (${served.loads()} downloads) at the ${rendered} limit: usage ${mib(idle.usageBytes)} idle, ${mib(loaded.usageBytes)} with the trace, peak after the first load ${mib(loaded.maxUsageBytes)}; ${answers.length} reviews of ~3 MiB during the reload answered in ${ms} ms (${answers.filter((a) => a.allowed).length} admitted), peak ${mib(after.maxUsageBytes)} of ${mib(after.limitBytes)}, failcnt ${after.failcnt}\n`,
      );
      assert.deepEqual(
        answers.filter((a) => a.status !== 200 || !a.allowed),
        [],
        "every review admitted",
      );
      assert.equal(served.loads(), 2, "the replaced trace was downloaded again during the burst");
      assert.equal(now.status?.containerStatuses?.[0]?.restartCount ?? 0, 0, "no restart");
      assert.ok(after.maxUsageBytes < after.limitBytes);
    } finally {
      await deployment?.remove();
      await deleteTraceSimulation(c);
      await served.close();
    }
  },
};

after(async () => {
  if ("cluster" in opened.suite) await opened.suite.cluster.stop();
});

/** The image config's labels and env, from the docker-archive build-image.sh wrote (manifest.json names it). */
function archiveConfig(archive: string): { labels: Record<string, string>; env: string[] } {
  const member = (name: string) => execFileSync("tar", ["-xOf", archive, name], { encoding: "utf8" });
  const [manifest] = JSON.parse(member("manifest.json")) as { Config: string }[];
  const config = JSON.parse(member(manifest?.Config ?? "")) as {
    config?: { Labels?: Record<string, string>; Env?: string[] };
  };
  return { labels: config.config?.Labels ?? {}, env: config.config?.Env ?? [] };
}

const imageAnnotated: ClusterCase = {
  name: "the image the pods run names its version, source commit and digest-pinned base (OCI annotations, build info)",
  run: async () => {
    assert.ok(opened.deployed?.archive, "the image archive");
    const { labels, env } = archiveConfig(opened.deployed?.archive);
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
    assert.equal(labels["org.opencontainers.image.version"], pkg.version);
    assert.equal(labels["org.opencontainers.image.licenses"], "MIT");
    // The last commit that changed the image's inputs, and its time: never the clock of the build.
    const revision = labels["org.opencontainers.image.revision"] ?? "";
    assert.match(revision, /^[0-9a-f]{40}$/);
    // simkube_fn_build_info's commit label names the same revision.
    assert.ok(env.includes(`SIMKUBE_FN_COMMIT=${revision}`), env.join(" "));
    const committed = execFileSync("git", ["-C", repoRoot, "show", "-s", "--format=%ct", revision], {
      encoding: "utf8",
    }).trim();
    assert.equal(
      labels["org.opencontainers.image.created"],
      new Date(Number(committed) * 1000).toISOString().replace(".000Z", "Z"),
    );
    assert.match(labels["org.opencontainers.image.base.name"] ?? "", /@sha256:[0-9a-f]{64}$/);
  },
};

registerClusterCases("function-pods.test.ts", opened.suite, [
  runsAsPods,
  imageAnnotated,
  mutatedThroughService,
  interruptionCloned,
  rbacRefusal,
  escapeByPolicy,
  escapeByKubelet,
  clientCertificateTrust,
  burstAtRenderedLimit,
  burstDuringTraceLoad,
  oomAtLowLimit,
  sigtermDuringBurst,
]);
