// The functions served by Knative on `cluster up --knative` (test/support/cluster/knative-functions.ts says
// how they are deployed: `manifests --platform kind --ingress traefik` applied exactly as rendered, the default
// image, cert-manager on the real node issuing the rendered Certificates and injecting the CA). The API server
// reaches them through Traefik's websecure entry point, the host-rewrite route, Traefik's Knative provider and,
// from zero, the activator:
// - cert-manager issued the CA and both serving certificates, and its cainjector put that CA, and only it,
//   into the webhook configuration's caBundle (no CA was passed by hand);
// - both Knative Services Ready, and both at zero after the (shortened) stable window and grace;
// - from zero, a simulation pod CREATE admitted and mutated, through the deployment's webhook and through
//   sk-<sim>-mutatepods (`manifests webhook --sim-name`, the stock-SimKube adoption path);
// - an eviction of a running bare pod: exactly one clone;
// - a forced reissue of both serving certificates while dry-run CREATEs flow: Traefik serves the new ones
//   without a restart, no review fails; then a forced reissue of the CA, reviews flowing: the caBundle takes the
//   new CA (keeping the old one), the serving certificates are reissued from it, no review fails;
// - charts/simkube-fn installed by helm for the same platform beside it (test/support/cluster/chart-on-knative.ts):
//   first naming an issuer that cannot issue (the readiness wait names it; CREATE refused naming the webhook,
//   DELETE not blocked, both timed), then upgraded to the chart's own CA (issued, injected, a CREATE admitted and
//   mutated and an eviction cloned through Knative), then its caBundle taken away (CREATE refused, DELETE not
//   blocked) and injected again;
// - opt-in: SIMKUBE_FN_KNATIVE_FN_COLD_CYCLES=N cold CREATEs from zero (p50/p99 against timeoutSeconds);
//   SIMKUBE_FN_KNATIVE_FN_BURST=N a teardown of N KWOK pods with and without the DELETE webhook, order
//   alternated (with, without, without, with), reschedule-delete's replicas over time.
// Skipped with one loud line when Go, the node's programs, the image tools or cert-manager's upstream archives are
// missing (the chart's cases also without helm); fails under CI=true.

