// A review posted straight to one of the local cluster's functions, as kube-apiserver posts it: at the URL
// with the path secret, trusting the run's CA, and (in production mode) presenting the API server's webhook
// client certificate, which the functions require.

import { readFileSync } from "node:fs";
import https from "node:https";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import type { AdmissionReview } from "../../../shared/admission/review.js";
import type { FunctionName } from "../../../shared/base/function-names.js";

export function postReview(
  cluster: LocalCluster,
  fn: FunctionName,
  review: AdmissionReview,
): Promise<AdmissionReview> {
  const client = cluster.webhookClient;
  const caller = client ? { cert: readFileSync(client.certFile), key: readFileSync(client.keyFile) } : {};
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(review);
    const req = https.request(
      cluster.functions[fn].url,
      {
        method: "POST",
        ca: cluster.caCertPem,
        ...caller,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${text}`));
          else resolve(JSON.parse(text) as AdmissionReview);
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("the review timed out")));
    req.on("error", reject);
    req.end(body);
  });
}
