// The defaults a deployment gets for what its options leave out.

import { VERSION } from "../shared/base/index.js";
import type { DeployedFunction } from "./options.js";

export const DEFAULT_KNATIVE_NAMESPACE = "simkube-fn";
export const DEFAULT_OPENFAAS_NAMESPACE = "openfaas-fn";
export const DEFAULT_BASE_NAME = "simkube-fn";
/**
 * Knative: the image the Dockerfile builds, under a registry name Knative never resolves to a digest
 * (config-deployment registries-skipping-tag-resolving: kind.local, ko.local, dev.local) and a fixed tag,
 * so kind and k3s start it from the node's image store; `:latest` would always be pulled.
 */
export const DEFAULT_IMAGE = `dev.local/simkube-fn:${VERSION}`;
/**
 * OpenFaaS: the same name (openfaas-stack.ts adds the function to it), which is what
 * scripts/build-openfaas-image.sh builds, so the local cluster's images start with no --image. On a real
 * gateway, faas-cli builds and pushes whatever --image names.
 */
export const DEFAULT_OPENFAAS_IMAGE = DEFAULT_IMAGE;
export const DEFAULT_VIRTUAL_NS_PREFIX = "virtual";
export const DEFAULT_MAX_SCALE: Readonly<Record<DeployedFunction, number>> = {
  // The cluster sequence store batches concurrent reservations inside one process; every extra replica
  // adds optimistic-concurrency conflicts on the same ConfigMap, so few, busy replicas are better.
  "mutate-create": 3,
  // Teardown bursts: every pod delete is >= 3 DELETE reviews (k8s.io/apiserver pkg/registry/rest/delete.go).
  "reschedule-delete": 10,
};
/** The API server caps a request object at about 3 MiB; the server and the OpenFaaS template must accept it. */
export const MAX_REVIEW_BYTES = 3 * 1024 * 1024;
