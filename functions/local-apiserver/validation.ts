// Validation by kind, beyond names and pods: what the real registry refuses on create and update.

import { isRecord } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import type { Cause } from "./status.js";
import type { ResourceInfo } from "./types.js";

// kubernetes/kubernetes pkg/apis/core/validation ValidateConfigMap: data and binaryData keys and values
// together at most MaxSecretSize bytes (binaryData counted decoded); the error names the whole object ("[]").
const CONFIGMAP_MAX_BYTES = 1024 * 1024;

function configMapCauses(cm: KubeObject): Cause[] {
  let size = 0;
  for (const field of ["data", "binaryData"] as const) {
    const entries = isRecord(cm[field]) ? Object.entries(cm[field]) : [];
    for (const [key, value] of entries) {
      const text = typeof value === "string" ? value : "";
      size += Buffer.byteLength(key);
      size += field === "data" ? Buffer.byteLength(text) : Buffer.from(text, "base64").length;
    }
  }
  if (size <= CONFIGMAP_MAX_BYTES) return [];
  return [
    {
      reason: "FieldValueTooLong",
      message: `Too long: must have at most ${CONFIGMAP_MAX_BYTES} bytes`,
      field: "[]",
    },
  ];
}

// kubernetes/kubernetes pkg/apis/core/validation/events.go legacyValidateEvent, for an Event without eventTime
// (the only kind written here): one about a cluster-scoped object (involvedObject without a namespace) lives in
// "default" or in no namespace; one about a namespaced object, in that object's namespace.
function eventCauses(event: KubeObject): Cause[] {
  if (event.eventTime) return [];
  const involved = isRecord(event.involvedObject) ? event.involvedObject : {};
  const involvedNamespace = typeof involved.namespace === "string" ? involved.namespace : "";
  const namespace = event.metadata?.namespace ?? "";
  const fits =
    involvedNamespace === "" ? namespace === "" || namespace === "default" : namespace === involvedNamespace;
  if (fits) return [];
  return [
    {
      reason: "FieldValueInvalid",
      message: `Invalid value: "${involvedNamespace}": does not match event.namespace`,
      field: "involvedObject.namespace",
    },
  ];
}

/** Validation by kind on create and update (names are checked on create only). */
export function kindCauses(res: ResourceInfo, obj: KubeObject): Cause[] {
  if (res.plural === "configmaps") return configMapCauses(obj);
  return res.plural === "events" ? eventCauses(obj) : [];
}
