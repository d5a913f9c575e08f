// The Accept header of a read, negotiated as kube-apiserver does, in two steps. For built-in kinds, first the
// route (go-restful's matchesAccept): some clause's bare media type must be one the route produces, or */*;
// otherwise go-restful's 406, worded as it words it. Then the handler (k8s.io/apiserver endpoints/handlers/
// negotiation): clauses in order of q (stable otherwise), the first one this server can answer wins. A clause
// with `as=PartialObjectMetadata` or `as=PartialObjectMetadataList` (g=meta.k8s.io, v=v1 or v1beta1) asks
// for the metadata-only transform; any other `as=` (Table included: this double renders no tables) is a
// clause it cannot answer and is skipped. No answerable clause: 406 NotAcceptable. The double writes JSON
// only, so application/yaml and protobuf clauses are skipped too, where the real server would use them.
// Pure.

import { type ApiError, failure } from "./status.js";
import type { ResourceInfo } from "./types.js";

export type Transform = { kind: "PartialObjectMetadata" | "PartialObjectMetadataList"; version: string };

/** What a clause asks for: undefined (the object as stored), a transform, or null (cannot be answered). */
type ClauseAnswer = Transform | undefined | null;

interface Clause {
  type: string;
  subType: string;
  q: number;
  params: Map<string, string>;
}

function parseClause(text: string): Clause | undefined {
  const [mediaRange = "", ...paramTexts] = text.split(";").map((part) => part.trim());
  const [type = "", subType] = mediaRange.split("/").map((part) => part.trim());
  if (!type) return undefined;
  // "*" alone means "*/*"; any other type without a subtype is dropped, as goautoneg does.
  if (subType === undefined && type !== "*") return undefined;
  const clause: Clause = { type, subType: subType ?? "*", q: 1, params: new Map() };
  for (const param of paramTexts) {
    const at = param.indexOf("=");
    if (at < 0) continue;
    const name = param.slice(0, at).trim();
    const value = param.slice(at + 1).trim();
    if (name === "q") clause.q = Number.parseFloat(value) || 0;
    else clause.params.set(name, value);
  }
  return clause;
}

/** Highest q first; among equal q, a concrete type before a wildcard; otherwise the header's order. */
function ordered(header: string): Clause[] {
  const clauses = header
    .split(",")
    .map(parseClause)
    .filter((c): c is Clause => c !== undefined);
  const rank = (c: Clause) => [c.q, c.type === "*" ? 0 : 1, c.subType === "*" ? 0 : 1];
  return clauses
    .map((clause, index) => ({ clause, index }))
    .sort((a, b) => {
      const [ra, rb] = [rank(a.clause), rank(b.clause)];
      for (let i = 0; i < ra.length; i++) {
        const d = (rb[i] as number) - (ra[i] as number);
        if (d !== 0) return d;
      }
      return a.index - b.index;
    })
    .map((entry) => entry.clause);
}

const META_VERSIONS = new Set(["v1", "v1beta1"]);

function answerOf(clause: Clause): ClauseAnswer {
  const jsonish =
    (clause.type === "application" && (clause.subType === "json" || clause.subType === "*")) ||
    (clause.type === "*" && clause.subType === "*");
  if (!jsonish) return null;
  const as = clause.params.get("as");
  const group = clause.params.get("g");
  const version = clause.params.get("v");
  if (as === undefined && group === undefined && version === undefined) return undefined;
  if (group !== "meta.k8s.io" || version === undefined || !META_VERSIONS.has(version)) return null;
  if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") return { kind: as, version };
  return null;
}

/** What a built-in kind's GET route produces (custom resources are served outside go-restful). */
const ROUTE_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];

/** go-restful's Route.matchesAccept: exact bare media types, and the any-type wildcard (no application/ wildcard). */
function routeMatches(header: string): boolean {
  return header.split(",").some((clause) => {
    const mediaType = (clause.split(";")[0] ?? "").trim();
    return mediaType === "*/*" || ROUTE_PRODUCES.includes(mediaType);
  });
}

/** go-restful's 406, as the API server's service-error handler wraps it (NewGenericServerResponse). */
function routeNotAcceptable(): ApiError {
  const message = `406: Not Acceptable\n\nAvailable representations: ${ROUTE_PRODUCES.join(", ")}`;
  return failure(406, "NotAcceptable", message, {});
}

function notAcceptable(): ApiError {
  // The serializers the real server lists, custom resources' included (measured on kube-apiserver v1.36).
  return failure(
    406,
    "NotAcceptable",
    `only the following media types are accepted: ${ROUTE_PRODUCES.join(", ")}`,
  );
}

/** The transform the header asks for (undefined: none); throws 406 when no clause can be answered. */
export function negotiate(header: string | undefined, res: ResourceInfo): Transform | undefined {
  if (!header) return undefined;
  if (!res.custom && !routeMatches(header)) throw routeNotAcceptable();
  for (const clause of ordered(header)) {
    const answer = answerOf(clause);
    if (answer !== null) return answer;
  }
  throw notAcceptable();
}

/**
 * The transform asked for the wrong shape (a list's for one object, or the reverse): 406 with the server's
 * words (it appends the Go type of the object, which a double has none of).
 */
export function shapeMismatch(isList: boolean): ApiError {
  const message = isList
    ? "you requested PartialObjectMetadata, but the requested object is a list"
    : "you requested PartialObjectMetadataList, but the requested object is not a list";
  return failure(406, "NotAcceptable", message);
}
