// The functions as a user's cluster runs them: the image built here (scripts/build-image.sh) imported into
// the real node's containerd, deployed from `manifests --platform kubernetes` (Deployments and ClusterIP
// Services, webhooks in service mode, TLS from the run's CA, the path secret, per-function ServiceAccounts,
// RBAC and the pod-create policy as rendered), reached by the API server through the Services. Skipped with
// one loud line when Go, the node's programs or the image tools are missing; fails under CI=true.

import assert from "node:assert/strict";
import path from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import type { LocalCluster } from "../../functions/local-cluster/cluster.js";
import { REAL_NODE_NAME } from "../../functions/local-cluster/real-node/real-node.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { podCreatePolicyName } from "../../knative/pod-create-policy.js";
import {
  buildImage,
  type DeployedPods,
  deployFunctionPods,
  execInPod,
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
  type ClusterCase,
  type ClusterSuite,
  openClusterSuite,
  registerClusterCases,
} from "../support/cluster/suite.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NS = "virtual-pods";
const FUNCTIONS_NS = "simkube";

async function openSuite(): Promise<{ suite: ClusterSuite; pods?: DeployedPods; archive?: string }> {
  let archive: string;
  try {
    archive = await buildImage(repoRoot);
  } catch (err) {
    const message = `scripts/build-image.sh failed: ${(err as { stderr?: string }).stderr?.trim().split("\n").at(-1) ?? err}`;
    return { suite: process.env.CI === "true" ? { error: new Error(message) } : { skip: message } };
  }
  const suite = await openClusterSuite({ realNode: true, reschedule: true, recordReviews: true });
  if (!("cluster" in suite)) return { suite };
  try {
    return { suite, pods: await deployFunctionPods(suite.cluster, archive), archive };
  } catch (err) {
    await suite.cluster.stop();
    return { suite: { error: err as Error } };
  }
}

const opened = await openSuite();

function cluster(): LocalCluster {
  if (!("cluster" in opened.suite)) throw new Error("no cluster");
  return opened.suite.cluster;
}

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
    labelSelector: `app.kubernetes.io/component=${fn}`,
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
      `# function pods: Deployments applied to every replica Ready in ${opened.pods?.readyMs} ms\n`,
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
    const policy = podCreatePolicyName(resolveOptions(opened.pods?.options ?? {}));
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
    const names = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    let answered = 0;
    const creates = names.map((name) =>
      core.createNamespacedPod({ namespace: NS, body: barePod(c, name) }).then((pod) => {
        answered += 1;
        return pod;
      }),
    );
    await eventually("the first answers", async () => answered >= 3, 60_000);
    const answeredAtSigterm = answered;
    await core.deleteNamespacedPod({ name: victim?.metadata?.name ?? "", namespace: FUNCTIONS_NS });
    const pods = await Promise.all(creates);
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

after(async () => {
  if ("cluster" in opened.suite) await opened.suite.cluster.stop();
});

registerClusterCases("function-pods.test.ts", opened.suite, [
  runsAsPods,
  mutatedThroughService,
  interruptionCloned,
  rbacRefusal,
  escapeByPolicy,
  escapeByKubelet,
  sigtermDuringBurst,
]);
