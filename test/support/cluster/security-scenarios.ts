// `cluster up`'s production security setup, seen from outside on the real cluster: the functions take a review
// only at their secret path and only from a caller holding the certificate kube-apiserver presents (the API
// server itself reaches them: the webhook probe at start-up went through), and each function calls the API as
// the ServiceAccount the manifests render.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import https from "node:https";
import { createRestClient } from "../../../functions/local-cluster/rest.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { serviceAccountUsername } from "../../../knative/rbac.js";
import { FUNCTION_NAMES } from "../../../shared/base/function-names.js";
import type { ClusterCase } from "./suite.js";
import type { WorldRef } from "./world.js";

interface PostOptions {
  ca: string;
  cert?: Buffer;
  key?: Buffer;
}

/** POSTs an empty review; resolves to the HTTP status. */
function postStatus(url: string, o: PostOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: "POST", ...o, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(
      JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "u" } }),
    );
  });
}

export function securityCases(ref: WorldRef): ClusterCase[] {
  return [
    {
      name: "security: a review is taken only at the secret path and only with the API server's client certificate",
      run: async () => {
        const w = ref.get();
        const client = w.cluster.webhookClient;
        assert.ok(client, "production mode has the API server's webhook client certificate");
        const ca = w.cluster.caCertPem;
        const withCert = { ca, cert: readFileSync(client.certFile), key: readFileSync(client.keyFile) };
        for (const fn of FUNCTION_NAMES) {
          const url = w.cluster.functions[fn].url;
          assert.match(
            url,
            /^https:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{64}$/,
            `${fn}: the URL ends in the path secret`,
          );
          assert.equal(await postStatus(url, { ca }), 403, `${fn}: no client certificate`);
          assert.equal(
            await postStatus(new URL("/", url).toString(), withCert),
            404,
            `${fn}: no path secret`,
          );
          assert.equal(await postStatus(url, withCert), 200, `${fn}: both`);
        }
      },
    },
    {
      name: "security: each function calls the API as the ServiceAccount the manifests render",
      run: async () => {
        const w = ref.get();
        const o = resolveOptions(w.cluster.deployment);
        for (const fn of FUNCTION_NAMES) {
          const token =
            /token: (\S+)/.exec(readFileSync(w.cluster.functionKubeconfigs[fn], "utf8"))?.[1] ?? "";
          const api = createRestClient(w.cluster.server, w.cluster.caCertPem, token);
          const review = await api.request<{ status: { userInfo: { username: string } } }>(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
          );
          assert.equal(review.status.userInfo.username, serviceAccountUsername(o, fn));
        }
      },
    },
  ];
}
