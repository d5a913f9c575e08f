// The run's credentials, made fresh for every cluster and thrown away with it: one CA that signs the API
// server's and the functions' serving certificates (so one CA file serves every kubeconfig and the webhook's
// caBundle), the service-account signing key pair, and a second CA that signs only the client certificate the
// API server presents to the functions (their CLIENT_CA_FILE). A separate CA: the API server trusts the first
// for its own clients (--client-ca-file), so a certificate the functions accept must not log in there. Node 20's crypto cannot issue X.509 certificates, so
// this shells out to openssl, which every Debian image has.

import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { KUBERNETES_SERVICE_IP } from "./real-node/addresses.js";

const run = promisify(execFile);

export interface Pki {
  caCertFile: string;
  caCertPem: string;
  apiserverCertFile: string;
  apiserverKeyFile: string;
  /** Serves both functions on 127.0.0.1 (IP SAN), as the webhook URLs name them. */
  webhookCertFile: string;
  webhookKeyFile: string;
  saKeyFile: string;
  saPubFile: string;
  /** The functions' CLIENT_CA_FILE: it signed webhookClientCertFile and nothing else. */
  webhookClientCaFile: string;
  /** What kube-apiserver presents to the functions (its AdmissionConfiguration kubeConfigFile). */
  webhookClientCertFile: string;
  webhookClientKeyFile: string;
}

// The names the API server is reached by from inside and outside the cluster (Go checks SANs only).
const APISERVER_SANS = [
  "IP:127.0.0.1",
  `IP:${KUBERNETES_SERVICE_IP}`,
  "DNS:localhost",
  "DNS:kubernetes",
  "DNS:kubernetes.default",
  "DNS:kubernetes.default.svc",
  "DNS:kubernetes.default.svc.cluster.local",
];

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run("openssl", args, { cwd: dir });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === "ENOENT")
      throw new Error("openssl not found on PATH: it makes the local cluster's certificates");
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`);
  }
}

interface Issued {
  /** The signing CA's file stem ("ca" or "webhook-client-ca"). */
  ca: string;
  usage: "serverAuth" | "clientAuth";
  sans: readonly string[];
  /** The subject's organisation: the user's group for the API server (kubelet identities). */
  org?: string;
}

function extensions(i: Issued): string {
  const san = i.sans.length > 0 ? `subjectAltName=${i.sans.join(",")}\n` : "";
  return `${san}extendedKeyUsage=${i.usage}\nkeyUsage=digitalSignature,keyEncipherment\n`;
}

/** A key and a certificate signed by one of the run's CAs. */
async function issue(dir: string, name: string, cn: string, i: Issued): Promise<void> {
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    i.org ? `/O=${i.org}/CN=${cn}` : `/CN=${cn}`,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
  ]);
  await writeFile(path.join(dir, `${name}.ext`), extensions(i));
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${i.ca}.crt`,
    "-CAkey",
    `${i.ca}.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

export interface ClientCert {
  certFile: string;
  keyFile: string;
}

/** A client certificate signed by the run's CA: `cn` is the user, `org` its group (kubelet identities). */
export async function issueClientCert(
  dir: string,
  name: string,
  cn: string,
  org?: string,
): Promise<ClientCert> {
  await issue(dir, name, cn, { ca: "ca", usage: "clientAuth", sans: [], ...(org ? { org } : {}) });
  return { certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
}

/**
 * A serving certificate from the run's CA for `dnsNames` (the functions as pods: `<service>.<namespace>.svc`,
 * the name the API server checks for a service-mode webhook).
 */
export async function issueServingCert(
  dir: string,
  name: string,
  dnsNames: readonly string[],
): Promise<ClientCert> {
  await issue(dir, name, dnsNames[0] ?? name, {
    ca: "ca",
    usage: "serverAuth",
    sans: dnsNames.map((n) => `DNS:${n}`),
  });
  return { certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
}

async function selfSignedCa(dir: string, name: string, cn: string): Promise<void> {
  const out = ["-keyout", `${name}.key`, "-out", `${name}.crt`];
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${cn}`,
    ...out,
  ]);
}

/** The subject CN of kube-apiserver's webhook client certificate: the functions pin it (CLIENT_CERT_SUBJECTS). */
export const WEBHOOK_CLIENT_CN = "kube-apiserver-webhook-client";

/** extraApiserverIps: where else the API server is reached (the real node's side of its veth). */
export async function createPki(dir: string, extraApiserverIps: readonly string[] = []): Promise<Pki> {
  await selfSignedCa(dir, "ca", "simkube-fn-local-ca");
  await selfSignedCa(dir, "webhook-client-ca", "simkube-fn-local-webhook-client-ca");
  const server = (sans: string[]) => ({ ca: "ca", usage: "serverAuth", sans }) as const;
  const apiserverSans = [...APISERVER_SANS, ...extraApiserverIps.map((ip) => `IP:${ip}`)];
  await issue(dir, "apiserver", "kube-apiserver", server(apiserverSans));
  await issue(dir, "webhook", "simkube-fn-functions", server(["IP:127.0.0.1", "DNS:localhost"]));
  const client = { ca: "webhook-client-ca", usage: "clientAuth", sans: [] } as const;
  await issue(dir, "webhook-client", WEBHOOK_CLIENT_CN, client);
  await openssl(dir, ["genrsa", "-out", "sa.key", "2048"]);
  await openssl(dir, ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
  const file = (name: string) => path.join(dir, name);
  return {
    caCertFile: file("ca.crt"),
    caCertPem: await readFile(file("ca.crt"), "utf8"),
    apiserverCertFile: file("apiserver.crt"),
    apiserverKeyFile: file("apiserver.key"),
    webhookCertFile: file("webhook.crt"),
    webhookKeyFile: file("webhook.key"),
    saKeyFile: file("sa.key"),
    saPubFile: file("sa.pub"),
    webhookClientCaFile: file("webhook-client-ca.crt"),
    webhookClientCertFile: file("webhook-client.crt"),
    webhookClientKeyFile: file("webhook-client.key"),
  };
}
