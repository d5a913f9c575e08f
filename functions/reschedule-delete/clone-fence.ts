// A clone made to fit the pod-create policy (knative/pod-create-policy.ts), without changing where it can run
// or what it does on a virtual node:
// - every required nodeAffinity term also requires `type In [virtual]`. The scheduler ANDs the terms with the
//   nodeSelector, which already requires that label, so the clone's possible nodes are the same; the policy
//   can then check each term on its own;
// - a clone that runs as a named ServiceAccount (not `default`) does so without that account's token:
//   automount off and the projected token volume (and its mounts) dropped. A virtual node runs nothing, so
//   nothing used the token; a clone the API server was tricked into admitting cannot use it either.
// Pure: every function returns a copy.

import { isRecord, VIRTUAL_NODE_SELECTOR_KEY, VIRTUAL_NODE_SELECTOR_VALUE } from "../../shared/base/index.js";

type Spec = Record<string, unknown>;

const VIRTUAL_EXPRESSION = {
  key: VIRTUAL_NODE_SELECTOR_KEY,
  operator: "In",
  values: [VIRTUAL_NODE_SELECTOR_VALUE],
};

function isVirtualExpression(e: unknown): boolean {
  if (!isRecord(e) || e.key !== VIRTUAL_NODE_SELECTOR_KEY || e.operator !== "In") return false;
  return Array.isArray(e.values) && e.values.length === 1 && e.values[0] === VIRTUAL_NODE_SELECTOR_VALUE;
}

function pinTerm(term: unknown): unknown {
  if (!isRecord(term)) return term;
  const expressions = Array.isArray(term.matchExpressions) ? term.matchExpressions : [];
  if (expressions.some(isVirtualExpression)) return term;
  return {
    ...term,
    matchExpressions: [...expressions, { ...VIRTUAL_EXPRESSION, values: [VIRTUAL_NODE_SELECTOR_VALUE] }],
  };
}

/** Each required nodeSelectorTerm with `type In [virtual]` added (unless it has it). */
export function pinNodeAffinityTerms(spec: Spec): Spec {
  const affinity = spec.affinity;
  if (!isRecord(affinity) || !isRecord(affinity.nodeAffinity)) return spec;
  const required = affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if (!isRecord(required) || !Array.isArray(required.nodeSelectorTerms)) return spec;
  const nodeAffinity = {
    ...affinity.nodeAffinity,
    requiredDuringSchedulingIgnoredDuringExecution: {
      ...required,
      nodeSelectorTerms: required.nodeSelectorTerms.map(pinTerm),
    },
  };
  return { ...spec, affinity: { ...affinity, nodeAffinity } };
}

function isTokenVolume(volume: unknown): boolean {
  if (!isRecord(volume) || !isRecord(volume.projected)) return false;
  const sources = volume.projected.sources;
  return Array.isArray(sources) && sources.some((s) => isRecord(s) && s.serviceAccountToken !== undefined);
}

function withoutMounts(containers: unknown, names: ReadonlySet<string>): unknown {
  if (!Array.isArray(containers)) return containers;
  return containers.map((c) => {
    if (!isRecord(c) || !Array.isArray(c.volumeMounts)) return c;
    const volumeMounts = c.volumeMounts.filter((m) => !(isRecord(m) && names.has(String(m.name))));
    return { ...c, volumeMounts };
  });
}

/** The account a pod runs as; the API server fills serviceAccountName from the deprecated serviceAccount. */
function accountOf(spec: Spec): string {
  const name = spec.serviceAccountName ?? spec.serviceAccount;
  return typeof name === "string" && name !== "" ? name : "default";
}

/** A named account's clone without its token: automount off, token volumes and their mounts dropped. */
export function withoutNamedAccountToken(spec: Spec): Spec {
  if (accountOf(spec) === "default") return spec;
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  const dropped = new Set(volumes.filter(isTokenVolume).map((v) => String((v as { name?: unknown }).name)));
  const copy: Spec = { ...spec, automountServiceAccountToken: false };
  if (Array.isArray(spec.volumes)) copy.volumes = volumes.filter((v) => !isTokenVolume(v));
  for (const field of ["containers", "initContainers"] as const)
    if (spec[field] !== undefined) copy[field] = withoutMounts(spec[field], dropped);
  return copy;
}
