// `simkube-fn trace lookup`: the lifecycle a pod of an owner would get, and why. Pure. The choice itself is
// mutate-create's (shared/trace/lifecycle.ts): owner in the index, then chooseLifecycleList and entry seq % length.

import {
  chooseLifecycleList,
  getPodLifecycles,
  hasObject,
  lifecycleOwners,
  lookupPodLifecycle,
  normalizeGvk,
  type PodLifecycle,
  parseGvk,
  simulatedDurationSeconds,
  type TraceTables,
  usesStableHash,
} from "../../../shared/trace/index.js";

export class LookupError extends Error {
  override readonly name = "LookupError";
}

export interface LookupQuery {
  /** KIND/NS/NAME; KIND is a kind ("Deployment") or a GVK ("apps/v1.Deployment"). */
  owner: string;
  hash?: string;
  seq: number;
}

export interface LookupAnswer {
  gvk: string;
  nsName: string;
  lifecycle: PodLifecycle;
  /** What was looked at, in order, one line each. */
  reasons: string[];
}

export function explainLookup(trace: TraceTables, query: LookupQuery): LookupAnswer {
  const { kind, nsName } = splitOwner(query.owner);
  const gvk = resolveGvk(trace, kind);
  const answer = (lifecycle: PodLifecycle, reasons: string[]): LookupAnswer => ({
    gvk,
    nsName,
    lifecycle,
    reasons,
  });
  if (!hasObject(trace, gvk, nsName)) {
    return answer({ kind: "Empty" }, [
      `${gvk} ${nsName} is not in the trace's index: mutate-create skips this owner`,
    ]);
  }
  const reasons = [`${gvk} ${nsName} is in the trace's index`];
  reasons.push(
    usesStableHash(gvk)
      ? `${gvk} is not a built-in owner kind: only lifecycles filed under the pod's own spec hash apply`
      : `${gvk} is a built-in owner kind: its lifecycles apply whatever the pod's spec hash`,
  );
  const byHash = getPodLifecycles(trace, gvk, nsName);
  if (!byHash) return answer({ kind: "Empty" }, [...reasons, "the trace has no lifecycles for this owner"]);
  reasons.push(`hashes: ${[...byHash].map(([h, l]) => `${h} (${l.length} lifecycle(s))`).join(", ")}`);
  const choice = chooseLifecycleList(trace, gvk, nsName, query.hash ?? "");
  if (!choice) {
    const why = query.hash === undefined ? "no --hash given" : `no lifecycles under hash ${query.hash}`;
    return answer({ kind: "Empty" }, [...reasons, `${why}: the pod gets no lifecycle`]);
  }
  reasons.push(
    choice.hash === query.hash
      ? `hash ${choice.hash} is the pod's own`
      : `hash ${choice.hash}: the first in file order (${query.hash === undefined ? "no --hash given" : `none under ${query.hash}`})`,
  );
  const lifecycle = lookupPodLifecycle(trace, gvk, nsName, choice.hash, query.seq);
  const n = choice.lifecycles.length;
  reasons.push(`pod sequence number ${query.seq}: entry ${query.seq} mod ${n} = ${query.seq % n}`);
  return answer(lifecycle, reasons);
}

/** What the lifecycle means for the simulated pod (speed 1). */
export function describeLifecycle(lifecycle: PodLifecycle): string {
  switch (lifecycle.kind) {
    case "Finished":
      return (
        `Finished(${lifecycle.start}, ${lifecycle.end}): the pod gets a completion time ` +
        `${simulatedDurationSeconds(lifecycle.start, lifecycle.end, 1)} s after it runs (at speed 1)`
      );
    case "Running":
      return `Running(${lifecycle.start}): still running when the trace ended, so no completion time`;
    case "Empty":
      return "Empty: no recorded lifecycle, so no completion time (the pod runs until deleted)";
  }
}

/** "KIND/NS/NAME" where KIND may itself hold a "/" (apps/v1.Deployment): NS and NAME are the last two parts. */
function splitOwner(owner: string): { kind: string; nsName: string } {
  const parts = owner.split("/");
  const name = parts.pop();
  const namespace = parts.pop();
  const kind = parts.join("/");
  if (!kind || !namespace || !name) {
    throw new LookupError(`--owner must be KIND/NAMESPACE/NAME (e.g. Deployment/shop/web), got "${owner}"`);
  }
  return { kind, nsName: `${namespace}/${name}` };
}

/** A GVK as given, or the one GVK of the trace (index or owners) whose kind is KIND. */
function resolveGvk(trace: TraceTables, kind: string): string {
  if (kind.includes(".")) {
    try {
      parseGvk(kind);
    } catch (err) {
      throw new LookupError((err as Error).message);
    }
    return normalizeGvk(kind);
  }
  const known = new Set([...trace.index.keys(), ...lifecycleOwners(trace).map((o) => o.gvk)]);
  const matches = [...known].filter((gvk) => parseGvk(gvk).kind.toLowerCase() === kind.toLowerCase());
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length > 1)
    throw new LookupError(`kind ${kind} is ambiguous here: use one of ${matches.join(", ")}`);
  throw new LookupError(
    `the trace has no objects of kind ${kind} (kinds: ${[...known].join(", ") || "none"}); a GVK such as apps/v1.Deployment is also accepted`,
  );
}
