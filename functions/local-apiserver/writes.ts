// Create, update (PUT) and patch, in kube-apiserver's order: namespace lifecycle -> defaulting -> mutating
// webhooks -> name generation -> validation (422) -> storage (409). See k8s.io/apiserver
// pkg/endpoints/handlers/create.go and update.go, pkg/registry/generic/registry/store.go.

import { randomUUID } from "node:crypto";
import fastJsonPatch, { type Operation } from "fast-json-patch";
import { isRecord, type JsonObject } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import type { Backend } from "./backend.js";
import { generateSuffix, nameCauses } from "./names.js";
import { clone, keepMeta, mergePatch, metaOf, str, timestamp } from "./objects.js";
import { applyDefaults, podCreateCauses, podSpecUpdateCauses, qosClass } from "./pods.js";
import { checkBodyNamespace, checkDryRun, parseBody, parseObject } from "./request-body.js";
import { NO_GENERATION } from "./resources.js";
import {
  alreadyExists,
  badRequest,
  conflict,
  failure,
  invalid,
  MODIFIED,
  namespaceTerminating,
  notFound,
  pathNotFound,
  preconditionFailed,
} from "./status.js";
import { checkUnchanged, retryStale } from "./storage-retry.js";
import type { Ctx, Reply, ResourceInfo, Target } from "./types.js";
import { kindCauses } from "./validation.js";

// ---- create ---------------------------------------------------------------------------------------------

/** NamespaceLifecycle: the namespace must exist and not be terminating. */
function checkNamespaceForCreate(b: Backend, res: ResourceInfo, namespace: string, name: string): void {
  const ns = b.store.get(b.kinds.namespaces(), undefined, namespace);
  if (!ns) throw notFound(b.kinds.namespaces(), namespace);
  const phase = isRecord(ns.status) ? ns.status.phase : undefined;
  if (phase === "Terminating" || ns.metadata?.deletionTimestamp) {
    throw namespaceTerminating(res, name, namespace);
  }
}

/** The object takes the URL's namespace (cluster-scoped kinds none). */
function placeForCreate(b: Backend, t: Target, meta: JsonObject): void {
  if (!t.res.namespaced) {
    delete meta.namespace;
    return;
  }
  if (t.namespace === undefined) throw pathNotFound();
  checkBodyNamespace(meta, t.namespace);
  meta.namespace = t.namespace;
  checkNamespaceForCreate(b, t.res, t.namespace, str(meta.name) ?? "");
}

/** The created object's name: its own, or generateName plus a random suffix; none is a 422. */
function nameForCreate(res: ResourceInfo, m: JsonObject): string {
  if (str(m.resourceVersion)) {
    // A plain storage error in the apiserver: 500 with no reason.
    throw failure(500, undefined, "resourceVersion should not be set on objects to be created");
  }
  if (!str(m.name) && str(m.generateName)) m.name = `${m.generateName}${generateSuffix()}`;
  const name = str(m.name) ?? "";
  if (!name) {
    throw invalid(res, "", [
      {
        reason: "FieldValueRequired",
        message: "Required value: name or generateName is required",
        field: "metadata.name",
      },
    ]);
  }
  return name;
}

/** System fields, as the registry's BeforeCreate sets them. */
function setCreateFields(b: Backend, res: ResourceInfo, obj: KubeObject, name: string): void {
  const m = metaOf(obj);
  m.uid = randomUUID();
  m.creationTimestamp = timestamp(b.now());
  delete m.deletionTimestamp;
  delete m.deletionGracePeriodSeconds;
  if (!NO_GENERATION.has(res.plural)) m.generation = 1;
  if (res.plural === "pods") obj.status = { phase: "Pending", qosClass: qosClass(obj) };
  else if (res.statusSubresource && res.custom) delete obj.status;
  if (res.plural === "namespaces") {
    obj.spec = { finalizers: ["kubernetes"] };
    obj.status = { phase: "Active" };
    m.labels = { ...(isRecord(m.labels) ? m.labels : {}), "kubernetes.io/metadata.name": name };
  }
}

