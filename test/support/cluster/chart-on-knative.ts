// charts/simkube-fn installed by helm on `cluster up --knative`, beside the deployment knative-functions.ts
// applies: platform kind, ingress traefik, the image that deployment imported, its own release name, namespace
// and virtual-namespace prefix (so neither webhook sees the other's pods). Two steps, as a user may meet them:
// - installed naming an issuer that cannot issue (a CA ClusterIssuer whose Secret does not exist): the
//   Certificates stay unissued and the caBundle uninjected; the readiness wait names the issuer's condition
//   instead of hanging; the rendered failurePolicy (Fail for CREATE, Ignore for DELETE) holds: a simulation pod
//   CREATE is refused naming the webhook, a pod DELETE goes through, both well inside the webhook timeouts;
// - upgraded to the chart's own CA (no issuer): cert-manager issues it and the serving certificates, the
//   cainjector puts that CA into the caBundle, and the API server calls both functions through Traefik and
//   Knative over that trust (a CREATE admitted and mutated, an eviction cloned);
// - then the certificates issued but the caBundle not injected (cert-manager's annotation and the caBundles
//   taken off, as before the cainjector first fills them): CREATE refused, DELETE not blocked, as above; the
//   annotation back, the cainjector refills the caBundle and a CREATE is admitted.

import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { placedOnRealNode } from "../../../functions/local-cluster/real-node/placement.js";
import type { Manifest } from "../../../knative/manifests.js";
import { CHART, type KubeDoc, parseDocs, runHelm } from "../helm.js";
import {
  caBundleInjected,
  certificatesReady,
  knativeServiceReady,
  revisionPods,
} from "./knative-functions.js";
import {
  barePod,
  clientsFor,
  clonesOf,
  createVirtualNamespace,
  eventually,
  waitPodGone,
  waitPodPhase,
} from "./kube.js";
import { assertMutated } from "./mutation-scenarios.js";
import type { ClusterCase } from "./suite.js";
import { webhookErrors } from "./teardown-scenario.js";

export interface ChartRef {
  cluster(): LocalCluster;
  /** The helm binary (scripts/build-helm.sh). */
  helm(): string;
}

const RELEASE = "helmfn";
const FULLNAME = `${RELEASE}-simkube-fn`;
const NAMESPACE = "simkube-fn-helm";
const PREFIX = "helmvirt";
const VIRTUAL_NS = `${PREFIX}-knative`;
/** A CA ClusterIssuer whose Secret does not exist: cert-manager marks it not Ready and issues nothing. */
const BROKEN_ISSUER = "simkube-fn-helm-no-ca-secret";
const WEBHOOK = {
  create: `mutate-create.${FULLNAME}.simkube.io`,
  delete: `reschedule-delete.${FULLNAME}.simkube.io`,
};
/** The chart's default timeoutSeconds per webhook (values.yaml); "well inside" is a third of it. */
const TIMEOUT_MS = { create: 30_000, delete: 15_000 };

function values(c: LocalCluster, issuer?: string): Record<string, unknown> {
  return {
    platform: "kind",
    ingress: "traefik",
    simName: c.simName,
    reschedule: true,
    virtualNsPrefix: PREFIX,
    // As the rendered deployment of the suite: no 10-minute grace keeping reschedule-delete up.
    functions: { "reschedule-delete": { scaleDownDelay: "0s" } },
    ...(issuer ? { issuer } : {}),
  };
}

function helm(ref: ChartRef, args: string[], vals?: Record<string, unknown>): string {
  const run = runHelm(ref.helm(), [...args, "--kubeconfig", ref.cluster().kubeconfig], vals);
  assert.equal(run.status, 0, `helm ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** What the release holds now, as the API server was given it. */
function releaseObjects(ref: ChartRef): KubeDoc[] {
  return parseDocs(helm(ref, ["get", "manifest", RELEASE, "-n", NAMESPACE]));
}

interface WebhookView {
  name: string;
  failurePolicy?: string;
  clientConfig: { caBundle?: string };
}

async function webhooks(c: LocalCluster): Promise<WebhookView[]> {
  const config = await c.admin.request<{ webhooks?: WebhookView[] }>(
    "GET",
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${FULLNAME}`,
  );
  return config.webhooks ?? [];
}

