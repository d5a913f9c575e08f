// The run's credentials, made fresh for every cluster and thrown away with it: one CA that signs the API
// server's and the functions' serving certificates (so one CA file serves every kubeconfig and the webhook's
// caBundle), and the service-account signing key pair. Node 20's crypto cannot issue X.509 certificates, so
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

/** A key and a certificate for `subject`, signed by the run's CA, with the given X.509 extensions. */
async function sign(dir: string, name: string, subject: string, extensions: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    subject,
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
  ]);
  await writeFile(path.join(dir, `${name}.ext`), extensions);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

/** A serving certificate for the given subjectAltNames. */
function issue(dir: string, name: string, cn: string, sans: string[]): Promise<void> {
  return sign(
    dir,
    name,
    `/CN=${cn}`,
    `subjectAltName=${sans.join(",")}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n`,
  );
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
  const subject = org ? `/O=${org}/CN=${cn}` : `/CN=${cn}`;
  await sign(dir, name, subject, "extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n");
  return { certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
}

/** extraApiserverIps: where else the API server is reached (the real node's side of its veth). */
export async function createPki(dir: string, extraApiserverIps: readonly string[] = []): Promise<Pki> {
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=simkube-fn-local-ca",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
  ]);
  await issue(dir, "apiserver", "kube-apiserver", [
    ...APISERVER_SANS,
    ...extraApiserverIps.map((ip) => `IP:${ip}`),
  ]);
  await issue(dir, "webhook", "simkube-fn-functions", ["IP:127.0.0.1", "DNS:localhost"]);
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
  };
}
