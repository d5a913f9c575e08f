// Object names: validation (apimachinery's DNS-1123 rules) and generateName suffixes.

import type { Cause } from "./status.js";
import type { ResourceInfo } from "./types.js";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const LABEL_RULE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_RULE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** Namespaces must be DNS-1123 labels (63); every other kind here a DNS-1123 subdomain (253). */
export function nameCauses(res: ResourceInfo, name: string): Cause[] {
  const asLabel = res.plural === "namespaces";
  const max = asLabel ? 63 : 253;
  const causes: Cause[] = [];
  if (name.length > max) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: "${name}": must be no more than ${max} characters`,
      field: "metadata.name",
    });
  }
  const ok = asLabel ? DNS1123_LABEL.test(name) : DNS1123_SUBDOMAIN.test(name);
  if (!ok) {
    causes.push({
      reason: "FieldValueInvalid",
      message: `Invalid value: "${name}": ${asLabel ? LABEL_RULE : SUBDOMAIN_RULE}`,
      field: "metadata.name",
    });
  }
  return causes;
}

/** The alphabet the apiserver's name generator uses (no vowels, no look-alikes). */
const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

export function generateSuffix(): string {
  let out = "";
  for (let i = 0; i < 5; i++) out += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return out;
}