/** A pod no scheduler places: it only has to exist, to be deleted. */
function waitingPod(c: LocalCluster, name: string) {
  const pod = barePod(c, name);
  return {
    ...pod,
    spec: { ...pod.spec, containers: pod.spec?.containers ?? [], nodeSelector: { none: "x" } },
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await work();
  return { value, ms: Date.now() - t0 };
}

/** The API server's refusal body of a request expected to fail. */
async function refusalOf(request: Promise<unknown>): Promise<string> {
  try {
    await request;
  } catch (err) {
    return String((err as { body?: unknown }).body ?? err);
  }
  assert.fail("the API server accepted the request");
}

const failOpenLines = (c: LocalCluster) =>
  webhookErrors(c.logDir).filter((l) => l.includes(WEBHOOK.delete) && /failing open/i.test(l));

async function installUnissued(ref: ChartRef, t: TestContext): Promise<void> {
  const c = ref.cluster();
  const { core } = clientsFor(c.kubeconfig);
  await c.admin.request(
    "POST",
    "/api/v1/namespaces",
    placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }),
  );
  await createVirtualNamespace(c, core, VIRTUAL_NS);
  await core.createNamespacedPod({ namespace: VIRTUAL_NS, body: waitingPod(c, "deleted-unissued") });
  await c.admin.ensure("/apis/cert-manager.io/v1/clusterissuers", {
    apiVersion: "cert-manager.io/v1",
    kind: "ClusterIssuer",
    metadata: { name: BROKEN_ISSUER },
    spec: { ca: { secretName: BROKEN_ISSUER } },
  });
  const { ms } = await timed(async () =>
    helm(ref, ["install", RELEASE, CHART, "-n", NAMESPACE], values(c, BROKEN_ISSUER)),
  );
  t.diagnostic(`helm install (issuer ${BROKEN_ISSUER}) ${ms} ms`);
}

async function readinessNamesIssuer(ref: ChartRef, t: TestContext): Promise<void> {
  const objects = releaseObjects(ref);
  const certificates = objects.filter((o) => o.kind === "Certificate").map((o) => o.metadata.name);
  assert.equal(certificates.length, 2, "one serving Certificate per function, no CA of the chart's");
  const t0 = Date.now();
  await assert.rejects(
    certificatesReady(ref.cluster(), objects as unknown as Manifest[], 15_000),
    (err: Error) => {
      for (const name of certificates) assert.match(err.message, new RegExp(`Certificate traefik/${name} `));
      assert.match(err.message, new RegExp(`ClusterIssuer ${BROKEN_ISSUER} Ready=False`));
      t.diagnostic(err.message);
      return true;
    },
  );
  assert.ok(Date.now() - t0 < 30_000, "the wait ended at its deadline");
}

/** A line of the API server's, the webhook path's secret left out. */
const redacted = (line: string) => line.replace(/\/[0-9a-f]{64}/g, "/<path secret>");

/** A simulation pod CREATE refused at once, naming mutate-create's webhook and `reason` (the TLS failure). */
async function createFailsClosed(ref: ChartRef, t: TestContext, name: string, reason: RegExp): Promise<void> {
  const c = ref.cluster();
  const { core } = clientsFor(c.kubeconfig);
  const { value: body, ms } = await timed(() =>
    refusalOf(core.createNamespacedPod({ namespace: VIRTUAL_NS, body: barePod(c, name) })),
  );
  const { message } = JSON.parse(body) as { message: string };
  assert.match(message, new RegExp(`failed calling webhook "${WEBHOOK.create.replaceAll(".", "\\.")}"`));
  assert.match(message, reason);
  assert.ok(ms < TIMEOUT_MS.create / 3, `refused in ${ms} ms, well inside ${TIMEOUT_MS.create} ms`);
  t.diagnostic(`CREATE refused in ${ms} ms: ${redacted(message)}`);
}

/** A pod DELETE not blocked: answered at once, the pod gone, and the API server logging reschedule-delete failing open. */
async function deleteGoesThrough(ref: ChartRef, t: TestContext, name: string): Promise<void> {
  const c = ref.cluster();
  const { core } = clientsFor(c.kubeconfig);
  const before = failOpenLines(c).length;
  const { ms } = await timed(() => core.deleteNamespacedPod({ name, namespace: VIRTUAL_NS }));
  assert.ok(ms < TIMEOUT_MS.delete / 3, `DELETE answered in ${ms} ms, well inside ${TIMEOUT_MS.delete} ms`);
  await waitPodGone(core, VIRTUAL_NS, name);
  // The webhook was called and failed, and the API server let the DELETE through (failurePolicy Ignore).
  const [line] = await eventually(
    "the API server logging reschedule-delete failing open",
    async () => {
      const lines = failOpenLines(c).slice(before);
      return lines.length > 0 ? lines : undefined;
    },
    10_000,
  );
  const said = line?.slice(line.indexOf("Failed calling webhook")) ?? "";
  t.diagnostic(`DELETE went through in ${ms} ms; the API server: ${redacted(said)}`);
}

