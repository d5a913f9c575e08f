// GET of one object and of a list (with field and label selectors), whole or metadata-only as the Accept
// header asks (negotiation.ts).

import type { KubeObject } from "../../shared/kube/index.js";
import type { Backend } from "./backend.js";
import { negotiate, shapeMismatch, type Transform } from "./negotiation.js";
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

/** What meta.AsPartialObjectMetadata keeps: the whole metadata, under the transform's own type. */
function partial(object: KubeObject, version: string): KubeObject {
  return {
    kind: "PartialObjectMetadata",
    apiVersion: `meta.k8s.io/${version}`,
    metadata: object.metadata ?? {},
  };
}

export function get(b: Backend, t: Target, ctx: Ctx): Reply {
  const transform = negotiate(ctx.accept, t.res);
  if (transform?.kind === "PartialObjectMetadataList") throw shapeMismatch(false);
  const obj = b.store.get(t.res, t.namespace, t.name ?? "");
  if (!obj) throw notFound(t.res, t.name ?? "");
  return { status: 200, body: transform ? partial(obj, transform.version) : obj };
}

function partialList(b: Backend, transform: Transform, items: KubeObject[]): Reply {
  return {
    status: 200,
    body: {
      kind: "PartialObjectMetadataList",
      apiVersion: `meta.k8s.io/${transform.version}`,
      metadata: { resourceVersion: b.store.currentRevision() },
      items: items.map((o) => partial(o, transform.version)),
    },
  };
}

export function list(b: Backend, t: Target, ctx: Ctx): Reply {
  const transform = negotiate(ctx.accept, t.res);
  if (transform?.kind === "PartialObjectMetadata") throw shapeMismatch(true);
  const selected = selectorOf(ctx.query);
  if (transform) return partialList(b, transform, b.store.list(t.res, t.namespace).filter(selected));
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
