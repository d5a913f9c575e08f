// Field and label selectors of list and DeleteCollection requests.

import type { KubeObject } from "../../shared/kube/index.js";
import { fieldAt } from "./objects.js";
import { badRequest } from "./status.js";

export type Matcher = (obj: KubeObject) => boolean;
type LabelTerm = (labels: Record<string, string>) => boolean;

/** Equality-based field selectors (metadata.name, metadata.namespace, spec.nodeName, status.phase, ...). */
export function parseFieldSelector(selector: string | undefined): Matcher {
  if (!selector) return () => true;
  const terms = selector.split(",").map((term) => {
    const m = /^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$/.exec(term);
    if (!m) throw badRequest(`invalid field selector: ${selector}`);
    const [, path = "", op, value = ""] = m;
    return (obj: KubeObject) => {
      const actual = String(fieldAt(obj, path) ?? "");
      return op === "!=" ? actual !== value : actual === value;
    };
  });
  return (obj) => terms.every((t) => t(obj));
}

/** One requirement: k in (a,b), k notin (a,b), k=v, k==v, k!=v, k, !k. */
function labelTerm(term: string): LabelTerm {
  let m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
  if (m) {
    const [, key = "", op, list = ""] = m;
    const values = new Set(list.split(",").map((v) => v.trim()));
    return (l) => (op === "in" ? key in l && values.has(l[key] ?? "") : !values.has(l[key] ?? "\0"));
  }
  m = /^([^\s!=]+)\s*(==|!=|=)\s*(\S*)$/.exec(term);
  if (m) {
    const [, key = "", op, value = ""] = m;
    return (l) => (op === "!=" ? l[key] !== value : l[key] === value);
  }
  m = /^(!?)([^\s!=]+)$/.exec(term);
  if (m) {
    const [, not, key = ""] = m;
    return (l) => (not ? !(key in l) : key in l);
  }
  throw badRequest(`unable to parse requirement: ${term}`);
}

/** Label selectors: k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b). */
export function parseLabelSelector(selector: string | undefined): Matcher {
  if (!selector) return () => true;
  const parts = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  const terms = parts
    .map((raw) => raw.trim())
    .filter(Boolean)
    .map(labelTerm);
  return (obj) => {
    const labels = (obj.metadata?.labels ?? {}) as Record<string, string>;
    return terms.every((t) => t(labels));
  };
}

/** The request's fieldSelector and labelSelector together. */
export function selectorOf(query: URLSearchParams): Matcher {
  const byField = parseFieldSelector(query.get("fieldSelector") ?? undefined);
  const byLabel = parseLabelSelector(query.get("labelSelector") ?? undefined);
  return (obj) => byField(obj) && byLabel(obj);
}
