// Renewal under load for the functions through Knative: a forced reissue of cert-manager Certificates (what
// `cmctl renew` does: an Issuing condition on the Certificate's status), the certificate Traefik actually
// serves for a host (a TLS handshake to its websecure port on the real node), and a stream of simulation pod
// CREATEs (dry-run: reviewed by mutate-create, nothing stored) counting every one that failed or came back
// unmutated (without the virtual-node selector mutate-create adds).

import { X509Certificate } from "node:crypto";
import tls from "node:tls";
import type { V1Pod } from "@kubernetes/client-node";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { barePod } from "./kube.js";

interface CertificateObject {
  metadata: { generation?: number };
  status?: { conditions?: Record<string, unknown>[] };
}

/** Marks the Certificate for reissue now, as `cmctl renew` does. */
export async function forceReissue(c: LocalCluster, namespace: string, name: string): Promise<void> {
  const path = `/apis/cert-manager.io/v1/namespaces/${namespace}/certificates/${name}`;
  const cert = await c.admin.request<CertificateObject & Record<string, unknown>>("GET", path);
  const conditions = (cert.status?.conditions ?? []).filter((x) => x.type !== "Issuing");
  conditions.push({
    type: "Issuing",
    status: "True",
    reason: "ManuallyTriggered",
    message: "reissue forced by the test",
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    observedGeneration: cert.metadata.generation,
  });
  await c.admin.request("PUT", `${path}/status`, { ...cert, status: { ...cert.status, conditions } });
}

/** The serial number of the certificate in a kubernetes.io/tls Secret. */
export async function secretSerial(c: LocalCluster, namespace: string, name: string): Promise<string> {
  const secret = await c.admin.request<{ data?: Record<string, string> }>(
    "GET",
    `/api/v1/namespaces/${namespace}/secrets/${name}`,
  );
  return new X509Certificate(Buffer.from(secret.data?.["tls.crt"] ?? "", "base64")).serialNumber;
}

/** The serial number of the certificate Traefik presents for `servername` at ip:port (not verified here). */
export function servedSerial(ip: string, port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: ip, port, servername, rejectUnauthorized: false }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber;
      socket.end();
      if (serial) resolve(serial);
      else reject(new Error("no peer certificate"));
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`TLS to ${ip}:${port} timed out`)));
    socket.once("error", reject);
  });
}

export interface ReviewStream {
  /** Stops the stream and returns its counts. */
  stop(): Promise<{ sent: number; failed: number; errors: string[] }>;
}

/** Dry-run CREATEs of simulation pods one after another until stopped; each must come back mutated. */
export function streamReviews(c: LocalCluster, namespace: string, pauseMs = 100): ReviewStream {
  let running = true;
  let sent = 0;
  const errors: string[] = [];
  const loop = (async () => {
    while (running) {
      const pod = barePod(c, `renewal-${sent}`);
      sent += 1;
      try {
        const made = await c.admin.request<V1Pod>("POST", `/api/v1/namespaces/${namespace}/pods?dryRun=All`, {
          ...pod,
          metadata: { ...pod.metadata, namespace },
        });
        // A dry run gets no sequence number (no side effects); the placement on virtual nodes shows the review.
        if (made.spec?.nodeSelector?.type !== "virtual") errors.push(`${pod.metadata?.name}: not mutated`);
      } catch (err) {
        errors.push(`${pod.metadata?.name}: ${(err as Error).message.slice(0, 300)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { sent, failed: errors.length, errors };
    },
  };
}

/** Runs `run` while reviews stream; the stream is stopped however `run` ends. */
export async function whileReviewsFlow<T>(
  c: LocalCluster,
  namespace: string,
  run: () => Promise<T>,
): Promise<{ value: T; sent: number; failed: number; errors: string[] }> {
  const stream = streamReviews(c, namespace);
  try {
    const value = await run();
    return { value, ...(await stream.stop()) };
  } finally {
    await stream.stop();
  }
}
