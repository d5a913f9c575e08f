// GET of one object and of a list (with field and label selectors).

import type { Backend } from "./backend.js";
import { apiVersionOf } from "./resources.js";
import { selectorOf } from "./selectors.js";
import { notFound } from "./status.js";
import type { Ctx, Reply, ResourceInfo, Target } from "./types.js";

/** A List answer as the API server writes it: kind <Kind>List, the current resourceVersion. */
export function listReply(b: Backend, res: ResourceInfo, items: unknown[]): Reply {
  return {
    status: 200,
    body: {
      kind: `${res.kind}List`,
      apiVersion: apiVersionOf(res),
      metadata: { resourceVersion: b.store.currentRevision() },
      items,
    },
  };
}

export function get(b: Backend, t: Target): Reply {
  const obj = b.store.get(t.res, t.namespace, t.name ?? "");
  if (!obj) throw notFound(t.res, t.name ?? "");
  return { status: 200, body: obj };
}

export function list(b: Backend, t: Target, ctx: Ctx): Reply {
  const selected = selectorOf(ctx.query);
  const items = b.store
    .list(t.res, t.namespace)
    .filter(selected)
    .map((o) => {
      if (t.res.custom) return o;
      // Built-in lists carry kind/apiVersion on the list only, as the real JSON does.
      const { kind: _k, apiVersion: _a, ...rest } = o;
      return rest;
    });
  return listReply(b, t.res, items);
}
