// Deletion semantics: DeleteOptions and preconditions, a namespace turning Terminating, the two-phase
// graceful pod delete, finalizers, and DeleteCollection. DELETE admission runs inside the storage retry loops,
// so one request can call the webhooks more than once (k8s.io/apiserver pkg/registry/rest/delete.go
// BeforeDelete, pkg/registry/generic/registry/store.go Delete; kubernetes/kubernetes PR 76346).

import { isRecord, type JsonObject } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import type { Backend } from "./backend.js";
import { clone, metaOf, timestamp } from "./objects.js";
import { podGracePeriod } from "./pods.js";
import { listReply } from "./reads.js";
import { checkDryRun, parseBody } from "./request-body.js";
import { selectorOf } from "./selectors.js";
import { badRequest, detailsOf, methodNotAllowed, notFound, preconditionFailed } from "./status.js";
import { checkUnchanged, retryStale } from "./storage-retry.js";
import type { Ctx, Reply, ResourceInfo, Target } from "./types.js";

/** DeleteOptions from the body, with ?gracePeriodSeconds and ?propagationPolicy on top. */
export function deleteOptions(ctx: Ctx): JsonObject {
  let opts: JsonObject = {};
  if (ctx.body.trim()) {
    const body = parseBody(ctx);
    if (!isRecord(body)) throw badRequest("DeleteOptions must be a JSON object");
    opts = body;
  }
  const grace = ctx.query.get("gracePeriodSeconds");
  if (grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw badRequest(`invalid gracePeriodSeconds: ${grace}`);
    opts.gracePeriodSeconds = n;
  }
  const policy = ctx.query.get("propagationPolicy");
  if (policy) opts.propagationPolicy = policy;
  return { kind: "DeleteOptions", apiVersion: "meta.k8s.io/v1", ...opts };
}

function checkDeletePreconditions(res: ResourceInfo, name: string, oldMeta: JsonObject, options: JsonObject) {
  const pre = isRecord(options.preconditions) ? options.preconditions : {};
  if (pre.uid !== undefined && pre.uid !== null && pre.uid !== oldMeta.uid) {
    throw preconditionFailed(res, name, "UID", pre.uid, oldMeta.uid);
  }
  const rv = pre.resourceVersion;
  if (rv !== undefined && rv !== null && rv !== oldMeta.resourceVersion) {
    throw preconditionFailed(res, name, "ResourceVersion", rv, oldMeta.resourceVersion);
  }
}

