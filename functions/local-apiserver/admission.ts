// The admission caller: sends AdmissionReview v1 to the matching mutating webhooks in order and applies their
// JSONPatches, as kube-apiserver's mutating dispatcher does (k8s.io/apiserver
// pkg/admission/plugin/webhook/mutating/dispatcher.go). Only transport failures honour failurePolicy: Ignore.

import { randomUUID } from "node:crypto";
import fastJsonPatch, { type Operation } from "fast-json-patch";
import type { AdmissionRequest, AdmissionResponse, AdmissionReview } from "../../shared/admission/index.js";
import { errorMessage, type JsonObject } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import { clone } from "./objects.js";
import { failure, internalError } from "./status.js";
import type { AdmissionCall, Ctx, FakeWebhook, ResourceInfo } from "./types.js";

export interface AdmitArgs {
  operation: "CREATE" | "UPDATE" | "DELETE";
  res: ResourceInfo;
  subresource?: string | undefined;
  namespace: string | undefined;
  name: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  ctx: Ctx;
  dryRun: boolean;
  options: JsonObject;
}

/** A webhook rule's resource ("pods", "pods/status", "pods/*", "*", "*\/*") against a request. */
function ruleMatches(rule: string, res: ResourceInfo, subresource: string | undefined): boolean {
  const [r, sub] = rule.split("/");
  if (r !== "*" && r !== res.plural) return false;
  if (sub === undefined) return subresource === undefined;
  return sub === "*" || sub === subresource;
}

function hookMatches(hook: FakeWebhook, args: AdmitArgs): boolean {
  const operation = hook.operations.includes(args.operation) || hook.operations.includes("*");
  return operation && hook.resources.some((r) => ruleMatches(r, args.res, args.subresource));
}

function admissionRequest(args: AdmitArgs, current: KubeObject | null): AdmissionRequest & JsonObject {
  const gvk = { group: args.res.group, version: args.res.version, kind: args.res.kind };
  const gvr = { group: args.res.group, version: args.res.version, resource: args.res.plural };
  const request: AdmissionRequest & JsonObject = {
    uid: randomUUID(),
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: args.name,
    operation: args.operation,
    userInfo: clone(args.ctx.user),
    object: current === null ? null : clone(current),
    oldObject: args.oldObject === null ? null : clone(args.oldObject),
    dryRun: args.dryRun,
    options: clone(args.options),
  };
  if (args.subresource) {
    request.subResource = args.subresource;
    request.requestSubResource = args.subresource;
  }
  if (args.namespace !== undefined) request.namespace = args.namespace;
  return request;
}

/** A denial, as the apiserver reports it: the webhook's Status code and reason, 403 by default. */
function denied(hookName: string, response: AdmissionResponse): Error {
  const deniedBy = `admission webhook "${hookName}" denied the request`;
  const s = response.status ?? {};
  const message = s.message ? `${deniedBy}: ${s.message}` : `${deniedBy} without explanation`;
  return failure(s.code || 403, s.reason, message);
}

function decodePatch(hookName: string, patch: string): Operation[] {
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(patch, "base64").toString("utf8"));
  } catch (err) {
    throw internalError(
      `admission webhook "${hookName}" returned an undecodable patch: ${errorMessage(err)}`,
    );
  }
  if (!Array.isArray(ops))
    throw internalError(`admission webhook "${hookName}" returned a patch that is not a list`);
  return ops as Operation[];
}

/** The object after a webhook's patch; a non-empty patch on DELETE (no object) fails the request. */
function applyResponsePatch(
  hookName: string,
  current: KubeObject | null,
  response: AdmissionResponse,
): KubeObject | null {
  if (!response.patch) return current;
  const ops = decodePatch(hookName, response.patch);
  if (ops.length === 0) return current;
  if (current === null) {
    throw internalError(
      `admission webhook "${hookName}" attempted to modify the object, which is not supported for this operation`,
    );
  }
  if (response.patchType !== "JSONPatch") {
    throw internalError(
      `admission webhook "${hookName}" returned a patch of unsupported type ${String(response.patchType)}`,
    );
  }
  try {
    return fastJsonPatch.applyPatch(clone(current), ops, true, false).newDocument;
  } catch (err) {
    throw internalError(
      `admission webhook "${hookName}" returned a patch that does not apply: ${errorMessage(err)}`,
    );
  }
}

export class AdmissionCaller {
  private readonly inFlight = new Set<AbortController>();

  constructor(
    /** Read at each call: tests replace the list after start. */
    private readonly webhooks: () => FakeWebhook[],
    private readonly log: AdmissionCall[],
  ) {}

  /** Runs every matching webhook in order; returns the object as patched (null for DELETE). */
  async admit(args: AdmitArgs): Promise<KubeObject | null> {
    let current = args.object;
    const hooks = this.webhooks().filter((h) => hookMatches(h, args));
    for (const hook of hooks) current = await this.admitOne(hook, args, current);
    return current;
  }

  /** Aborts the webhook calls still waiting (the server is closing). */
  abortAll(reason: string): void {
    for (const c of this.inFlight) c.abort(new Error(reason));
  }

  private async admitOne(hook: FakeWebhook, args: AdmitArgs, current: KubeObject | null) {
    const hookName = hook.name ?? `fake-webhook-${this.webhooks().indexOf(hook) + 1}.simkube.io`;
    const request = admissionRequest(args, current);
    const call: AdmissionCall = { webhook: hookName, request };
    this.log.push(call);
    let response: AdmissionResponse;
    try {
      response = await this.post(hook, {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request,
      });
      call.response = response;
    } catch (err) {
      call.error = (err as Error).message;
      if (hook.failurePolicy === "Ignore") return current;
      throw internalError(
        `failed calling webhook "${hookName}": failed to call webhook: Post "${hook.url}": ${call.error}`,
      );
    }
    if (response.uid !== request.uid) {
      call.error = `expected response.uid="${request.uid}", got "${response.uid}"`;
      if (hook.failurePolicy === "Ignore") return current;
      throw internalError(`failed calling webhook "${hookName}": ${call.error}`);
    }
    if (!response.allowed) throw denied(hookName, response);
    return applyResponsePatch(hookName, current, response);
  }

  private async post(hook: FakeWebhook, review: AdmissionReview): Promise<AdmissionResponse> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(
      () => controller.abort(new Error("context deadline exceeded")),
      hook.timeoutMs ?? 10_000,
    );
    try {
      const res = await fetch(hook.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(review),
        signal: controller.signal,
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`webhook answered HTTP ${res.status}: ${text.slice(0, 200)}`);
      const parsed = JSON.parse(text) as AdmissionReview;
      if (!parsed.response) throw new Error("webhook answer has no response");
      return parsed.response;
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }
}
