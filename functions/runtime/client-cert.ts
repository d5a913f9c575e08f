// CLIENT_CERT_SUBJECTS: a client CA may sign more than the API server's certificate (a cluster CA signs every
// kubelet's and user's), so a certificate it signed passes only when its subject CN, or one of its DNS or URI
// SANs, is one of the names pinned. Read from the certificate as node:tls reports it (getPeerCertificate).

import type { ClientCertSubject } from "../../shared/config/index.js";

/** What of a peer certificate is read: node:tls's PeerCertificate has these fields. */
export interface PeerNames {
  subject?: { CN?: string | string[] } | undefined;
  subjectaltname?: string | undefined;
}

export interface AltName {
  kind: string;
  value: string;
}

/**
 * node:tls's subjectaltname string, read entry by entry: `TYPE:value` joined by ", ", a value holding a
 * comma, quote or other special character written as a JSON string. Reading the quotes matters: split on
 * ", " alone, one crafted DNS name could read as several. Stops at the first entry it cannot read.
 */
export function subjectAltNames(text: string): AltName[] {
  const names: AltName[] = [];
  let at = 0;
  while (at < text.length) {
    const colon = text.indexOf(":", at);
    if (colon < 0) break;
    const kind = text.slice(at, colon);
    const read = text[colon + 1] === '"' ? quotedValue(text, colon + 1) : plainValue(text, colon + 1);
    if (!read) break;
    names.push({ kind, value: read.value });
    if (read.end === text.length) break;
    if (!text.startsWith(", ", read.end)) break;
    at = read.end + 2;
  }
  return names;
}

function quotedValue(text: string, start: number): { value: string; end: number } | undefined {
  let at = start + 1;
  while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
  if (at >= text.length) return undefined;
  try {
    return { value: JSON.parse(text.slice(start, at + 1)) as string, end: at + 1 };
  } catch {
    return undefined;
  }
}

function plainValue(text: string, start: number): { value: string; end: number } {
  const next = text.indexOf(", ", start);
  const end = next < 0 ? text.length : next;
  return { value: text.slice(start, end), end };
}

/**
 * Whether the certificate names one of `pinned`: its one subject CN (a certificate with several CNs matches
 * none), or a DNS or URI SAN, each compared exactly with the pinned names of its kind.
 */
export function certificateMatches(cert: PeerNames, pinned: readonly ClientCertSubject[]): boolean {
  const cn = cert.subject?.CN;
  if (typeof cn === "string" && pinned.some((p) => p.kind === "CN" && p.value === cn)) return true;
  if (!cert.subjectaltname) return false;
  return subjectAltNames(cert.subjectaltname).some((name) =>
    pinned.some((p) => p.kind !== "CN" && p.kind === name.kind && p.value === name.value),
  );
}
