// What reschedule-delete's own account may read and bind on the real API server, in each `--pod-reads` mode
// (knative/pod-reads.ts, docs/safety.md "Least privilege"), and the metadata-only reads the functions send,
// answered by the real kube-apiserver and by the API double alike.
//   cluster (the default, the finding): a pod in kube-system is readable whole, its env included;
//   virtual-namespaces: that read is 403, whole or metadata-only; the account may bind only the pod-read role,
//   only to itself, only in a virtual namespace; a bare pod in a virtual namespace is still cloned.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import https from "node:https";
import { startFakeApiServer } from "../../../functions/local-apiserver/server.js";
import { createRestClient, RestError } from "../../../functions/local-cluster/rest.js";
import { podReadBinding } from "../../../functions/reschedule-delete/pod-read-grants.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import type { PodReads } from "../../../knative/options.js";
import { podReadRoleName, serviceAccountName } from "../../../knative/rbac.js";
import { PARTIAL_METADATA_ACCEPT } from "../../../shared/kube/partial-metadata.js";
import {
  type MetadataWorld,
  metadataCases,
  outcomesOf,
  podWithSecret,
  type RawGet,
} from "../metadata-reads.js";
import { clonesOf, createVirtualNamespace, eventually, runningBarePod, waitPodGone } from "./kube.js";
import type { ClusterCase } from "./suite.js";
import type { World, WorldRef } from "./world.js";

const SECRET_POD = { namespace: "kube-system", name: "holds-a-password" };
const PASSWORD = "hunter2-kube-system";
export const POD_READS_NAMESPACE = "virtual-pod-reads";

function tokenOf(kubeconfig: string): string {
  return /token: (\S+)/.exec(readFileSync(kubeconfig, "utf8"))?.[1] ?? "";
}

/** A GET as the holder of `token`, with this Accept header: the status and the parsed body. */
function rawGetAs(w: World, token: string): RawGet {
  const { server, caCertPem } = w.cluster;
  return (path, accept) =>
    new Promise((resolve, reject) => {
      const req = https.request(
        `${server}${path}`,
        { ca: caCertPem, headers: { authorization: `Bearer ${token}`, accept } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
        },
      );
      req.on("error", reject);
      req.end();
    });
}

const asRescheduleDelete = (w: World) =>
  rawGetAs(w, tokenOf(w.cluster.functionKubeconfigs["reschedule-delete"]));

/** The pod a password sits in, outside any simulation (Pending: nothing schedules it). */
async function ensureSecretPod(w: World): Promise<void> {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: SECRET_POD.name, namespace: SECRET_POD.namespace },
    spec: {
      containers: [{ name: "db", image: "postgres", env: [{ name: "POSTGRES_PASSWORD", value: PASSWORD }] }],
      nodeSelector: { "simkube-fn/nowhere": "true" },
    },
  };
  await w.cluster.admin.ensure(`/api/v1/namespaces/${SECRET_POD.namespace}/pods`, pod);
}

