// One review through a function before the build writes its V8 code cache (`serve --check` with
// SIMKUBE_FN_WRITE_CODE_CACHE=1: scripts/bundle.mjs and the Dockerfile). V8 puts in the cache only what it
// has compiled by then, and `--check` alone never runs a review: every function the first real review
// needs (the HTTP path, the handler, the Kubernetes client's request path) was compiled lazily during each
// cold start's first review. The build's kubeconfig points nowhere, so mutate-create's review stops where
// the client's first request fails (it is denied) and reschedule-delete's is skipped before any request;
// what runs up to there is what a cold start would otherwise compile.

import { request } from "node:http";
import { ADMISSION_API_VERSION } from "../../shared/admission.js";
import type { FunctionName } from "../../shared/function-names.js";

const POD_KIND = { group: "", version: "v1", kind: "Pod" };
const POD_RESOURCE = { group: "", version: "v1", resource: "pods" };

/** A pod as the driver creates it in a virtual namespace, owned by its SimulationRoot. */
function warmUpPod(namespace: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "code-cache-warm-up",
      namespace,
      labels: { app: "code-cache-warm-up" },
      ownerReferences: [
        {
          apiVersion: "simkube.io/v1",
          kind: "SimulationRoot",
          name: "sk-code-cache-driver-root",
          uid: "code-cache-root-uid",
        },
      ],
    },
    spec: {
      containers: [{ name: "main", image: "code-cache:warm-up", resources: { requests: { cpu: "1" } } }],
      restartPolicy: "Never",
    },
  };
}

/** The review body: a CREATE for mutate-create, a namespace controller's DELETE for reschedule-delete. */
export function warmUpReview(name: FunctionName): string {
  const namespace = "virtual-code-cache";
  const pod = warmUpPod(namespace);
  const request =
    name === "mutate-create"
      ? { operation: "CREATE", object: pod }
      : {
          operation: "DELETE",
          oldObject: pod,
          userInfo: { username: "system:serviceaccount:kube-system:namespace-controller" },
        };
  return JSON.stringify({
    apiVersion: ADMISSION_API_VERSION,
    kind: "AdmissionReview",
    request: {
      uid: "code-cache-warm-up",
      kind: POD_KIND,
      resource: POD_RESOURCE,
      name: "code-cache-warm-up",
      namespace,
      ...request,
    },
  });
}

/** POSTs the review to the function listening on 127.0.0.1:port; resolves with the HTTP status. */
export function postWarmUpReview(name: FunctionName, port: number, pathSecret?: string): Promise<number> {
  const body = warmUpReview(name);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: `/${pathSecret ?? ""}`,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