export async function create(b: Backend, t: Target, ctx: Ctx): Promise<Reply> {
  const { res } = t;
  const obj = parseObject(t, ctx);
  const dryRun = checkDryRun(ctx);
  placeForCreate(b, t, metaOf(obj));
  applyDefaults(res, obj);
  const admitted = (await b.admission.admit({
    operation: "CREATE",
    res,
    namespace: t.namespace,
    name: str(metaOf(obj).name) ?? "",
    object: obj,
    oldObject: null,
    ctx,
    dryRun,
    options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
  })) as KubeObject;
  const m = metaOf(admitted);
  if (res.namespaced) m.namespace = t.namespace;
  applyDefaults(res, admitted);
  const name = nameForCreate(res, m);
  const causes = [
    ...nameCauses(res, name),
    ...(res.plural === "pods" ? podCreateCauses(admitted) : []),
    ...kindCauses(res, admitted),
  ];
  if (causes.length > 0) throw invalid(res, name, causes);
  setCreateFields(b, res, admitted, name);
  if (b.store.get(res, t.namespace, name)) throw alreadyExists(res, name);
  if (dryRun) return { status: 201, body: admitted };
  m.resourceVersion = b.store.nextRevision();
  b.store.save(res, t.namespace, name, admitted);
  return { status: 201, body: admitted };
}

// ---- update and patch -----------------------------------------------------------------------------------

interface UpdateArgs {
  t: Target;
  name: string;
  /** The stored object the write starts from. */
  old: KubeObject;
  /** The object as the client wants it (PUT body, or the old object patched). */
  input: KubeObject;
  ctx: Ctx;
  dryRun: boolean;
  /** UpdateOptions or PatchOptions, as the webhooks see them. */
  options: JsonObject;
}

export async function update(b: Backend, t: Target, name: string, ctx: Ctx): Promise<Reply> {
  const next = parseObject(t, ctx);
  const meta = metaOf(next);
  if (meta.name !== undefined && meta.name !== name) {
    throw badRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
    );
  }
  if (t.res.namespaced) checkBodyNamespace(meta, t.namespace);
  const dryRun = checkDryRun(ctx);
  const conditional = Boolean(str(meta.resourceVersion));
  const options = { kind: "UpdateOptions", apiVersion: "meta.k8s.io/v1" };
  return retryStale(t.res, name, conditional, () => {
    const old = b.store.get(t.res, t.namespace, name);
    if (!old) throw notFound(t.res, name);
    return writeUpdate(b, { t, name, old, input: clone(next), ctx, dryRun, options });
  });
}

export async function patch(b: Backend, t: Target, name: string, ctx: Ctx): Promise<Reply> {
  const body = parseBody(ctx);
  const dryRun = checkDryRun(ctx);
  // A patch is unconditional unless it carries a resourceVersion of its own; then it is re-applied to the
  // latest object when another write lands during admission.
  const patchMeta = isRecord(body) && isRecord(body.metadata) ? body.metadata : {};
  const conditional = patchMeta.resourceVersion !== undefined;
  const options = { kind: "PatchOptions", apiVersion: "meta.k8s.io/v1" };
  return retryStale(t.res, name, conditional, () => {
    const old = b.store.get(t.res, t.namespace, name);
    if (!old) throw notFound(t.res, name);
    const input = patched(t.res, name, old, body, ctx.contentType);
    const meta = metaOf(input);
    if (!conditional) meta.resourceVersion = old.metadata?.resourceVersion;
    if (meta.name !== name) throw badRequest("metadata.name cannot be changed by a patch");
    return writeUpdate(b, { t, name, old, input, ctx, dryRun, options });
  });
}

function jsonPatched(res: ResourceInfo, name: string, old: KubeObject, body: unknown): unknown {
  if (!Array.isArray(body)) throw badRequest("json patch must be an array of operations");
  try {
    return fastJsonPatch.applyPatch(clone(old), body as Operation[], true, false).newDocument;
  } catch (err) {
    const e = err as Error & { name?: string };
    if (e.name === "TEST_OPERATION_FAILED") {
      throw invalid(res, name, [{ reason: "FieldValueInvalid", message: e.message, field: "patch" }]);
    }
    throw badRequest(`the server rejected our request due to an error in our request: ${e.message}`);
  }
}

/** The stored object with the patch applied, by the patch's content type. */
function patched(
  res: ResourceInfo,
  name: string,
  old: KubeObject,
  body: unknown,
  contentType: string,
): KubeObject {
  switch (contentType) {
    case "application/json-patch+json":
      return jsonPatched(res, name, old, body) as KubeObject;
    case "application/merge-patch+json":
    // Strategic merge is approximated by a JSON merge patch: lists are replaced, not merged by key.
    case "application/strategic-merge-patch+json":
      if (!isRecord(body)) throw badRequest("merge patch must be a JSON object");
      return mergePatch(old, body) as KubeObject;
    default:
      throw failure(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
      );
  }
}

