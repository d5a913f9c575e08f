// Kubernetes object names and labels (apimachinery's validation): what the API server would refuse, checked
// before anything is started or rendered, so the error names the flag instead of coming back as a 422 later.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** An RFC 1123 label: namespaces, and names also used as label values (at most 63 characters). */
export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

export const DNS1123_LABEL_RULE =
  "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters";

/** An RFC 1123 subdomain: most object names, Secrets included (dot-separated labels, at most 253 characters). */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= 253 && name.split(".").every((label) => DNS1123_LABEL.test(label));
}

/** An RFC 1035 label: Service names (a letter first, at most 63 characters). */
export function isDns1035Label(name: string): boolean {
  return name.length <= 63 && DNS1035_LABEL.test(name);
}

/** A label name after its optional prefix: at most 63 of A-Z a-z 0-9 - _ ., a letter or digit at each end. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A label key: an optional DNS-subdomain prefix and "/", then a label name (apimachinery's qualified name). */
export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (prefix !== undefined && !isDns1123Subdomain(prefix)) return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

/** A label value: empty, or what a label name may be. */
export function isLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}
