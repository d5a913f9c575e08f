// Reading what a write request carries: its JSON body, the object in it, and dryRun.

import { isRecord } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import { metaOf } from "./objects.js";
import { apiVersionOf } from "./resources.js";
import { badRequest } from "./status.js";
import type { Ctx, Target } from "./types.js";

export function parseBody(ctx: Ctx): unknown {
  try {
    return JSON.parse(ctx.body);
  } catch (err) {
    throw badRequest(`the body of the request was in an unknown format: ${(err as Error).message}`);
  }
}

/** The body as an object of the URL's kind: a different apiVersion or kind is a 400, missing ones are set. */
export function parseObject(t: Target, ctx: Ctx): KubeObject {
  const value = parseBody(ctx);
  if (!isRecord(value)) throw badRequest("the body of the request must be a JSON object");
  const obj = value as KubeObject;
  const apiVersion = apiVersionOf(t.res);
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersion})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== t.res.kind) {
    throw badRequest(
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${t.res.kind})`,
    );
  }
  obj.apiVersion = apiVersion;
  obj.kind = t.res.kind;
  metaOf(obj);
  return obj;
}

/** Whether the request is a dry run (?dryRun=All or DeleteOptions.dryRun); any other value is a 400. */
export function checkDryRun(ctx: Ctx, bodyDryRun?: unknown): boolean {
  const values = [
    ...ctx.query.getAll("dryRun"),
    ...(Array.isArray(bodyDryRun) ? bodyDryRun.map(String) : []),
  ];
  for (const v of values)
    if (v !== "All") throw badRequest(`Invalid dry run value: ${v}; only "All" is supported`);
  return values.length > 0;
}

/** A namespace in the body must be empty or the URL's. */
export function checkBodyNamespace(meta: Record<string, unknown>, namespace: string | undefined): void {
  if (meta.namespace !== undefined && meta.namespace !== "" && meta.namespace !== namespace) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
}
