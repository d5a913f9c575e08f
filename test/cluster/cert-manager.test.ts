// `cluster up --cert-manager`: cert-manager v1.21.1's controller, webhook and cainjector as pods on the real
// node from images built here (controlplane/cert-manager/build.sh), with its CRDs, RBAC and webhook
// configurations from its own chart. Ready (cluster start) already means its webhook admitted a Certificate and
// a self-signed Issuer issued one; here:
// - the cainjector filled cert-manager's own webhook configurations' caBundle, and the webhook refuses an
//   invalid Certificate (validation runs, it is not merely reachable);
// - an issuer that cannot issue (a CA ClusterIssuer whose Secret does not exist): the readiness wait ends at
//   its deadline naming the issuer's condition, instead of hanging;
// - cert-manager's webhook down: the admission wait of `cluster up` ends at its deadline naming the API server's
//   refusal; a Certificate CREATE fails closed, a DELETE is not blocked.
// Skipped with one loud line when Go, the node's programs or the upstream archives are missing; fails under
// CI=true.

import assert from "node:assert/strict";
import { after, type TestContext } from "node:test";
import {
  CERT_MANAGER_NAMES,
  CERT_MANAGER_NAMESPACE,
} from "../../functions/local-cluster/cert-manager/objects.js";
import {
  probeCertificate,
  waitForIssuing,
  waitForWebhookAdmission,
} from "../../functions/local-cluster/cert-manager/ready.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { RestError } from "../../functions/local-cluster/rest.js";
import { eventually } from "../support/cluster/kube.js";
import { type ClusterCase, openClusterSuite, registerClusterCases } from "../support/cluster/suite.js";

const suite = await openClusterSuite({ realNode: true, withCertManager: true });

function cluster(): LocalCluster {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

const CM = `/apis/cert-manager.io/v1/namespaces/${CERT_MANAGER_NAMESPACE}`;
const ADMISSION = "/apis/admissionregistration.k8s.io/v1";

async function refusal(request: Promise<unknown>): Promise<RestError> {
  try {
    await request;
  } catch (err) {
    if (err instanceof RestError) return err;
    throw err;
  }
  assert.fail("the API server accepted the request");
}

const injectedAndValidating: ClusterCase = {
  name: "cert-manager ready: its cainjector filled its webhooks' caBundle, and its webhook refuses an invalid Certificate",
  run: async (t: TestContext) => {
    const c = cluster();
    assert.ok(c.certManager, "cluster up --cert-manager reports cert-manager");
    t.diagnostic(`cert-manager ready ${c.certManager.readyMs} ms after its images were imported`);
    for (const kind of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
      const config = await c.admin.request<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(
        "GET",
        `${ADMISSION}/${kind}/${CERT_MANAGER_NAMES.webhook}`,
      );
      assert.ok(config.webhooks.length > 0);
      for (const w of config.webhooks) assert.ok(w.clientConfig.caBundle, `${kind}: caBundle injected`);
    }
    const invalid = probeCertificate({ kind: "Issuer", name: "any" }, "invalid-key-size");
    (invalid.spec as { privateKey: { size: number } }).privateKey.size = 123;
    const err = await refusal(c.admin.request("POST", `${CM}/certificates?dryRun=All`, invalid));
    assert.match(err.body, /webhook\.cert-manager\.io/, "refused by cert-manager's webhook");
  },
};

const cannotIssue: ClusterCase = {
  name: "an issuer that cannot issue: the readiness wait ends at its deadline and names the issuer's condition",
  run: async (t: TestContext) => {
    const c = cluster();
    const name = "simkube-fn-no-ca-secret";
    await c.admin.ensure("/apis/cert-manager.io/v1/clusterissuers", {
      apiVersion: "cert-manager.io/v1",
      kind: "ClusterIssuer",
      metadata: { name },
      spec: { ca: { secretName: name } },
    });
    const t0 = Date.now();
    await assert.rejects(
      waitForIssuing(c.admin, { issuer: { kind: "ClusterIssuer", name }, timeoutMs: 20_000 }),
      (err: Error) => {
        assert.match(err.message, /timed out after 20000 ms waiting for a ClusterIssuer/);
        assert.match(err.message, new RegExp(`ClusterIssuer ${name} (Ready=False|has no Ready condition)`));
        t.diagnostic(err.message);
        return true;
      },
    );
    assert.ok(Date.now() - t0 < 40_000, "bounded");
    await c.admin.remove(`/apis/cert-manager.io/v1/clusterissuers/${name}`);
  },
};

async function scaleWebhook(replicas: number): Promise<void> {
  await cluster().admin.request(
    "PATCH",
    `/apis/apps/v1/namespaces/${CERT_MANAGER_NAMESPACE}/deployments/${CERT_MANAGER_NAMES.webhook}/scale`,
    { spec: { replicas } },
    "application/merge-patch+json",
  );
}

const webhookDown: ClusterCase = {
  name: "cert-manager's webhook down: the admission wait names the refusal; a Certificate CREATE fails closed, a DELETE is not blocked",
  timeoutMs: 240_000,
  run: async (t: TestContext) => {
    const c = cluster();
    const kept = probeCertificate({ kind: "Issuer", name: "any" }, "kept-while-down");
    await c.admin.ensure(`${CM}/certificates`, kept);
    await scaleWebhook(0);
    try {
      await eventually(
        "no webhook pod left",
        async () => {
          const pods = await c.admin.request<{ items: unknown[] }>(
            "GET",
            `/api/v1/namespaces/${CERT_MANAGER_NAMESPACE}/pods?labelSelector=app.kubernetes.io%2Fname%3D${CERT_MANAGER_NAMES.webhook}`,
          );
          return pods.items.length === 0;
        },
        90_000,
      );
      // cert-manager not ready, as `cluster up` waits for it: the wait ends at its deadline, naming the refusal.
      const t0 = Date.now();
      await assert.rejects(waitForWebhookAdmission(c.admin, 8_000), (err: Error) => {
        assert.match(err.message, /timed out after 8000 ms waiting for cert-manager's webhook/);
        assert.match(err.message, /failed calling webhook \\?"webhook\.cert-manager\.io\\?"/);
        t.diagnostic(err.message);
        return true;
      });
      assert.ok(Date.now() - t0 < 20_000, "bounded");
      const created = probeCertificate({ kind: "Issuer", name: "any" }, "created-while-down");
      const err = await refusal(c.admin.request("POST", `${CM}/certificates`, created));
      const { message } = JSON.parse(err.body) as { message: string };
      assert.match(message, /failed calling webhook "webhook\.cert-manager\.io"/);
      await c.admin.request("DELETE", `${CM}/certificates/${kept.metadata.name}`);
    } finally {
      await scaleWebhook(1);
    }
    await eventually(
      "the webhook admitting again",
      async () => {
        await c.admin.request(
          "POST",
          `${CM}/certificates?dryRun=All`,
          probeCertificate({ kind: "Issuer", name: "any" }, "back"),
        );
        return true;
      },
      120_000,
    );
  },
};

after(async () => {
  if ("cluster" in suite) await suite.cluster.stop();
});

registerClusterCases("cert-manager.test.ts", suite, [injectedAndValidating, cannotIssue, webhookDown]);
