// When cert-manager on the real node can be used: its three Deployments rolled out, its webhook admitting a
// Certificate (a dry-run create: the webhook configuration fails closed, so it succeeds only once the API
// server reaches the webhook and trusts the caBundle the cainjector put there), and a self-signed Issuer
// issuing one (the controller at work). Every wait is bounded; a timeout names what is missing: the
// Deployment not rolled out, the webhook's refusal, or the Issuer's and the Certificate's own conditions.

import type { ManifestObject } from "../knative/apply-yaml.js";
import { waitForDeployments } from "../knative/serving-ready.js";
import { waitUntil } from "../readiness.js";
import type { RestClient } from "../rest.js";
import { CERT_MANAGER_PROGRAMS } from "./build.js";
import { CERT_MANAGER_NAMES, CERT_MANAGER_NAMESPACE } from "./objects.js";

const CM = "/apis/cert-manager.io/v1/namespaces";
/** The probe's Issuer, Certificate and Secret share this name, in cert-manager's namespace; removed after. */
export const READINESS_PROBE = "simkube-fn-readiness";

export interface CertManagerReadyOptions {
  /** Per wait (the webhook, the issuing). Default 180 s. */
  timeoutMs?: number;
  /** The issuer the probe Certificate names; default the probe's own self-signed Issuer. */
  issuer?: IssuerRef;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface WithConditions {
  status?: { conditions?: Condition[] };
}

function describe(what: string, o: WithConditions): string {
  const ready = o.status?.conditions?.find((c) => c.type === "Ready");
  return ready
    ? `${what} Ready=${ready.status} (${ready.reason ?? ""}: ${ready.message ?? ""})`
    : `${what} has no Ready condition yet`;
}

export function probeCertificate(
  issuer: { kind: string; name: string },
  name = READINESS_PROBE,
): ManifestObject {
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: { name, namespace: CERT_MANAGER_NAMESPACE },
    spec: {
      secretName: name,
      commonName: name,
      dnsNames: [`${name}.${CERT_MANAGER_NAMESPACE}.svc`],
      privateKey: { algorithm: "ECDSA", size: 256 },
      issuerRef: { group: "cert-manager.io", ...issuer },
    },
  };
}

/** Until a dry-run create of a valid Certificate is admitted (the API server's refusal is the error named). */
export async function waitForWebhookAdmission(admin: RestClient, timeoutMs: number): Promise<void> {
  const probe = probeCertificate({ kind: "Issuer", name: READINESS_PROBE }, `${READINESS_PROBE}-dry-run`);
  await waitUntil(
    `cert-manager's webhook (${CERT_MANAGER_NAMESPACE}/${CERT_MANAGER_NAMES.webhook}) admitting a Certificate`,
    async () => {
      await admin.request("POST", `${CM}/${CERT_MANAGER_NAMESPACE}/certificates?dryRun=All`, probe);
      return true;
    },
    { timeoutMs, intervalMs: 1000 },
  );
}

export interface IssuerRef {
  kind: "Issuer" | "ClusterIssuer";
  name: string;
}

/** An Issuer lives in the namespace of the Certificates it signs; a ClusterIssuer in none. */
function issuerPath(issuer: IssuerRef, namespace: string): string {
  return issuer.kind === "ClusterIssuer"
    ? `/apis/cert-manager.io/v1/clusterissuers/${issuer.name}`
    : `${CM}/${namespace}/issuers/${issuer.name}`;
}

/**
 * Nothing once the Certificate is Ready; otherwise what is missing, in one line: its own Ready condition and
 * its issuer's (the issuer's is usually the cause: a CA Secret that does not exist, an ACME account refused).
 */
export async function certificatePending(
  admin: RestClient,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const cert = await admin.request<WithConditions & { spec?: { issuerRef?: Partial<IssuerRef> } }>(
    "GET",
    `${CM}/${namespace}/certificates/${name}`,
  );
  if (cert.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) return undefined;
  const ref = cert.spec?.issuerRef;
  const issuer: IssuerRef = {
    kind: ref?.kind === "ClusterIssuer" ? "ClusterIssuer" : "Issuer",
    name: ref?.name ?? "",
  };
  let ofIssuer: string;
  try {
    ofIssuer = describe(
      `${issuer.kind} ${issuer.name}`,
      await admin.request<WithConditions>("GET", issuerPath(issuer, namespace)),
    );
  } catch (err) {
    ofIssuer = `${issuer.kind} ${issuer.name} unreadable (${(err as Error).message})`;
  }
  return `${describe(`Certificate ${namespace}/${name}`, cert)}; ${ofIssuer}`;
}

/** True once the probe is Ready; otherwise throws what is missing: its own and its issuer's conditions. */
async function certificateIssued(admin: RestClient): Promise<boolean> {
  const pending = await certificatePending(admin, CERT_MANAGER_NAMESPACE, READINESS_PROBE);
  if (pending) throw new Error(pending);
  return true;
}

/** A self-signed Issuer (unless another is named) issues the probe Certificate; both are removed after. */
export async function waitForIssuing(admin: RestClient, o: CertManagerReadyOptions = {}): Promise<void> {
  const own = o.issuer === undefined;
  const issuer = o.issuer ?? { kind: "Issuer" as const, name: READINESS_PROBE };
  if (own)
    await admin.ensure(`${CM}/${CERT_MANAGER_NAMESPACE}/issuers`, {
      apiVersion: "cert-manager.io/v1",
      kind: "Issuer",
      metadata: { name: READINESS_PROBE, namespace: CERT_MANAGER_NAMESPACE },
      spec: { selfSigned: {} },
    });
  await admin.ensure(`${CM}/${CERT_MANAGER_NAMESPACE}/certificates`, probeCertificate(issuer));
  try {
    await waitUntil(
      `a ${issuer.kind} ${issuer.name} issuing Certificate ${CERT_MANAGER_NAMESPACE}/${READINESS_PROBE}`,
      () => certificateIssued(admin),
      { timeoutMs: o.timeoutMs ?? 180_000, intervalMs: 1000 },
    );
  } finally {
    await admin.remove(`${CM}/${CERT_MANAGER_NAMESPACE}/certificates/${READINESS_PROBE}`);
    await admin.remove(`/api/v1/namespaces/${CERT_MANAGER_NAMESPACE}/secrets/${READINESS_PROBE}`);
    if (own) await admin.remove(issuerPath(issuer, CERT_MANAGER_NAMESPACE));
  }
}

/** Rolled out, admitting, issuing. */
export async function waitForCertManager(admin: RestClient, o: CertManagerReadyOptions = {}): Promise<void> {
  await waitForDeployments(
    admin,
    CERT_MANAGER_PROGRAMS.map((p) => ({ namespace: CERT_MANAGER_NAMESPACE, name: CERT_MANAGER_NAMES[p] })),
  );
  await waitForWebhookAdmission(admin, o.timeoutMs ?? 180_000);
  await waitForIssuing(admin, o);
}
