// Which trace locations a deployment lets a Simulation name: its allowlist (TRACE_ALLOWED_LOCATIONS, or
// `serve --allow-trace-location`), plus TRACE_PATH. A Simulation's spec.driver.tracePath outside it is refused
// before anything is read, and every redirect of a download must stay inside it: whoever may write a Simulation
// must not make a long-lived, shared function fetch what it can reach (metadata addresses, in-cluster services,
// files in its image, objects its cloud identity can read). Pure.
//
// Both sides are compared in one canonical form: scheme (object-store aliases folded: s3a -> s3, az/abfs ->
// azure), authority (host and port, or bucket), path. An entry ending in "/" allows everything under it; any
// other entry allows exactly that location. A query string is never compared (a presigned URL's signature).

import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { bucketOf, objectKeyProblem, objectStoreOf } from "./object-location.js";

interface Canonical {
  scheme: string;
  authority: string;
  path: string;
}

export interface AllowedLocation extends Canonical {
  /** As given, for messages. */
  text: string;
}

/** A percent-encoded dot, slash or backslash: a server may decode it into a path step the check never saw. */
const ENCODED_PATH_STEP = /%(2e|2f|5c)/i;

type Parsed = { ok: true; location: Canonical } | { ok: false; why: string };

function fail(why: string): Parsed {
  return { ok: false, why };
}

/** A file path: absolute, and without "." or ".." steps, whose meaning a symlink could change. */
function filePath(path: string, prefix: boolean): Parsed {
  if (!posix.isAbsolute(path)) return fail("a file path must be absolute");
  const steps = path.split("/");
  if (steps.includes("..") || steps.includes(".")) return fail('a file path must not hold "." or ".." steps');
  const normal = posix.normalize(path);
  const allowedPath = prefix && !normal.endsWith("/") ? `${normal}/` : normal;
  return { ok: true, location: { scheme: "file", authority: "", path: allowedPath } };
}

function httpLocation(url: URL): Parsed {
  if (ENCODED_PATH_STEP.test(url.pathname)) return fail("the path holds an encoded dot, slash or backslash");
  return {
    ok: true,
    location: { scheme: url.protocol.slice(0, -1), authority: url.host, path: url.pathname },
  };
}

function objectLocation(text: string, url: URL, scheme: string): Parsed {
  const store = objectStoreOf(scheme);
  if (!store) return fail(`unsupported scheme "${scheme}"`);
  const { bucket, account } = bucketOf(url, store);
  if (!bucket) return fail("no bucket or container");
  // Refused, not normalised: which object "a%2F..%2Fb" names depends on who reads it (issue 35).
  const problem = objectKeyProblem(text);
  if (problem) return fail(problem);
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.replace(/^\//, ""));
  } catch {
    return fail("the object name is not valid percent-encoding");
  }
  const authority = account ? `${bucket}@${account}` : bucket;
  return { ok: true, location: { scheme: store, authority, path: `/${key}` } };
}

/** The canonical form of a trace location (as shared/trace/source.ts reads them), or why it has none. */
function canonical(location: string): Parsed {
  const text = location.trim();
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text)) return filePath(text, text.endsWith("/"));
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail("not a URL");
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === "file") {
    try {
      return filePath(fileURLToPath(url), url.pathname.endsWith("/"));
    } catch (err) {
      return fail((err as Error).message);
    }
  }
  if (scheme === "http" || scheme === "https") return httpLocation(url);
  return objectLocation(text, url, scheme);
}

/** An allowlist entry, checked; a string says what is wrong with it. */
export function parseAllowedLocation(entry: string): AllowedLocation | string {
  const text = entry.trim();
  if (/[?#]/.test(text) && !text.startsWith("/"))
    return `"${text}": an allowed location has no query or fragment`;
  const parsed = canonical(text);
  return parsed.ok ? { ...parsed.location, text } : `"${text}": ${parsed.why}`;
}

/** Whether a location is inside the allowlist: an exact entry, or under an entry that ends in "/". */
export function isAllowedLocation(allowed: readonly AllowedLocation[], location: string): boolean {
  const parsed = canonical(location);
  if (!parsed.ok) return false;
  const c = parsed.location;
  return allowed.some(
    (a) =>
      a.scheme === c.scheme &&
      a.authority === c.authority &&
      (a.path.endsWith("/") ? c.path.startsWith(a.path) : c.path === a.path),
  );
}

/**
 * The deployment's check: the allowlist plus `tracePath` (TRACE_PATH, exactly), when that parses. Without
 * either, nothing is allowed.
 */
export function deploymentTraceCheck(
  allowed: readonly AllowedLocation[] = [],
  tracePath?: string,
): (location: string) => boolean {
  const own = tracePath === undefined ? undefined : parseAllowedLocation(tracePath.replace(/[?#].*$/, ""));
  const all = typeof own === "object" && !own.path.endsWith("/") ? [...allowed, own] : [...allowed];
  return (location) => isAllowedLocation(all, location);
}