/** POST as reschedule-delete, dry run: the status, and the refusal's message. */
async function createBindingAs(
  w: World,
  namespace: string,
  binding: object,
): Promise<{ status: number; message: string }> {
  const api = createRestClient(
    w.cluster.server,
    w.cluster.caCertPem,
    tokenOf(w.cluster.functionKubeconfigs["reschedule-delete"]),
  );
  try {
    await api.request(
      "POST",
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings?dryRun=All`,
      binding,
    );
    return { status: 201, message: "" };
  } catch (err) {
    if (!(err instanceof RestError)) throw err;
    return { status: err.status, message: (JSON.parse(err.body) as { message?: string }).message ?? "" };
  }
}

/** The reads of a kube-system pod as reschedule-delete: refused in the narrow mode, open (env and all) by default. */
function kubeSystemReadCase(ref: WorldRef, mode: PodReads): ClusterCase {
  const narrow = mode === "virtual-namespaces";
  return {
    name: `pod reads (${mode}): as reschedule-delete, a kube-system pod is ${narrow ? "403, whole and metadata-only" : "readable whole, its env included (the issue's finding)"}; listing pods is 403`,
    run: async () => {
      const w = ref.get();
      await ensureSecretPod(w);
      const get = asRescheduleDelete(w);
      const path = `/api/v1/namespaces/${SECRET_POD.namespace}/pods/${SECRET_POD.name}`;
      const whole = await get(path, "application/json");
      const metadata = await get(path, PARTIAL_METADATA_ACCEPT);
      if (narrow) {
        assert.equal(whole.status, 403, "whole");
        assert.equal(metadata.status, 403, "metadata-only");
        assert.equal(JSON.stringify(whole.body).includes(PASSWORD), false);
      } else {
        assert.equal(whole.status, 200);
        assert.equal(JSON.stringify(whole.body).includes(PASSWORD), true, "the env is readable");
        assert.equal(metadata.status, 200);
        assert.equal(
          JSON.stringify(metadata.body).includes(PASSWORD),
          false,
          "a metadata read carries no env",
        );
      }
      assert.equal((await get("/api/v1/pods", "application/json")).status, 403, "list, cluster-wide");
      assert.equal(
        (await get(`/api/v1/namespaces/${SECRET_POD.namespace}/pods`, "application/json")).status,
        403,
        "list, kube-system",
      );
    },
  };
}

/** Dry-run bindings as reschedule-delete: only the pod-read role, to itself, in a virtual namespace. */
function bindingFenceCase(ref: WorldRef): ClusterCase {
  return {
    name: "pod reads (virtual-namespaces): reschedule-delete may bind only the pod-read role, only to itself, only in a virtual namespace",
    run: async () => {
      const w = ref.get();
      await createVirtualNamespace(w.cluster, w.admin.core, POD_READS_NAMESPACE).catch(() => undefined);
      const o = resolveOptions(w.cluster.deployment);
      const settings = {
        role: podReadRoleName(o),
        account: { namespace: o.namespace, name: serviceAccountName(o, "reschedule-delete") },
      };
      const own = podReadBinding(settings, POD_READS_NAMESPACE) as {
        metadata: object;
        roleRef: object;
        subjects: object[];
      };
      const cases: [string, string, object, number, RegExp][] = [
        ["the pod-read role, to itself, in a virtual namespace", POD_READS_NAMESPACE, own, 201, /^$/],
        [
          "in kube-system",
          "kube-system",
          podReadBinding(settings, "kube-system"),
          403,
          /pod-read-bindings.*namespaces labelled/,
        ],
        [
          "to another subject",
          POD_READS_NAMESPACE,
          { ...own, subjects: [{ kind: "ServiceAccount", name: "default", namespace: "kube-system" }] },
          403,
          /pod-read-bindings.*its own ServiceAccount/,
        ],
        [
          "of cluster-admin",
          POD_READS_NAMESPACE,
          {
            ...own,
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          },
          403,
          /attempting to grant RBAC permissions not currently held|pod-read-bindings/,
        ],
        [
          "of its own ClusterRole, whose permissions it holds (RBAC alone would allow it)",
          POD_READS_NAMESPACE,
          {
            ...own,
            roleRef: {
              apiGroup: "rbac.authorization.k8s.io",
              kind: "ClusterRole",
              name: `${o.name}-reschedule-delete`,
            },
            subjects: [{ kind: "ServiceAccount", name: "default", namespace: POD_READS_NAMESPACE }],
          },
          403,
          /pod-read-bindings/,
        ],
      ];
      for (const [what, namespace, binding, status, message] of cases) {
        const answer = await createBindingAs(w, namespace, binding);
        assert.equal(answer.status, status, `${what}: ${answer.message}`);
        assert.match(answer.message, message, what);
      }
    },
  };
}

/** A bare pod in a virtual namespace, evicted and deleted for real: each still cloned, reads made per namespace. */
function narrowCloneCase(ref: WorldRef): ClusterCase {
  return {
    name: "pod reads (virtual-namespaces): a bare pod in a virtual namespace is still cloned after an eviction and after a user's delete",
    timeoutMs: 180_000,
    run: async () => {
      const w = ref.get();
      const namespace = "virtual-narrow-clones";
      const core = w.admin.core;
      await createVirtualNamespace(w.cluster, core, namespace);
      const evicted = await runningBarePod(w.cluster, core, namespace, "evicted");
      const name = evicted.metadata?.name ?? "";
      await core.createNamespacedPodEviction({
        name,
        namespace,
        body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace } },
      });
      await waitPodGone(core, namespace, name, 30_000);
      await eventually(
        "the evicted pod's clone",
        async () => (await clonesOf(core, namespace, name)).length === 1,
      );
      const o = resolveOptions(w.cluster.deployment);
      const binding = await w.cluster.admin.request<{ subjects?: { name: string }[] }>(
        "GET",
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings/${podReadRoleName(o)}`,
      );
      assert.equal(
        binding.subjects?.[0]?.name,
        serviceAccountName(o, "reschedule-delete"),
        "it bound the role to itself",
      );
      await runningBarePod(w.cluster, core, namespace, "deleted");
      await core.deleteNamespacedPod({ name: "deleted", namespace });
      await waitPodGone(core, namespace, "deleted", 30_000);
      await eventually(
        "the deleted pod's clone",
        async () => (await clonesOf(core, namespace, "deleted")).length === 1,
      );
    },
  };
}

/** The real server's answers to the metadata-only cases, and the double's to the same, seeded alike. */
function metadataComparisonCase(ref: WorldRef): ClusterCase {
  return {
    name: "metadata-only reads: the API double answers every case as the real kube-apiserver does",
    run: async () => {
      const w = ref.get();
      const world: MetadataWorld = {
        namespace: "virtual-metadata",
        pod: "secret-env",
        root: w.cluster.root.metadata?.name ?? "",
      };
      await createVirtualNamespace(w.cluster, w.admin.core, world.namespace);
      const pod = podWithSecret(world);
      await w.cluster.admin.ensure(`/api/v1/namespaces/${world.namespace}/pods`, {
        ...pod,
        spec: { ...(pod.spec as object), nodeSelector: { "simkube-fn/nowhere": "true" } },
      });
      const cases = metadataCases(world);
      const real = await outcomesOf(rawGetAs(w, tokenOf(w.cluster.driverKubeconfig)), cases);
      const double = await startFakeApiServer({ namespaces: ["default", world.namespace] });
      try {
        // Stored as the real server returns it: with a status.
        double.store.put({ ...pod, status: { phase: "Pending" } });
        double.store.put({
          apiVersion: "simkube.io/v1",
          kind: "SimulationRoot",
          metadata: { name: world.root },
        });
        const onDouble = await outcomesOf(
          (path, accept) => double.request("GET", path, undefined, { accept }),
          cases,
        );
        // Every case at once: a difference shows beside the others.
        assert.deepEqual(onDouble, real);
      } finally {
        await double.close();
      }
    },
  };
}

export function podReadCases(ref: WorldRef, mode: PodReads): ClusterCase[] {
  if (mode === "cluster") return [kubeSystemReadCase(ref, mode)];
  return [
    metadataComparisonCase(ref),
    kubeSystemReadCase(ref, mode),
    bindingFenceCase(ref),
    narrowCloneCase(ref),
  ];
}
