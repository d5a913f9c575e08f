// Kubernetes object names (apimachinery's validation): what the API server would refuse, checked before
// anything is started or rendered, so the error names the flag instead of coming back as a 422 later.

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