/** One attempt at deleting one stored object. */
interface Deletion {
  b: Backend;
  t: Target;
  name: string;
  old: KubeObject;
  oldMeta: JsonObject;
  finalizers: unknown[];
  dryRun: boolean;
  /** DELETE admission with this oldObject; throws StaleWrite when the object changed meanwhile. */
  admit(oldObject: KubeObject): Promise<void>;
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function markDeleting(obj: KubeObject, at: Date, graceSeconds: number): void {
  const meta = metaOf(obj);
  meta.deletionTimestamp = timestamp(at);
  meta.deletionGracePeriodSeconds = graceSeconds;
}

/** The graceful-delete update: stores the object with its deletionTimestamp (unless a dry run). */
function storeDeleting(d: Deletion, next: KubeObject): Reply {
  if (d.dryRun) return ok(next);
  metaOf(next).resourceVersion = d.b.store.nextRevision();
  d.b.store.save(d.t.res, d.t.namespace, d.name, next);
  return ok(next);
}

/** A namespace only turns Terminating here; the namespace controller empties it. */
async function deleteNamespace(d: Deletion): Promise<Reply> {
  if (d.oldMeta.deletionTimestamp) return ok(clone(d.old));
  await d.admit(d.old);
  const next = clone(d.old);
  markDeleting(next, d.b.now(), 0);
  next.status = { ...(isRecord(d.old.status) ? d.old.status : {}), phase: "Terminating" };
  return storeDeleting(d, next);
}

/**
 * Phase one sets deletionTimestamp (admission with the stored pod); with grace 0 and no finalizers phase two
 * removes it (admission again, with the updated pod). A terminating pod's delete that does not shorten its
 * grace does nothing and calls no webhook.
 */
async function deletePod(d: Deletion, requestedGrace: unknown): Promise<Reply> {
  const grace = podGracePeriod(d.old, requestedGrace);
  if (d.oldMeta.deletionTimestamp) {
    const current =
      typeof d.oldMeta.deletionGracePeriodSeconds === "number" ? d.oldMeta.deletionGracePeriodSeconds : 0;
    if (grace >= current) return ok(clone(d.old));
  }
  await d.admit(d.old);
  const next = clone(d.old);
  markDeleting(next, new Date(d.b.now().getTime() + grace * 1000), grace);
  if (grace > 0 || d.finalizers.length > 0) return storeDeleting(d, next);
  await d.admit(next);
  if (d.dryRun) return ok(next);
  d.b.store.delete(d.t.res, d.t.namespace, d.name);
  return ok(next);
}

/** Any other kind: gone at once and a Success Status, or held by its finalizers. */
async function deleteObject(d: Deletion): Promise<Reply> {
  await d.admit(d.old);
  if (d.finalizers.length > 0) {
    if (d.oldMeta.deletionTimestamp) return ok(clone(d.old));
    const next = clone(d.old);
    markDeleting(next, d.b.now(), 0);
    return storeDeleting(d, next);
  }
  if (!d.dryRun) d.b.store.delete(d.t.res, d.t.namespace, d.name);
  return ok({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: { ...detailsOf(d.t.res, d.name), uid: d.oldMeta.uid },
  });
}

interface DeleteRequest {
  t: Target;
  name: string;
  /** The name webhooks see: empty for the items of a DeleteCollection. */
  admissionName: string;
  options: JsonObject;
  ctx: Ctx;
  dryRun: boolean;
}

async function admitDelete(
  b: Backend,
  r: DeleteRequest,
  oldObject: KubeObject,
  storedVersion: unknown,
): Promise<void> {
  const { t } = r;
  await b.admission.admit({
    operation: "DELETE",
    res: t.res,
    namespace: t.namespace,
    name: r.admissionName,
    object: null,
    oldObject,
    ctx: r.ctx,
    dryRun: r.dryRun,
    options: r.options,
  });
  checkUnchanged(b, t.res, t.namespace, r.name, storedVersion);
}

async function removeOnce(b: Backend, r: DeleteRequest): Promise<Reply> {
  const { t, name } = r;
  const old = b.store.get(t.res, t.namespace, name);
  if (!old) throw notFound(t.res, name);
  const oldMeta = metaOf(old);
  checkDeletePreconditions(t.res, name, oldMeta, r.options);
  const admit = (oldObject: KubeObject) => admitDelete(b, r, oldObject, oldMeta.resourceVersion);
  const finalizers = Array.isArray(oldMeta.finalizers) ? oldMeta.finalizers : [];
  const d: Deletion = { b, t, name, old, oldMeta, finalizers, dryRun: r.dryRun, admit };
  if (t.res.plural === "namespaces") return deleteNamespace(d);
  if (t.res.plural === "pods") return deletePod(d, r.options.gracePeriodSeconds);
  return deleteObject(d);
}

export async function remove(
  b: Backend,
  t: Target,
  name: string,
  ctx: Ctx,
  admissionName: string,
  opts?: JsonObject,
): Promise<Reply> {
  const options = opts ?? deleteOptions(ctx);
  const dryRun = checkDryRun(ctx, options.dryRun);
  // Deletes retry (and call admission again) when the object changed under them.
  const request: DeleteRequest = { t, name, admissionName, options, ctx, dryRun };
  return retryStale(t.res, name, false, () => removeOnce(b, request));
}

/** Deletes each selected object in turn; the items' admission attributes have an empty name. */
export async function deleteCollection(b: Backend, t: Target, ctx: Ctx): Promise<Reply> {
  if (t.res.plural === "namespaces") throw methodNotAllowed();
  const options = deleteOptions(ctx);
  const selected = selectorOf(ctx.query);
  const items: unknown[] = [];
  for (const obj of b.store.list(t.res, t.namespace).filter(selected)) {
    const name = obj.metadata?.name ?? "";
    const itemTarget: Target = { res: t.res, name };
    const ns = obj.metadata?.namespace;
    if (ns) itemTarget.namespace = ns;
    const reply = await remove(b, itemTarget, name, ctx, "", { ...options });
    items.push(reply.body);
  }
  return listReply(b, t.res, items);
}
