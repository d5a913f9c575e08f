// `simkube-fn hash-pod`: the stable spec hash of one Pod given as JSON or YAML text, e.g. the
// output of `kubectl get pod NAME -o yaml`, to compare with a trace or an annotation.
//
// Input rules (each failure is an Error whose message says what was wrong):
// - one Pod object: `kind: Pod` (or no kind at all, with a `spec`); not a List, not several YAML
//   documents, not a bare PodSpec (it is recognized and the message says to wrap it in a Pod);
// - text starting with `{` is JSON, anything else YAML, read as kubectl reads manifests (YAML 1.1:
//   `0644` is octal, `<<` merges), except that timestamps stay strings, as they do for kubectl.
// - integers are exact even beyond 2^53: YAML integers are read as bigints, and JSON holding an
//   integer JSON.parse cannot represent exactly is re-read the same way.

import { type DocumentOptions, type ParseOptions, parseAllDocuments, type SchemaOptions } from "yaml";
import { podSpecHash } from "../../shared/hash/index.js";

const YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.1",
  intAsBigInt: true,
  customTags: (tags) =>
    tags.filter((tag) => typeof tag === "string" || tag.tag !== "tag:yaml.org,2002:timestamp"),
};

// For re-reading JSON with exact integers: plain YAML 1.2, of which JSON is (for our purposes) a subset.
const JSON_AS_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.2",
  intAsBigInt: true,
};

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "bigint" ? "a number" : `a ${typeof value}`; // YAML integers are bigints
}

function hasUnsafeInteger(value: unknown): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (typeof value !== "object" || value === null) return false;
  for (const member of Object.values(value)) if (hasUnsafeInteger(member)) return true;
  return false;
}

function parseYaml(text: string, what: string, options = YAML_OPTIONS): unknown {
  const docs = parseAllDocuments(text, options);
  if (!Array.isArray(docs)) return undefined; // an empty stream: no document at all
  const errors = docs.flatMap((doc) => doc.errors);
  if (errors.length > 0) throw new Error(`input is not valid ${what}: ${errors[0]?.message.split("\n")[0]}`);
  let values: unknown[];
  try {
    values = docs.map((doc) => doc.toJS()).filter((v) => v !== null && v !== undefined);
  } catch (err) {
    throw new Error(`input is not valid ${what}: ${(err as Error).message}`); // e.g. too many aliases
  }
  if (values.length > 1) throw new Error(`expected one Pod, got ${values.length} YAML documents`);
  return values[0];
}

function parsePodText(text: string): unknown {
  const body = text.replace(/^\uFEFF/, "");
  if (body.trim() === "") throw new Error("empty input: expected a Pod as JSON or YAML");
  if (body.trimStart().startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      throw new Error(`input is not valid JSON: ${(err as Error).message}`);
    }
    return hasUnsafeInteger(parsed) ? parseYaml(body, "JSON", JSON_AS_YAML_OPTIONS) : parsed;
  }
  return parseYaml(body, "YAML");
}

/** Checks that `value` is one Pod and returns it; throws an Error naming what it is instead. */
function asPod(value: unknown): { spec?: unknown } {
  if (value === undefined) throw new Error("empty input: expected a Pod as JSON or YAML");
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`expected a Pod object, got ${describe(value)}`);
  }
  const obj = value as Record<string, unknown>;
  const kind = obj.kind;
  if (typeof kind === "string" && kind.endsWith("List")) {
    throw new Error(`expected a single Pod, got a ${kind}: hash its items one by one`);
  }
  if (kind !== undefined && kind !== "Pod") throw new Error(`expected kind Pod, got ${JSON.stringify(kind)}`);
  if (obj.apiVersion !== undefined && obj.apiVersion !== "v1") {
    throw new Error(`expected apiVersion v1 for a Pod, got ${JSON.stringify(obj.apiVersion)}`);
  }
  if (kind === undefined && obj.spec === undefined && "containers" in obj) {
    throw new Error(
      "this looks like a bare PodSpec: wrap it as a Pod, {kind: Pod, apiVersion: v1, spec: ...}",
    );
  }
  return obj;
}

/** The stable spec hash (decimal u64) of the Pod in `text` (JSON or YAML). Throws on bad input. */
export function hashPodText(text: string): string {
  return podSpecHash(asPod(parsePodText(text)));
}
