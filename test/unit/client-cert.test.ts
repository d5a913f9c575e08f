// Which client certificates pass CLIENT_CERT_SUBJECTS (functions/runtime/client-cert.ts): a subject CN or a
// DNS/URI SAN named there, read from the certificate as node:tls reports it, quoting included.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { certificateMatches, subjectAltNames } from "../../functions/runtime/client-cert.js";

describe("client certificate pinning", () => {
  const pinned = [
    { kind: "CN", value: "kube-apiserver" },
    { kind: "DNS", value: "apiserver.example.com" },
    { kind: "URI", value: "spiffe://cluster/apiserver" },
  ] as const;

  it("passes a certificate whose CN or DNS/URI SAN is named", () => {
    assert.equal(certificateMatches({ subject: { CN: "kube-apiserver" } }, pinned), true);
    const dns = { subject: { CN: "x" }, subjectaltname: "DNS:a.example.com, DNS:apiserver.example.com" };
    assert.equal(certificateMatches(dns, pinned), true);
    const uri = { subject: {}, subjectaltname: "URI:spiffe://cluster/apiserver" };
    assert.equal(certificateMatches(uri, pinned), true);
  });

  it("refuses any other name, a name of another kind, and two CNs", () => {
    assert.equal(certificateMatches({ subject: { CN: "mallory" } }, pinned), false);
    assert.equal(certificateMatches({ subject: { CN: "apiserver.example.com" } }, pinned), false);
    assert.equal(certificateMatches({ subject: {}, subjectaltname: "DNS:kube-apiserver" }, pinned), false);
    assert.equal(certificateMatches({ subject: { CN: ["mallory", "kube-apiserver"] } }, pinned), false);
    assert.equal(certificateMatches({}, pinned), false);
  });

  it("reads quoted SANs whole: a name with a comma cannot pass as two", () => {
    // node:tls quotes (JSON) a SAN holding a comma or quote; split naively, this one would yield
    // `DNS:apiserver.example.com` on its own.
    const forged = `DNS:${JSON.stringify('x", DNS:apiserver.example.com, DNS:"y')}`;
    assert.deepEqual(subjectAltNames(forged), [
      { kind: "DNS", value: 'x", DNS:apiserver.example.com, DNS:"y' },
    ]);
    assert.equal(certificateMatches({ subject: { CN: "m" }, subjectaltname: forged }, pinned), false);
    assert.deepEqual(subjectAltNames('DNS:a, IP Address:10.0.0.1, URI:"b,c"'), [
      { kind: "DNS", value: "a" },
      { kind: "IP Address", value: "10.0.0.1" },
      { kind: "URI", value: "b,c" },
    ]);
  });
});
