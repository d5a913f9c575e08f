// Group/version/kind strings as SimKube writes them in traces ("apps/v1.Deployment", "v1.Pod"). Pure.

/** A GVK string or owner apiVersion that does not have the expected shape. */
export class GvkError extends Error {
  override readonly name = "GvkError";
}

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** "group/version.Kind", or "version.Kind" for the core group, as SimKube writes them. */
export function formatGvk(gvk: Gvk): string {
  return gvk.group ? `${gvk.group}/${gvk.version}.${gvk.kind}` : `${gvk.version}.${gvk.kind}`;
}

/** Parses "group/version.Kind", "version.Kind" or the older core spelling "/version.Kind". */
export function parseGvk(s: string): Gvk {
  const slashParts = s.split("/");
  if (slashParts.length > 2)
    throw new GvkError(`invalid GVK "${s}": expected group/version.Kind or version.Kind`);
  const [group, rest] = slashParts.length === 2 ? [slashParts[0] ?? "", slashParts[1] ?? ""] : ["", s];
  const dotParts = rest.split(".");
  const [version, kind] = dotParts;
  if (dotParts.length !== 2 || !version || !kind) {
    throw new GvkError(`invalid GVK "${s}": expected group/version.Kind or version.Kind`);
  }
  return { group, version, kind };
}

/** The canonical spelling of a GVK string ("/v1.Pod" -> "v1.Pod"). */
export function canonicalGvk(s: string): string {
  return formatGvk(parseGvk(s));
}

/**
 * The GVK string of an owner reference: ("apps/v1", "Deployment") -> "apps/v1.Deployment",
 * ("v1", "Pod") -> "v1.Pod". Like SimKube, only an apiVersion with more than one "/" is an error.
 */
export function gvkOfOwner(apiVersion: string, kind: string): string {
  const parts = apiVersion.split("/");
  if (parts.length > 2) throw new GvkError(`invalid format for apiVersion: "${apiVersion}"`);
  const [group, version] = parts.length === 2 ? [parts[0] ?? "", parts[1] ?? ""] : ["", apiVersion];
  return formatGvk({ group, version, kind });
}

/**
 * For lookups, cheap and total: rewrites the old core spelling "/v1.Pod" to "v1.Pod"; any other string is
 * returned unchanged (canonical already, or unparsable and so found nowhere).
 */
export function normalizeGvk(gvk: string): string {
  if (!gvk.startsWith("/")) return gvk;
  try {
    return canonicalGvk(gvk);
  } catch {
    return gvk;
  }
}
