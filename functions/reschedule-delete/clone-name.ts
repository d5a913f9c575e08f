// The name of a rescheduled pod, after SimKube's build_rescheduled_pod_name: `<base>-clone-<N+1>` when the
// pod is already `<base>-clone-<N>`, else `<name>-clone-1`. Deterministic on purpose: every replica that
// handles a review of the same deletion computes the same name, so the API server's AlreadyExists makes the
// clone happen once across replicas.
//
// Where SimKube falls short: a pod name may be up to 253 characters (a DNS-1123 subdomain), and the suffix
// can push the clone past that, so the create would fail. We shorten the base and add a hash of the full
// base, so two long names sharing a prefix still get different clones, and keep the `-clone-N` suffix.
//
// Not handled, as in SimKube: the kubelet truncates a pod's hostname to 63 characters (kubernetes/kubernetes
// pkg/kubelet/kubelet_pods.go truncatePodHostnameIfNeeded), so clones of a pod whose name is 55+ characters
// share a hostname with each other and the original (the API server only warns). Under KWOK there is no
// real hostname; on real nodes it could matter.

import { createHash } from "node:crypto";

export const MAX_POD_NAME_LENGTH = 253;
const CLONE_COUNTER = /^(.*)-clone-(\d+)$/;
const HASH_LENGTH = 10;

/** `<base>-clone-<N+1>` or `<name>-clone-1`, at most 253 characters. Pure. */
export function buildCloneName(originalName: string): string {
  const match = CLONE_COUNTER.exec(originalName);
  // BigInt: a counter too long for a number must still increase (SimKube would panic here).
  const [base, counter] = match ? [match[1] ?? "", BigInt(match[2] ?? "0") + 1n] : [originalName, 1n];
  const suffix = `-clone-${counter}`;
  if (base.length + suffix.length <= MAX_POD_NAME_LENGTH) return `${base}${suffix}`;
  return `${shortenedBase(base, MAX_POD_NAME_LENGTH - suffix.length)}${suffix}`;
}

/** The base cut to fit `room`, ending in `-<hash of the whole base>`; a valid DNS-1123 subdomain prefix. */
function shortenedBase(base: string, room: number): string {
  const hash = createHash("sha256").update(base).digest("hex").slice(0, HASH_LENGTH);
  // A DNS-1123 subdomain's parts must end with an alphanumeric: no '-' or '.' right before our '-'.
  const kept = base.slice(0, Math.max(0, room - hash.length - 1)).replace(/[-.]+$/, "");
  return kept === "" ? hash : `${kept}-${hash}`;
}

const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Valid as a pod name (the API server's IsDNS1123Subdomain). */
export function isValidPodName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_POD_NAME_LENGTH && DNS_1123_SUBDOMAIN.test(name);
}