import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import path from "node:path";
import { after, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { percentile } from "../../functions/cli/loadtest/load.js";
import type { LocalCluster } from "../../functions/local-cluster/cluster-types.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { caName } from "../../knative/gateway-route.js";
import { buildSimulationWebhookConfiguration, simulationWebhookName } from "../../knative/manifests.js";
import {
  forceReissue,
  secretSerial,
  servedSerial,
  whileReviewsFlow,
} from "../support/cluster/cert-renewal.js";
import {
  type ChartRef,
  issuedCase,
  uninjectedCase,
  unissuedCase,
} from "../support/cluster/chart-on-knative.js";
import { buildImage } from "../support/cluster/function-pods.js";
import {
  caBundleInjected,
  deployThroughKnative,
  type KnativeDeployment,
  revisionPods,
  serviceName,
} from "../support/cluster/knative-functions.js";
import {
  barePod,
  clientsFor,
  clonesOf,
  createVirtualNamespace,
  eventually,
  replaceObject,
  runningBarePod,
  waitPodPhase,
} from "../support/cluster/kube.js";
import { assertMutated } from "../support/cluster/mutation-scenarios.js";
import {
  type ClusterCase,
  clusterOf,
  openDeployedSuite,
  registerClusterCases,
} from "../support/cluster/suite.js";
import { runTeardownBurst } from "../support/cluster/teardown-burst.js";
import { helmBinary } from "../support/helm.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NS = "virtual-knative";
const COLD_CYCLES = Number(process.env.SIMKUBE_FN_KNATIVE_FN_COLD_CYCLES ?? "0");
const BURST = Number(process.env.SIMKUBE_FN_KNATIVE_FN_BURST ?? "0");

// Built before the cluster starts: under CI=true a helm that cannot be built fails the file.
const helm = helmBinary();
const opened = await openDeployedSuite({
  buildScript: "scripts/build-image.sh",
  build: () => buildImage(repoRoot),
  cluster: { realNode: true, reschedule: true, recordReviews: true, withKnative: true },
  deploy: deployThroughKnative,
});

const cluster = (): LocalCluster => clusterOf(opened.suite);
function deployed(): KnativeDeployment {
  if (!opened.deployed) throw new Error("not deployed");
  return opened.deployed;
}

const core = () => clientsFor(cluster().kubeconfig).core;
const functionNs = () => resolveOptions(deployed().options).namespace;
const podsOf = (fn: "mutate-create" | "reschedule-delete", terminating = false) =>
  revisionPods(cluster(), functionNs(), serviceName(deployed().options, fn), terminating);
const hostReviewsOf = (name: string) => cluster().reviews.filter((r) => r.request.name === name);

/**
 * Knative has scaled `fn` to zero: no pod left that is not terminating. `drained`: none at all, a draining pod
 * included (about 30 s more, its drain): the cold cycles wait for that, since a draining pod may still answer.
 */
async function atZero(fn: "mutate-create" | "reschedule-delete", drained = false): Promise<void> {
  await eventually(`${fn} at zero`, async () => (await podsOf(fn, drained)).length === 0, 120_000);
}

/** Creates a simulation pod and waits for it to run; the create's own duration (the review included). */
async function createSimulationPod(name: string): Promise<number> {
  const c = cluster();
  const t0 = Date.now();
  await core().createNamespacedPod({ namespace: NS, body: barePod(c, name) });
  const ms = Date.now() - t0;
  assertMutated(await waitPodPhase(core(), NS, name, "Running"), c.simName);
  assert.equal(hostReviewsOf(name).length, 0, "no review reached the host processes");
  return ms;
}

const readyThenZero: ClusterCase = {
  name: "both Knative Services become Ready through Traefik, then scale to zero after the stable window and grace",
  timeoutMs: 180_000,
  run: async (t: TestContext) => {
    const { readyMs, deployMs } = deployed();
    const started = cluster().timings;
    t.diagnostic(
      `cluster up --knative: cert-manager ready ${started.certManagerReady} ms and Knative ready ${started.knativeReady} ms into the start; image import to webhooks switched ${deployMs} ms`,
    );
    t.diagnostic(`both Services Ready ${readyMs} ms after the rendered objects were applied`);
    const t0 = Date.now();
    await atZero("mutate-create");
    await atZero("reschedule-delete");
    t.diagnostic(`both at zero ${Date.now() - t0} ms after that`);
    await createVirtualNamespace(cluster(), core(), NS);
  },
};

async function secretData(namespace: string, name: string): Promise<Record<string, string>> {
  const secret = await cluster().admin.request<{ data?: Record<string, string> }>(
    "GET",
    `/api/v1/namespaces/${namespace}/secrets/${name}`,
  );
  return secret.data ?? {};
}

const issuedAndInjected: ClusterCase = {
  name: "cert-manager issued the rendered CA and serving certificates, and injected that CA as the caBundle",
  run: async (t: TestContext) => {
    const o = resolveOptions(deployed().options);
    const webhook = deployed().objects.find((m) => m.kind === "MutatingWebhookConfiguration");
    assert.ok(webhook?.metadata?.name);
    assert.equal(o.caBundle, undefined, "no CA passed by hand");
    const injected = await caBundleInjected(cluster(), webhook.metadata.name);
    const caPem = Buffer.from(
      (await secretData(o.certManagerNamespace, caName(o)))["ca.crt"] ?? "",
      "base64",
    );
    assert.ok(caPem.length > 0, "the rendered CA Certificate's Secret holds ca.crt");
    assert.equal(Buffer.from(injected, "base64").toString(), caPem.toString(), "caBundle is the rendered CA");
    const ca = new X509Certificate(caPem);
    assert.ok(ca.ca, "the injected certificate is a CA");
    const certificates = (
      deployed().objects as unknown as {
        kind: string;
        metadata: { name: string; namespace?: string };
        spec: { secretName: string };
      }[]
    ).filter((m) => m.kind === "Certificate" && m.metadata.namespace === o.traefikNamespace);
    assert.equal(certificates.length, o.functions.length, "one serving Certificate per function");
    for (const m of certificates) {
      const data = await secretData(o.traefikNamespace, m.spec.secretName);
      const served = new X509Certificate(Buffer.from(data["tls.crt"] ?? "", "base64"));
      assert.ok(served.checkIssued(ca) && served.verify(ca.publicKey), `${m.metadata.name} signed by the CA`);
      t.diagnostic(`${m.metadata.name}: ${served.subjectAltName}, valid to ${served.validTo}`);
    }
  },
};

interface ServingCertificate {
  name: string;
  secretName: string;
  host: string;
}

function servingCertificates(): ServingCertificate[] {
  const o = resolveOptions(deployed().options);
  return (
    deployed().objects as unknown as {
      kind: string;
      metadata: { name: string; namespace?: string };
      spec: { secretName: string; dnsNames: string[] };
    }[]
  )
    .filter((m) => m.kind === "Certificate" && m.metadata.namespace === o.traefikNamespace)
    .map((m) => ({ name: m.metadata.name, secretName: m.spec.secretName, host: m.spec.dnsNames[0] ?? "" }));
}

/** Traefik's one pod: its IP (websecure is reached there directly) and its restart count. */
async function traefikPod(): Promise<{ name: string; ip: string; restarts: number }> {
  const o = resolveOptions(deployed().options);
  const list = await cluster().admin.request<{
    items: {
      metadata: { name: string };
      status?: { podIP?: string; containerStatuses?: { restartCount: number }[] };
    }[];
  }>("GET", `/api/v1/namespaces/${o.traefikNamespace}/pods?labelSelector=app.kubernetes.io%2Fname%3Dtraefik`);
  const [pod] = list.items;
  assert.ok(pod?.status?.podIP, "Traefik's pod has an IP");
  return {
    name: pod.metadata.name,
    ip: pod.status.podIP,
    restarts: pod.status.containerStatuses?.[0]?.restartCount ?? 0,
  };
}

/** Until every serving certificate's Secret holds a new certificate and Traefik serves it. */
async function newCertificatesServed(before: Map<string, string>, ip: string): Promise<void> {
  const o = resolveOptions(deployed().options);
  for (const cert of servingCertificates())
    await eventually(
      `Traefik serving ${cert.name}'s reissued certificate`,
      async () => {
        const now = await secretSerial(cluster(), o.traefikNamespace, cert.secretName);
        return now !== before.get(cert.name) && (await servedSerial(ip, 8443, cert.host)) === now;
      },
      120_000,
    );
}

const renewalUnderLoad: ClusterCase = {
  name: "a forced reissue of both serving certificates while CREATEs flow: served without a restart, no failed review",
  timeoutMs: 240_000,
  run: async (t: TestContext) => {
    const o = resolveOptions(deployed().options);
    const traefik = await traefikPod();
    const before = new Map<string, string>();
    for (const cert of servingCertificates()) {
      const serial = await secretSerial(cluster(), o.traefikNamespace, cert.secretName);
      assert.equal(await servedSerial(traefik.ip, 8443, cert.host), serial, `${cert.name} served`);
      before.set(cert.name, serial);
    }
    const pause = () => new Promise((resolve) => setTimeout(resolve, 3_000));
    const {
      value: servedMs,
      sent,
      failed,
      errors,
    } = await whileReviewsFlow(cluster(), NS, async () => {
      await pause();
      const t0 = Date.now();
      for (const cert of servingCertificates()) await forceReissue(cluster(), o.traefikNamespace, cert.name);
      await newCertificatesServed(before, traefik.ip);
      const ms = Date.now() - t0;
      await pause();
      return ms;
    });
    t.diagnostic(
      `reissued certificates served ${servedMs} ms after the reissue; ${sent} CREATEs, ${failed} failed`,
    );
    assert.equal(failed, 0, `failed reviews: ${errors.slice(0, 3).join("; ")}`);
    assert.ok(sent > 10, "reviews flowed throughout");
    const after = await traefikPod();
    assert.deepEqual([after.name, after.restarts], [traefik.name, traefik.restarts], "Traefik not restarted");
  },
};

/** The certificates of a base64 PEM bundle, each as its own PEM text. */
function bundleCerts(b64: string): string[] {
  const pem = Buffer.from(b64, "base64").toString();
  return (pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map((c) => c.trim());
}

/** Reissues the CA, waits for the caBundle to hold the new one, then reissues and waits for the serving ones. */
async function rotateCa(t: TestContext, name: string, oldCa: string | undefined): Promise<number> {
  const o = resolveOptions(deployed().options);
  const t0 = Date.now();
  await forceReissue(cluster(), o.certManagerNamespace, caName(o));
  // The Secret's CA as it is now, and the bundle's certificates (cainjector may keep the old CA beside it).
  let kept = false;
  await eventually(
    "a new CA in its Secret, and the caBundle holding it",
    async () => {
      const [ca] = bundleCerts((await secretData(o.certManagerNamespace, caName(o)))["ca.crt"] ?? "");
      const bundle = bundleCerts(await caBundleInjected(cluster(), name));
      kept = bundle.includes(oldCa ?? "");
      if (ca && ca !== oldCa && bundle.includes(ca)) return true;
      throw new Error(
        `CA ${ca ? new X509Certificate(ca).serialNumber : "none"} (the old one: ${ca === oldCa}), caBundle ` +
          `${bundle.map((c) => new X509Certificate(c).serialNumber).join(", ")}`,
      );
    },
    120_000,
  );
  t.diagnostic(
    `caBundle took the new CA ${Date.now() - t0} ms after the reissue; old CA kept in it: ${kept}`,
  );
  const traefik = await traefikPod();
  const before = new Map<string, string>();
  for (const cert of servingCertificates()) {
    before.set(cert.name, await secretSerial(cluster(), o.traefikNamespace, cert.secretName));
    await forceReissue(cluster(), o.traefikNamespace, cert.name);
  }
  await newCertificatesServed(before, traefik.ip);
  return Date.now() - t0;
}

const caRotation: ClusterCase = {
  name: "a CA rotation while CREATEs flow: the caBundle takes the new CA, the serving certificates follow, no failed review",
  timeoutMs: 240_000,
  run: async (t: TestContext) => {
    // The configuration in place since the adoption case: sk-<sim>-mutatepods, with the same inject-ca-from.
    const name = simulationWebhookName(cluster().simName);
    const [oldCa] = bundleCerts(await caBundleInjected(cluster(), name));
    const {
      value: ms,
      sent,
      failed,
      errors,
    } = await whileReviewsFlow(cluster(), NS, () => rotateCa(t, name, oldCa));
    t.diagnostic(
      `serving certificates from the new CA served ${ms} ms after the CA reissue; ${sent} CREATEs, ${failed} failed`,
    );
    assert.equal(failed, 0, `failed reviews: ${errors.slice(0, 3).join("; ")}`);
    await createSimulationPod("after-ca-rotation");
  },
};

const createFromZero: ClusterCase = {
  name: "from zero: a simulation pod CREATE is admitted and mutated through Traefik and the activator",
  timeoutMs: 180_000,
  run: async (t: TestContext) => {
    await atZero("mutate-create");
    const ms = await createSimulationPod("from-zero");
    assert.ok((await podsOf("mutate-create")).length >= 1, "Knative started mutate-create for it");
    t.diagnostic(`CREATE from zero answered in ${ms} ms`);
  },
};

const adoptedWebhook: ClusterCase = {
  name: "from zero through sk-<sim>-mutatepods (manifests webhook --sim-name), the webhook stock SimKube adopts",
  timeoutMs: 180_000,
  run: async (t: TestContext) => {
    const c = cluster();
    const own = deployed().objects.find((m) => m.kind === "MutatingWebhookConfiguration");
    assert.ok(own?.metadata?.name);
    await c.admin.request(
      "DELETE",
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${own.metadata.name}`,
    );
    const adopted = buildSimulationWebhookConfiguration(deployed().options);
    assert.equal(adopted.metadata?.name, simulationWebhookName(c.simName));
    await replaceObject(c, adopted as never);
    await caBundleInjected(c, simulationWebhookName(c.simName));
    await atZero("mutate-create");
    const ms = await createSimulationPod("adopted");
    t.diagnostic(`CREATE from zero through ${adopted.metadata?.name} answered in ${ms} ms`);
  },
};

const evictionClone: ClusterCase = {
  name: "an eviction of a running bare pod through Knative: exactly one clone",
  timeoutMs: 120_000,
  run: async (t: TestContext) => {
    const c = cluster();
    const pod = await runningBarePod(c, core(), NS, "evicted");
    await atZero("reschedule-delete");
    const t0 = Date.now();
    await core().createNamespacedPodEviction({
      name: "evicted",
      namespace: NS,
      body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: "evicted", namespace: NS } },
    });
    await eventually("a clone", async () => (await clonesOf(core(), NS, "evicted")).length > 0, 60_000);
    t.diagnostic(`clone seen ${Date.now() - t0} ms after the eviction`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    assert.equal((await clonesOf(core(), NS, "evicted")).length, 1, "exactly one clone");
    assert.ok(pod.metadata?.uid);
  },
};

const coldCycles: ClusterCase = {
  name: `${COLD_CYCLES} cold CREATEs from zero (SIMKUBE_FN_KNATIVE_FN_COLD_CYCLES), against the webhook's timeoutSeconds`,
  timeoutMs: 60_000 + COLD_CYCLES * 90_000,
  run: async (t: TestContext) => {
    const times: number[] = [];
    for (let i = 0; i < COLD_CYCLES; i++) {
      await atZero("mutate-create", true);
      times.push(await createSimulationPod(`cold-${i}`));
    }
    const sorted = [...times].sort((a, b) => a - b);
    const timeout = resolveOptions(deployed().options).tuning["mutate-create"].timeoutSeconds;
    t.diagnostic(
      `cold CREATEs (ms): ${times.join(", ")}; p50 ${percentile(sorted, 50)}, p99 ${percentile(sorted, 99)}; timeoutSeconds ${timeout}`,
    );
    assert.ok(percentile(sorted, 99) < timeout * 1000);
  },
};

const burst: ClusterCase = {
  name: `teardown of ${BURST} KWOK pods with and without the DELETE webhook, order alternated (SIMKUBE_FN_KNATIVE_FN_BURST)`,
  timeoutMs: 600_000 + BURST * 1_500,
  run: async (t: TestContext) => {
    const rounds = await runTeardownBurst(cluster(), {
      pods: BURST,
      order: [true, false, false, true],
      replicas: () => podsOf("reschedule-delete").then((p) => p.length),
      log: (line) => t.diagnostic(line),
    });
    for (const r of rounds) {
      assert.equal(r.webhookErrors, 0, "no webhook error in the API server's log");
      assert.equal(r.clonesSeen, 0, "no clone");
    }
    await atZero("reschedule-delete");
    t.diagnostic("reschedule-delete back at zero");
  },
};

const chart: ChartRef = {
  cluster,
  helm: () => ("binary" in helm ? helm.binary : ""),
};
if ("skip" in helm)
  process.stderr.write(`\n*** SKIPPED the Helm chart's 3 cases (knative-functions): ${helm.skip} ***\n\n`);

after(async () => {
  if ("cluster" in opened.suite) await opened.suite.cluster.stop();
});

registerClusterCases("knative-functions.test.ts", opened.suite, [
  readyThenZero,
  issuedAndInjected,
  createFromZero,
  adoptedWebhook,
  evictionClone,
  renewalUnderLoad,
  caRotation,
  ...("binary" in helm ? [unissuedCase(chart), issuedCase(chart), uninjectedCase(chart)] : []),
  ...(COLD_CYCLES > 0 ? [coldCycles] : []),
  ...(BURST > 0 ? [burst] : []),
]);
