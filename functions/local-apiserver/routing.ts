// Routing: a URL path to the resource it names, then to the read, write or delete for its method.

import type { Backend } from "./backend.js";
import { deleteCollection, remove } from "./deletion.js";
import { discovery } from "./discovery.js";
import { get, list } from "./reads.js";
import type { ResourceRegistry } from "./resources.js";
import { methodNotAllowed, pathNotFound } from "./status.js";
import type { Ctx, Reply, Target } from "./types.js";
import { create, patch, update } from "./writes.js";

/** /api/<v>/... or /apis/<group>/<v>/...: the group, the version and the segments after them. */
function groupVersion(segments: string[]): { group: string; version: string; rest: string[] } {
  if (segments[0] === "api" && segments[1]) {
    return { group: "", version: segments[1], rest: segments.slice(2) };
  }
  if (segments[0] === "apis" && segments[1] && segments[2]) {
    return { group: segments[1], version: segments[2], rest: segments.slice(3) };
  }
  throw pathNotFound();
}

/** The resource, namespace, name and subresource a path names; 404 for anything else. */
export function target(kinds: ResourceRegistry, segments: string[]): Target {
  const gv = groupVersion(segments);
  let { rest } = gv;
  const find = (plural: string | undefined) => kinds.find(gv.group, gv.version, plural);
  let namespace: string | undefined;
  const namespacedRes = rest[0] === "namespaces" && rest.length >= 3 ? find(rest[2]) : undefined;
  if (namespacedRes?.namespaced) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, extra] = rest;
  const res = find(plural);
  if (!res || extra !== undefined) throw pathNotFound();
  if (res.namespaced && namespace === undefined && name !== undefined) throw pathNotFound();
  if (subresource !== undefined && !(subresource === "status" && res.statusSubresource)) throw pathNotFound();
  const t: Target = { res };
  if (namespace !== undefined) t.namespace = namespace;
  if (name !== undefined) t.name = name;
  if (subresource !== undefined) t.subresource = subresource;
  return t;
}

export async function route(b: Backend, segments: string[], ctx: Ctx): Promise<Reply> {
  if (ctx.method === "GET") {
    const found = discovery(b.kinds, segments);
    if (found) return found;
  }
  const t = target(b.kinds, segments);
  const { name } = t;
  switch (ctx.method) {
    case "GET":
      return name === undefined ? list(b, t, ctx) : get(b, t, ctx);
    case "POST":
      if (name !== undefined) throw methodNotAllowed();
      return create(b, t, ctx);
    case "PUT":
      if (name === undefined) throw methodNotAllowed();
      return update(b, t, name, ctx);
    case "PATCH":
      if (name === undefined) throw methodNotAllowed();
      return patch(b, t, name, ctx);
    case "DELETE":
      return name === undefined ? deleteCollection(b, t, ctx) : remove(b, t, name, ctx, name);
    default:
      throw methodNotAllowed();
  }
}