/** resourceVersion and uid preconditions; a custom resource's PUT must name a resourceVersion. */
function checkUpdatePreconditions(res: ResourceInfo, name: string, oldMeta: JsonObject, inMeta: JsonObject) {
  const rv = str(inMeta.resourceVersion);
  if (rv) {
    if (rv !== oldMeta.resourceVersion) throw conflict(res, name, MODIFIED);
  } else if (res.custom) {
    throw invalid(res, name, [
      {
        reason: "FieldValueInvalid",
        message: "Invalid value: 0x0: must be specified for an update",
        field: "metadata.resourceVersion",
      },
    ]);
  }
  if (str(inMeta.uid) && inMeta.uid !== oldMeta.uid) {
    throw preconditionFailed(res, name, "UID", inMeta.uid, oldMeta.uid);
  }
}

const SYSTEM_META = ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"];

/**
 * What the write would store before admission: a status write changes only status, labels and annotations
 * (pods/status persists both, kubernetes/kubernetes pkg/registry/core/pod/strategy.go); a main-resource
 * write keeps the stored status. System metadata always stays.
 */
function updatedObject(u: UpdateArgs): KubeObject {
  const { res } = u.t;
  const inMeta = metaOf(u.input);
  let next: KubeObject;
  if (u.t.subresource === "status") {
    next = clone(u.old);
    next.status = clone(u.input.status);
    const nm = metaOf(next);
    if (inMeta.labels !== undefined) nm.labels = clone(inMeta.labels);
    if (inMeta.annotations !== undefined) nm.annotations = clone(inMeta.annotations);
  } else {
    next = clone(u.input);
    if (res.statusSubresource) {
      if (u.old.status === undefined) delete next.status;
      else next.status = clone(u.old.status);
    }
  }
  const nm = metaOf(next);
  keepMeta(nm, metaOf(u.old), [...SYSTEM_META, "generation"]);
  nm.name = u.name;
  if (res.namespaced) nm.namespace = u.t.namespace;
  else delete nm.namespace;
  applyDefaults(res, next);
  return next;
}

/** Calls the webhooks; the object they return keeps the stored system metadata. */
async function admitUpdate(b: Backend, u: UpdateArgs, next: KubeObject): Promise<KubeObject> {
  const { res } = u.t;
  const admitted = (await b.admission.admit({
    operation: "UPDATE",
    res,
    subresource: u.t.subresource,
    namespace: u.t.namespace,
    name: u.name,
    object: next,
    oldObject: u.old,
    ctx: u.ctx,
    dryRun: u.dryRun,
    options: u.options,
  })) as KubeObject;
  const oldMeta = metaOf(u.old);
  checkUnchanged(b, res, u.t.namespace, u.name, oldMeta.resourceVersion);
  const am = metaOf(admitted);
  am.resourceVersion = oldMeta.resourceVersion;
  keepMeta(am, oldMeta, SYSTEM_META);
  return admitted;
}

/** Stores the admitted object; an object being deleted whose last finalizer went goes away now. */
function commitUpdate(b: Backend, u: UpdateArgs, admitted: KubeObject): Reply {
  const { res } = u.t;
  const { old } = u;
  const oldMeta = metaOf(old);
  // A no-op write does not bump the resourceVersion, as in etcd3's GuaranteedUpdate.
  if (JSON.stringify(admitted) === JSON.stringify(old)) return { status: 200, body: clone(old) };
  const am = metaOf(admitted);
  if (!NO_GENERATION.has(res.plural) && JSON.stringify(admitted.spec) !== JSON.stringify(old.spec)) {
    am.generation = (typeof oldMeta.generation === "number" ? oldMeta.generation : 0) + 1;
  }
  if (u.dryRun) return { status: 200, body: admitted };
  am.resourceVersion = b.store.nextRevision();
  const finalizers = Array.isArray(am.finalizers) ? am.finalizers : [];
  const gone =
    am.deletionTimestamp &&
    finalizers.length === 0 &&
    (res.plural !== "pods" || am.deletionGracePeriodSeconds === 0);
  if (gone) b.store.delete(res, u.t.namespace, u.name);
  else b.store.save(res, u.t.namespace, u.name, admitted);
  return { status: 200, body: admitted };
}

async function writeUpdate(b: Backend, u: UpdateArgs): Promise<Reply> {
  checkUpdatePreconditions(u.t.res, u.name, metaOf(u.old), metaOf(u.input));
  const admitted = await admitUpdate(b, u, updatedObject(u));
  if (u.t.res.plural === "pods" && u.t.subresource === undefined) {
    const causes = podSpecUpdateCauses(u.old, admitted);
    if (causes.length > 0) throw invalid(u.t.res, u.name, causes);
  }
  const causes = kindCauses(u.t.res, admitted);
  if (causes.length > 0) throw invalid(u.t.res, u.name, causes);
  return commitUpdate(b, u, admitted);
}
