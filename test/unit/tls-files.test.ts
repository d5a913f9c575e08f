// `serve`'s PEM files (functions/runtime/tls-files.ts): a file that cannot serve its purpose stops startup with
// a ConfigError naming the setting, instead of failing later or serving without the check.

import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { readTlsMaterial } from "../../functions/runtime/tls-files.js";
import { ConfigError } from "../../shared/config/config.js";

const TLS = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../test/support/tls");
const GOOD = {
  certFile: join(TLS, "server.crt"),
  keyFile: join(TLS, "server.key"),
  clientCaFile: join(TLS, "test-ca.crt"),
};

describe("readTlsMaterial", () => {
  const dir = mkdtempSync(join(tmpdir(), "simkube-fn-tls-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("reads a matching certificate and key and the client CA", () => {
    const material = readTlsMaterial(GOOD);
    assert.ok(material.cert.length > 0 && material.key.length > 0 && (material.ca?.length ?? 0) > 0);
  });

  it("an unreadable, empty, whitespace-only or non-PEM file is a ConfigError naming its setting", () => {
    const empty = file("empty.pem", "");
    const blank = file("blank.pem", " \n\n ");
    const junk = file("junk.pem", "not a certificate\n");
    const missing = join(dir, "absent.pem");
    const cases: [Partial<typeof GOOD>, RegExp][] = [
      [{ clientCaFile: empty }, /^CLIENT_CA_FILE .*empty\.pem is empty$/],
      [{ clientCaFile: blank }, /^CLIENT_CA_FILE .*blank\.pem is empty$/],
      [{ clientCaFile: junk }, /^CLIENT_CA_FILE .*junk\.pem holds no certificate/],
      [{ clientCaFile: missing }, /^CLIENT_CA_FILE .*absent\.pem cannot be read: ENOENT/],
      [{ clientCaFile: dir }, /^CLIENT_CA_FILE .* cannot be read: EISDIR/],
      [{ certFile: empty }, /^TLS_CERT_FILE \(--tls-cert\) .* is empty$/],
      [{ certFile: junk }, /^TLS_CERT_FILE \(--tls-cert\) .* holds no certificate/],
      [{ certFile: missing }, /^TLS_CERT_FILE \(--tls-cert\) .* cannot be read/],
      [{ keyFile: blank }, /^TLS_KEY_FILE \(--tls-key\) .* is empty$/],
      [{ keyFile: junk }, /^TLS_KEY_FILE \(--tls-key\) .* holds no private key/],
    ];
    for (const [change, message] of cases) {
      assert.throws(
        () => readTlsMaterial({ ...GOOD, ...change }),
        (err: Error) => err instanceof ConfigError && message.test(err.message),
        JSON.stringify(change),
      );
    }
  });

  it("a key that is not the certificate's is a ConfigError naming both", () => {
    const otherKey = join(dir, "stranger.key");
    copyFileSync(join(TLS, "stranger.key"), otherKey);
    assert.throws(
      () => readTlsMaterial({ ...GOOD, keyFile: otherKey }),
      /^ConfigError: TLS_KEY_FILE \(--tls-key\) .* is not the key of TLS_CERT_FILE/,
    );
  });
});
