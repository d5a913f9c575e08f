// The PEM files `serve` takes for https and client certificates, read and checked before it listens. A file
// that cannot be read, is empty or holds no certificate (or key) is a ConfigError naming its setting, so a
// bad file stops startup with one line (exit 2) instead of serving without the check it was meant to turn on.

import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError, type TlsFiles } from "../../shared/config/index.js";
import type { TlsMaterial } from "./http-server.js";

function readPem(file: string, setting: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new ConfigError(`${setting} ${file} cannot be read: ${(err as Error).message}`);
  }
  if (bytes.toString("latin1").trim() === "") throw new ConfigError(`${setting} ${file} is empty`);
  return bytes;
}

function parseWith<T>(parse: () => T, setting: string, file: string, what: string): T {
  try {
    return parse();
  } catch (err) {
    throw new ConfigError(`${setting} ${file} holds no ${what}: ${(err as Error).message}`);
  }
}

/** Reads and checks the certificate, its key and the client CA (when set): a listening server checks callers. */
export function readTlsMaterial(files: TlsFiles): TlsMaterial {
  const certSetting = "TLS_CERT_FILE (--tls-cert)";
  const keySetting = "TLS_KEY_FILE (--tls-key)";
  const cert = readPem(files.certFile, certSetting);
  const key = readPem(files.keyFile, keySetting);
  const certificate = parseWith(() => new X509Certificate(cert), certSetting, files.certFile, "certificate");
  const privateKey: KeyObject = parseWith(
    () => createPrivateKey(key),
    keySetting,
    files.keyFile,
    "private key",
  );
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `${keySetting} ${files.keyFile} is not the key of ${certSetting} ${files.certFile}`,
    );
  }
  const material: TlsMaterial = { cert, key };
  if (files.clientCaFile) {
    const ca = readPem(files.clientCaFile, "CLIENT_CA_FILE");
    parseWith(() => new X509Certificate(ca), "CLIENT_CA_FILE", files.clientCaFile, "certificate");
    material.ca = ca;
  }
  return material;
}