export function unissuedCase(ref: ChartRef): ClusterCase {
  return {
    name: "helm chart, an issuer that cannot issue: the wait names it; CREATE refused naming the webhook, DELETE not blocked",
    timeoutMs: 180_000,
    run: async (t) => {
      await installUnissued(ref, t);
      await readinessNamesIssuer(ref, t);
      const rendered = (await webhooks(ref.cluster())).map((w) => [
        w.name,
        w.failurePolicy,
        w.clientConfig.caBundle ?? "",
      ]);
      assert.deepEqual(rendered, [
        [WEBHOOK.create, "Fail", ""],
        [WEBHOOK.delete, "Ignore", ""],
      ]);
      // No Secret for the IngressRoute: Traefik answers with its own default certificate.
      await createFailsClosed(ref, t, "created-unissued", /x509: certificate is valid for .*, not /);
      await deleteGoesThrough(ref, t, "deleted-unissued");
    },
  };
}

async function caPem(c: LocalCluster): Promise<string> {
  const secret = await c.admin.request<{ data?: Record<string, string> }>(
    "GET",
    `/api/v1/namespaces/cert-manager/secrets/${FULLNAME}-ca`,
  );
  return Buffer.from(secret.data?.["ca.crt"] ?? "", "base64").toString();
}

/** Until a dry-run CREATE is admitted: Traefik serves the issued certificates and the caBundle trusts them. */
async function firstAdmitted(c: LocalCluster): Promise<void> {
  const { core } = clientsFor(c.kubeconfig);
  await eventually(
    `a dry-run CREATE admitted through ${WEBHOOK.create}`,
    async () => {
      await core.createNamespacedPod({ namespace: VIRTUAL_NS, body: barePod(c, "probe"), dryRun: "All" });
      return true;
    },
    120_000,
  );
}

/**
 * Until a dry-run DELETE of `name` is reviewed by reschedule-delete over the new trust, not failed open: its
 * serving certificate is issued and routed on its own schedule, after mutate-create's, and a DELETE that fails
 * open (as it must) makes no clone. A dry run clones nothing.
 */
async function deleteWebhookAnswers(c: LocalCluster, name: string): Promise<void> {
  const { core } = clientsFor(c.kubeconfig);
  await eventually(
    `a dry-run DELETE reviewed by ${WEBHOOK.delete} without failing open`,
    async () => {
      const before = failOpenLines(c).length;
      await core.deleteNamespacedPod({ name, namespace: VIRTUAL_NS, dryRun: "All" });
      // The API server's log may reach the file a little after its answer: watch it for a few seconds.
      for (let waited = 0; waited < 6_000; waited += 500) {
        if (failOpenLines(c).length > before) return false;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      return true;
    },
    120_000,
  );
}

async function evictionCloned(c: LocalCluster, name: string): Promise<number> {
  const { core } = clientsFor(c.kubeconfig);
  const t0 = Date.now();
  await core.createNamespacedPodEviction({
    name,
    namespace: VIRTUAL_NS,
    body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace: VIRTUAL_NS } },
  });
  await eventually("a clone", async () => (await clonesOf(core, VIRTUAL_NS, name)).length > 0, 60_000);
  return Date.now() - t0;
}

