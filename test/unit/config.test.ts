import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../shared/config.js";

const SIM = { SIM_NAME: "s" };
const SECRET = "abcdefghijklmnopqrstuvwx_-0123";

describe("loadConfig: the sequence store's namespace is the function's own", () => {
  it("SEQUENCE_NAMESPACE, else POD_NAMESPACE, else the service account's, else default; never SimKube's", () => {
    assert.equal(loadConfig({ ...SIM, SEQUENCE_NAMESPACE: "a", POD_NAMESPACE: "b" }).storeNamespace, "a");
    assert.equal(
      loadConfig({ ...SIM, POD_NAMESPACE: "b" }, { serviceAccountNamespace: "c" }).storeNamespace,
      "b",
    );
    assert.equal(loadConfig(SIM, { serviceAccountNamespace: "c" }).storeNamespace, "c");
    assert.equal(loadConfig(SIM).storeNamespace, "default");
  });
});

describe("loadConfig: caller authentication", () => {
  it("WEBHOOK_PATH_SECRET is optional and must be one long URL path segment", () => {
    assert.equal(loadConfig(SIM).pathSecret, undefined);
    assert.equal(loadConfig({ ...SIM, WEBHOOK_PATH_SECRET: ` ${SECRET} ` }).pathSecret, SECRET);
    for (const bad of ["short", `${SECRET}/x`, `${SECRET}%2F`, "x".repeat(257)]) {
      assert.throws(() => loadConfig({ ...SIM, WEBHOOK_PATH_SECRET: bad }), ConfigError, bad);
    }
  });

  it("TLS from flags or env; both files or neither; a client CA only with TLS", () => {
    assert.equal(loadConfig(SIM).tls, undefined);
    assert.deepEqual(loadConfig({ ...SIM, TLS_CERT_FILE: "c.pem", TLS_KEY_FILE: "k.pem" }).tls, {
      certFile: "c.pem",
      keyFile: "k.pem",
    });
    assert.deepEqual(
      loadConfig(
        { ...SIM, TLS_CERT_FILE: "env.pem", TLS_KEY_FILE: "k.pem", CLIENT_CA_FILE: "ca.pem" },
        { tlsCert: "flag.pem" },
      ).tls,
      { certFile: "flag.pem", keyFile: "k.pem", clientCaFile: "ca.pem" },
      "a flag beats the env",
    );
    assert.throws(() => loadConfig({ ...SIM, TLS_CERT_FILE: "c.pem" }), /both a certificate and a key/);
    assert.throws(() => loadConfig(SIM, { tlsKey: "k.pem" }), /both a certificate and a key/);
    assert.throws(() => loadConfig({ ...SIM, CLIENT_CA_FILE: "ca.pem" }), /only when serving https/);
  });
});
