// charts/simkube-fn installed for real by helm (built from the Go module) on the local cluster: two releases
// side by side, alpha by Helm 4 with its generated path secret, beta by Helm 3 reading an existing Secret
// (so both major lines install, list and uninstall the chart), an upgrade that keeps the secret, an upgrade
// with unchanged values that changes and restarts nothing, and uninstalls that leave nothing of theirs
// behind; and its Prometheus Operator monitors, taken by the API server with the operator's own CRDs and
// selecting the release's pods and Services, then removed by an upgrade that turns them off. Platform `kubernetes`: its
// objects need no Knative CRDs, so the cluster is the plain one (no --knative); the API server still judges
// every object (the policy's CEL, the webhooks, RBAC). That the chart renders what `manifests` renders is
// test/e2e/helm-chart.test.ts. Skipped with one loud line without Go; fails under CI=true.

import assert from "node:assert/strict";
import { after } from "node:test";
import { clientsFor, eventually, isNotFound } from "../support/cluster/kube.js";
import { installMonitorCrds } from "../support/cluster/monitor-crds.js";
import { type ClusterSuite, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";
import { CHART, helmBinary, runHelm } from "../support/helm.js";

const helm = helmBinary();
const helm3 = helmBinary(3);
const skip = "skip" in helm ? helm.skip : "skip" in helm3 ? helm3.skip : undefined;
const suite: ClusterSuite = skip !== undefined ? { skip } : await openClusterSuite({});
const binary = "binary" in helm ? helm.binary : "";
const binary3 = "binary" in helm3 ? helm3.binary : "";

const SIM = "helm-sim";
/** Virtual namespaces of these releases: none exists, so their webhooks never see a pod of the cluster's. */
const PREFIX = "helmtest";
const ALPHA = { release: "alpha", namespace: "helm-alpha", fullname: "alpha-simkube-fn", helm: () => binary };
const BETA = { release: "beta", namespace: "helm-beta", fullname: "beta-simkube-fn", helm: () => binary3 };
const BETA_SECRET = { name: "team-path-secret", value: "0123456789abcdef".repeat(3) };
const installed = new Set<typeof ALPHA>();

function cluster() {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

function values(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    platform: "kubernetes",
    simName: SIM,
    reschedule: true,
    virtualNsPrefix: PREFIX,
    caBundle: cluster().caCertPem,
    ...extra,
  };
}

function helmRun(args: string[], vals?: Record<string, unknown>, helmBin = binary): string {
  const run = runHelm(helmBin, [...args, "--kubeconfig", cluster().kubeconfig], vals);
  assert.equal(run.status, 0, `helm ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

async function pathSecretOf(namespace: string, name: string): Promise<string> {
  const secret = await clientsFor(cluster().kubeconfig).core.readNamespacedSecret({ name, namespace });
  return Buffer.from(secret.data?.["path-secret"] ?? "", "base64").toString();
}

/** The webhook paths and the Deployments' secret digests and LOG_LEVEL of one release. */
async function releaseState(r: typeof ALPHA) {
  const c = clientsFor(cluster().kubeconfig);
  const config = await c.admission.readMutatingWebhookConfiguration({ name: r.fullname });
  const paths = (config.webhooks ?? []).map((w) => w.clientConfig.service?.path);
  const deployments = await Promise.all(
    ["mutate-create", "reschedule-delete"].map((fn) =>
      c.apps.readNamespacedDeployment({ name: `${r.fullname}-${fn}`, namespace: r.namespace }),
    ),
  );
  const digests = deployments.map(
    (d) => d.spec?.template.metadata?.annotations?.["simkube.io/webhook-path-secret-sha256"],
  );
  const logLevels = deployments.map(
    (d) => d.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === "LOG_LEVEL")?.value,
  );
  return { paths, digests, logLevels };
}

/**
 * What a restart would change, once the Deployments' controller has caught up: each Deployment's generation
 * and template digest, the ReplicaSets and pods (by uid), the Secret's and webhook configuration's versions.
 */
async function rolloutState(r: typeof ALPHA) {
  const c = clientsFor(cluster().kubeconfig);
  const namespace = r.namespace;
  const selector = `app.kubernetes.io/instance=${r.fullname}`;
  return eventually("the Deployments' ReplicaSets", async () => {
    const deployments = (await c.apps.listNamespacedDeployment({ namespace, labelSelector: selector })).items;
    const replicaSets = (await c.apps.listNamespacedReplicaSet({ namespace, labelSelector: selector })).items;
    const caughtUp = deployments.every((d) => d.status?.observedGeneration === d.metadata?.generation);
    if (deployments.length !== 2 || replicaSets.length < 2 || !caughtUp) return undefined;
    const pods = (await c.core.listNamespacedPod({ namespace, labelSelector: selector })).items;
    const secret = await c.core.readNamespacedSecret({ name: `${r.fullname}-webhook-path`, namespace });
    const webhook = await c.admission.readMutatingWebhookConfiguration({ name: r.fullname });
    return {
      deployments: deployments.map((d) => `${d.metadata?.name}@${d.metadata?.generation}`).sort(),
      replicaSets: replicaSets.map((rs) => `${rs.metadata?.name}/${rs.metadata?.uid}`).sort(),
      pods: pods.map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort(),
      secret: secret.metadata?.resourceVersion,
      webhook: webhook.metadata?.resourceVersion,
    };
  });
}

/** Every cluster-wide object a release makes, by name; each read answers true (there) or false (404). */
async function clusterObjects(r: typeof ALPHA): Promise<Record<string, boolean>> {
  const kc = cluster().kubeconfig;
  const c = clientsFor(kc);
  const exists = async (read: () => Promise<unknown>) => {
    try {
      await read();
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };
  const { RbacAuthorizationV1Api, KubeConfig } = await import("@kubernetes/client-node");
  const config = new KubeConfig();
  config.loadFromFile(kc);
  const rbac = config.makeApiClient(RbacAuthorizationV1Api);
  const out: Record<string, boolean> = {};
  for (const fn of ["mutate-create", "reschedule-delete"]) {
    const name = `${r.fullname}-${fn}`;
    out[`ClusterRole/${name}`] = await exists(() => rbac.readClusterRole({ name }));
    out[`ClusterRoleBinding/${name}`] = await exists(() => rbac.readClusterRoleBinding({ name }));
  }
  const policy = `${r.fullname}-pod-creates`;
  out[`ValidatingAdmissionPolicy/${policy}`] = await exists(() =>
    c.admission.readValidatingAdmissionPolicy({ name: policy }),
  );
  out[`ValidatingAdmissionPolicyBinding/${policy}`] = await exists(() =>
    c.admission.readValidatingAdmissionPolicyBinding({ name: policy }),
  );
  out[`MutatingWebhookConfiguration/${r.fullname}`] = await exists(() =>
    c.admission.readMutatingWebhookConfiguration({ name: r.fullname }),
  );
  return out;
}

registerClusterCases("test/cluster/helm.test.ts", suite, [
  {
    name: "helm: two releases side by side, by Helm 4 generating its path secret, by Helm 3 reading an existing Secret",
    timeoutMs: 180_000,
    run: async () => {
      helmRun(["install", ALPHA.release, CHART, "-n", ALPHA.namespace, "--create-namespace"], values());
      installed.add(ALPHA);
      const c = clientsFor(cluster().kubeconfig);
      await c.core.createNamespace({ body: { metadata: { name: BETA.namespace } } });
      await c.core.createNamespacedSecret({
        namespace: BETA.namespace,
        body: { metadata: { name: BETA_SECRET.name }, stringData: { "path-secret": BETA_SECRET.value } },
      });
      helmRun(
        ["install", BETA.release, CHART, "-n", BETA.namespace],
        values({ pathSecret: { existingSecret: BETA_SECRET.name } }),
        BETA.helm(),
      );
      installed.add(BETA);

      const alphaSecret = await pathSecretOf(ALPHA.namespace, `${ALPHA.fullname}-webhook-path`);
      assert.match(alphaSecret, /^[0-9a-f]{64}$/);
      const alpha = await releaseState(ALPHA);
      assert.deepEqual(alpha.paths, [`/${alphaSecret}`, `/${alphaSecret}`]);
      // The existing Secret's value, read with lookup at install, is in beta's webhook paths.
      const beta = await releaseState(BETA);
      assert.deepEqual(beta.paths, [`/${BETA_SECRET.value}`, `/${BETA_SECRET.value}`]);
      assert.notDeepEqual(alpha.digests, beta.digests);
      // Beta made no Secret of its own.
      await assert.rejects(
        c.core.readNamespacedSecret({ name: `${BETA.fullname}-webhook-path`, namespace: BETA.namespace }),
        (err: unknown) => isNotFound(err),
      );
      for (const r of [ALPHA, BETA]) {
        const objects = await clusterObjects(r);
        assert.deepEqual(
          Object.values(objects).filter((v) => !v),
          [],
          JSON.stringify(objects),
        );
      }
      // The same release name in another namespace would own alpha's cluster-wide objects: Helm refuses.
      const clash = runHelm(
        binary,
        [
          "install",
          ALPHA.release,
          CHART,
          "-n",
          "helm-other",
          "--create-namespace",
          "--kubeconfig",
          cluster().kubeconfig,
        ],
        values(),
      );
      assert.notEqual(clash.status, 0, "a second release named alpha was installed over the first");
      assert.match(clash.stderr, /alpha-simkube-fn.*invalid ownership metadata/);
      assert.deepEqual((await releaseState(ALPHA)).paths, alpha.paths);
      // Each line lists both releases: Helm 4 reads what Helm 3 stored, and the other way round.
      for (const lister of [binary, binary3]) {
        const list = helmRun(["list", "--all-namespaces", "-o", "json"], undefined, lister);
        const names = (JSON.parse(list) as { name: string; status: string }[]).map(
          (r) => `${r.name}:${r.status}`,
        );
        assert.deepEqual(names.sort(), ["alpha:deployed", "beta:deployed"], lister);
      }
    },
  },
  {
    name: "helm: an upgrade that changes a value keeps the generated path secret (no rotation by re-render)",
    timeoutMs: 120_000,
    run: async () => {
      const secretName = `${ALPHA.fullname}-webhook-path`;
      const before = await pathSecretOf(ALPHA.namespace, secretName);
      const stateBefore = await releaseState(ALPHA);
      assert.deepEqual(stateBefore.logLevels, ["info", "info"]);
      helmRun(["upgrade", ALPHA.release, CHART, "-n", ALPHA.namespace], values({ logLevel: "debug" }));
      const after = await pathSecretOf(ALPHA.namespace, secretName);
      assert.equal(after, before);
      const stateAfter = await releaseState(ALPHA);
      assert.deepEqual(stateAfter.logLevels, ["debug", "debug"]);
      assert.deepEqual(stateAfter.paths, stateBefore.paths);
      assert.deepEqual(stateAfter.digests, stateBefore.digests);
      const history = JSON.parse(helmRun(["history", ALPHA.release, "-n", ALPHA.namespace, "-o", "json"]));
      assert.equal((history as unknown[]).length, 2);
    },
  },
  {
    name: "helm: an upgrade with unchanged values changes no object and restarts nothing",
    timeoutMs: 120_000,
    run: async () => {
      const unchanged = values({ logLevel: "debug" }); // what the upgrade before left
      const before = await rolloutState(ALPHA);
      assert.ok(before.pods.length >= 2, JSON.stringify(before));
      helmRun(["upgrade", ALPHA.release, CHART, "-n", ALPHA.namespace], unchanged);
      // Time for the Deployment controller to act on a changed template (it reacts within a second).
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      assert.deepEqual(await rolloutState(ALPHA), before);
      const history = JSON.parse(helmRun(["history", ALPHA.release, "-n", ALPHA.namespace, "-o", "json"]));
      assert.equal((history as unknown[]).length, 3, "the upgrade itself ran");
    },
  },
  {
    name: "helm: metrics.podMonitor and serviceMonitor are taken by the API server (the operator's CRDs) and select the release's pods and Services; off removes them",
    timeoutMs: 120_000,
    run: async () => {
      const c = clientsFor(cluster().kubeconfig);
      const namespace = ALPHA.namespace;
      await installMonitorCrds(cluster(), namespace);
      const metrics = {
        podMonitor: { enabled: true },
        serviceMonitor: { enabled: true },
        labels: { release: "prom" },
      };
      helmRun(["upgrade", ALPHA.release, CHART, "-n", namespace], values({ logLevel: "debug", metrics }));
      const ca = await c.core.readNamespacedConfigMap({ name: `${ALPHA.fullname}-metrics-ca`, namespace });
      assert.equal(ca.data?.["ca.crt"], `${cluster().caCertPem.trim()}\n`);
      const monitor = (plural: string, name: string) =>
        c.custom.getNamespacedCustomObject({
          group: "monitoring.coreos.com",
          version: "v1",
          namespace,
          plural,
          name,
        });
      for (const fn of ["mutate-create", "reschedule-delete"]) {
        const name = `${ALPHA.fullname}-${fn}`;
        // biome-ignore lint/suspicious/noExplicitAny: the stored monitors are read field by field
        const pod: any = await monitor("podmonitors", name);
        // biome-ignore lint/suspicious/noExplicitAny: as above
        const service: any = await monitor("servicemonitors", name);
        assert.equal(pod.metadata.labels.release, "prom");
        const [endpoint] = pod.spec.podMetricsEndpoints;
        assert.equal(endpoint.tlsConfig.serverName, `${name}.${namespace}.svc`);
        const selector = (labels: Record<string, string>) =>
          Object.entries(labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(",");
        const pods = (
          await c.core.listNamespacedPod({
            namespace,
            labelSelector: selector(pod.spec.selector.matchLabels),
          })
        ).items;
        assert.ok(pods.length >= 1, `${name}: the PodMonitor selects a pod`);
        for (const p of pods) {
          const ports = p.spec?.containers.flatMap((k) => k.ports ?? []).map((port) => port.name);
          assert.ok(ports?.includes(endpoint.port), `${p.metadata?.name} has port ${endpoint.port}`);
        }
        const services = (
          await c.core.listNamespacedService({
            namespace,
            labelSelector: selector(service.spec.selector.matchLabels),
          })
        ).items;
        assert.deepEqual(
          services.map((x) => x.metadata?.name),
          [name],
        );
        assert.ok(services[0]?.spec?.ports?.some((port) => port.name === service.spec.endpoints[0].port));
      }
      helmRun(["upgrade", ALPHA.release, CHART, "-n", namespace], values({ logLevel: "debug" }));
      for (const plural of ["podmonitors", "servicemonitors"]) {
        await assert.rejects(monitor(plural, `${ALPHA.fullname}-mutate-create`), (err: unknown) =>
          isNotFound(err),
        );
      }
    },
  },
  {
    name: "helm: uninstalling one release leaves the other whole; uninstalling both leaves nothing of theirs",
    timeoutMs: 120_000,
    run: async () => {
      helmRun(["uninstall", ALPHA.release, "-n", ALPHA.namespace, "--wait"]);
      installed.delete(ALPHA);
      const alphaGone = await clusterObjects(ALPHA);
      assert.deepEqual(
        Object.values(alphaGone).filter((v) => v),
        [],
        JSON.stringify(alphaGone),
      );
      const betaStill = await clusterObjects(BETA);
      assert.deepEqual(
        Object.values(betaStill).filter((v) => !v),
        [],
        JSON.stringify(betaStill),
      );
      helmRun(["uninstall", BETA.release, "-n", BETA.namespace, "--wait"], undefined, BETA.helm());
      installed.delete(BETA);
      const betaGone = await clusterObjects(BETA);
      assert.deepEqual(
        Object.values(betaGone).filter((v) => v),
        [],
        JSON.stringify(betaGone),
      );
      const c = clientsFor(cluster().kubeconfig);
      await assert.rejects(
        c.core.readNamespacedSecret({ name: `${ALPHA.fullname}-webhook-path`, namespace: ALPHA.namespace }),
        (err: unknown) => isNotFound(err),
      );
      // The existing Secret was never the chart's: it stays.
      assert.equal(await pathSecretOf(BETA.namespace, BETA_SECRET.name), BETA_SECRET.value);
    },
  },
]);

after(async () => {
  if (!("cluster" in suite)) return;
  // A failed case may leave a release: uninstall it before the cluster goes (best effort).
  for (const r of installed)
    runHelm(r.helm(), ["uninstall", r.release, "-n", r.namespace, "--kubeconfig", suite.cluster.kubeconfig]);
  await suite.cluster.stop();
});