export function issuedCase(ref: ChartRef): ClusterCase {
  return {
    name: "helm chart, upgraded to its own CA: issued, injected, a CREATE admitted and mutated and an eviction cloned through Knative",
    timeoutMs: 240_000,
    run: async (t) => {
      const c = ref.cluster();
      const { core } = clientsFor(c.kubeconfig);
      const t0 = Date.now();
      helm(ref, ["upgrade", RELEASE, CHART, "-n", NAMESPACE], values(c));
      const objects = releaseObjects(ref);
      assert.equal(objects.filter((o) => o.kind === "Certificate").length, 3, "the CA and two serving");
      await certificatesReady(c, objects as unknown as Manifest[], 120_000);
      const issuedMs = Date.now() - t0;
      const ca = await caPem(c);
      assert.ok(ca.includes("BEGIN CERTIFICATE"), "the chart's CA Secret holds ca.crt");
      await eventually(
        "the caBundle being the chart's CA",
        async () => Buffer.from(await caBundleInjected(c, FULLNAME), "base64").toString() === ca,
        60_000,
      );
      for (const w of await webhooks(c)) assert.ok(w.clientConfig.caBundle, `${w.name}: caBundle injected`);
      for (const fn of ["mutate-create", "reschedule-delete"])
        await eventually(`Knative Service ${FULLNAME}-${fn} Ready`, () =>
          knativeServiceReady(c, NAMESPACE, `${FULLNAME}-${fn}`),
        );
      await firstAdmitted(c);
      const trustedMs = Date.now() - t0;
      const { ms: createMs } = await timed(() =>
        core.createNamespacedPod({ namespace: VIRTUAL_NS, body: barePod(c, "created-issued") }),
      );
      assertMutated(await waitPodPhase(core, VIRTUAL_NS, "created-issued", "Running"), c.simName);
      const served = await revisionPods(c, NAMESPACE, `${FULLNAME}-mutate-create`, true);
      assert.ok(served.length >= 1, "the release's mutate-create ran in Knative");
      await deleteWebhookAnswers(c, "created-issued");
      const cloneMs = await evictionCloned(c, "created-issued");
      t.diagnostic(
        `helm upgrade to Certificates Ready ${issuedMs} ms, to the first admitted dry run ${trustedMs} ms; ` +
          `CREATE ${createMs} ms; clone ${cloneMs} ms after the eviction`,
      );
    },
  };
}

const INJECT_CA_FROM = "/metadata/annotations/cert-manager.io~1inject-ca-from";

/** JSON patch of the release's webhook configuration (cert-manager's annotation, the caBundles). */
async function patchWebhooks(c: LocalCluster, ops: object[]): Promise<void> {
  await c.admin.request(
    "PATCH",
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${FULLNAME}`,
    ops,
    "application/json-patch+json",
  );
}

/** Until a dry-run CREATE is refused by mutate-create's webhook (the API server has the new configuration). */
async function dryRunRefused(c: LocalCluster): Promise<void> {
  const { core } = clientsFor(c.kubeconfig);
  await eventually(
    `a dry-run CREATE refused by ${WEBHOOK.create}`,
    async () => {
      const body = await refusalOf(
        core.createNamespacedPod({ namespace: VIRTUAL_NS, body: barePod(c, "probe"), dryRun: "All" }),
      );
      return body.includes(WEBHOOK.create);
    },
    30_000,
  );
}

export function uninjectedCase(ref: ChartRef): ClusterCase {
  return {
    name: "helm chart, certificates issued but no caBundle injected: CREATE refused naming the webhook, DELETE not blocked; injected again, admitted",
    timeoutMs: 180_000,
    run: async (t) => {
      const c = ref.cluster();
      const { core } = clientsFor(c.kubeconfig);
      await core.createNamespacedPod({ namespace: VIRTUAL_NS, body: waitingPod(c, "deleted-uninjected") });
      const webhookCount = (await webhooks(c)).length;
      const injectFrom = `cert-manager/${FULLNAME}-ca`;
      // As before the cainjector first filled it: the annotation away (it would put the CA back), no caBundle.
      await patchWebhooks(c, [
        { op: "test", path: INJECT_CA_FROM, value: injectFrom },
        { op: "remove", path: INJECT_CA_FROM },
        ...Array.from({ length: webhookCount }, (_, i) => ({
          op: "remove",
          path: `/webhooks/${i}/clientConfig/caBundle`,
        })),
      ]);
      await dryRunRefused(c);
      await createFailsClosed(ref, t, "created-uninjected", /x509: certificate signed by unknown authority/);
      await deleteGoesThrough(ref, t, "deleted-uninjected");
      const t0 = Date.now();
      await patchWebhooks(c, [{ op: "add", path: INJECT_CA_FROM, value: injectFrom }]);
      await firstAdmitted(c);
      t.diagnostic(
        `annotation back: the cainjector refilled the caBundle, a dry run admitted ${Date.now() - t0} ms later`,
      );
    },
  };
}
