import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_DRIVER_USERS } from "../../shared/base/identities.js";
import { ConfigError, type Env, loadConfig, TRACE_MEMORY_DEFAULTS } from "../../shared/config/config.js";

const BASE: Env = { SIM_NAME: "sim-a" };

function configError(env: Env, flags: { port?: string } = {}): string {
  try {
    loadConfig(env, flags);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.equal(err.name, "ConfigError");
    return err.message;
  }
  assert.fail("expected a ConfigError");
}

describe("loadConfig (shared/config/config.ts)", () => {
  it("defaults every optional setting", () => {
    assert.deepEqual(loadConfig(BASE), {
      simName: "sim-a",
      port: 8080,
      logLevel: "info",
      logFormat: "json",
      driverUsers: [...DEFAULT_DRIVER_USERS],
      sequenceStore: "cluster",
      storeNamespace: "default",
    });
  });

  it("reads every setting from the environment, trimmed", () => {
    const config = loadConfig({
      SIM_NAME: " sim-b ",
      TRACE_PATH: " https://traces.example/t.sktrace ",
      PORT: "9090",
      LOG_LEVEL: " debug ",
      LOG_FORMAT: " gcp ",
      DRIVER_USERS: " alice , ,bob ",
      SEQUENCE_STORE: "memory",
      SEQUENCE_NAMESPACE: " seq-ns ",
      POD_NAMESPACE: "pod-ns",
    });
    assert.deepEqual(config, {
      simName: "sim-b",
      tracePath: "https://traces.example/t.sktrace",
      port: 9090,
      logLevel: "debug",
      logFormat: "gcp",
      driverUsers: ["alice", "bob"],
      sequenceStore: "memory",
      storeNamespace: "seq-ns",
    });
  });

  it("POD_READ_ROLE and POD_READ_ACCOUNT: together, the account as a ServiceAccount username", () => {
    const env = {
      ...BASE,
      POD_READ_ROLE: " fn-virtual-pod-reads ",
      POD_READ_ACCOUNT: "system:serviceaccount:simkube:fn-reschedule-delete",
    };
    assert.deepEqual(loadConfig(env).podReads, {
      role: "fn-virtual-pod-reads",
      account: { namespace: "simkube", name: "fn-reschedule-delete" },
    });
    assert.match(configError({ ...BASE, POD_READ_ROLE: "r" }), /POD_READ_ROLE and POD_READ_ACCOUNT/);
    assert.match(
      configError({ ...env, POD_READ_ACCOUNT: "fn-reschedule-delete" }),
      /POD_READ_ACCOUNT must be/,
    );
    assert.match(configError({ ...env, POD_READ_ROLE: "  " }), /POD_READ_ROLE is set but empty/);
  });

  it("port: the flag beats PORT, and PORT beats the default", () => {
    assert.equal(loadConfig({ ...BASE, PORT: "9090" }, { port: "7070" }).port, 7070);
    assert.equal(loadConfig({ ...BASE, PORT: "9090" }).port, 9090);
    assert.equal(loadConfig(BASE).port, 8080);
    // An empty PORT is unset; port 0 (any free port) is allowed.
    assert.equal(loadConfig({ ...BASE, PORT: "" }).port, 8080);
    assert.equal(loadConfig(BASE, { port: "0" }).port, 0);
    assert.equal(loadConfig(BASE, { port: "65535" }).port, 65535);
  });

  it("a blank SEQUENCE_NAMESPACE falls back to POD_NAMESPACE", () => {
    assert.equal(loadConfig({ ...BASE, POD_NAMESPACE: "fn-ns" }).storeNamespace, "fn-ns");
    assert.equal(
      loadConfig({ ...BASE, SEQUENCE_NAMESPACE: " ", POD_NAMESPACE: "fn-ns" }).storeNamespace,
      "fn-ns",
    );
  });

  it("blank optional settings mean their default", () => {
    const config = loadConfig({
      ...BASE,
      TRACE_PATH: "  ",
      LOG_LEVEL: " ",
      DRIVER_USERS: " ",
      SEQUENCE_STORE: "",
    });
    assert.equal(config.tracePath, undefined);
    assert.equal(config.logLevel, "info");
    assert.deepEqual(config.driverUsers, [...DEFAULT_DRIVER_USERS]);
    assert.equal(config.sequenceStore, "cluster");
  });

  it("SIM_NAME missing or blank serves every Simulation (no simName)", () => {
    for (const env of [{}, { SIM_NAME: "" }, { SIM_NAME: "   " }]) {
      assert.equal(loadConfig(env).simName, undefined);
    }
  });

  it("a bad --port is a ConfigError naming the flag, even when PORT is fine", () => {
    for (const port of ["", "-1", "65536", "80.5", "eighty", "1e3", " 80"]) {
      assert.equal(
        configError({ ...BASE, PORT: "8080" }, { port }),
        `--port must be a port number from 0 to 65535, got "${port}"`,
      );
    }
  });

  it("a bad PORT is a ConfigError naming the variable", () => {
    assert.equal(
      configError({ ...BASE, PORT: "http" }),
      'PORT must be a port number from 0 to 65535, got "http"',
    );
    assert.equal(
      configError({ ...BASE, PORT: "70000" }),
      'PORT must be a port number from 0 to 65535, got "70000"',
    );
  });

  it("an unknown LOG_LEVEL is a ConfigError listing the levels", () => {
    assert.equal(
      configError({ ...BASE, LOG_LEVEL: "verbose" }),
      'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got "verbose"',
    );
  });

  it("an unknown LOG_FORMAT is a ConfigError listing the formats", () => {
    assert.equal(
      configError({ ...BASE, LOG_FORMAT: "logfmt" }),
      'LOG_FORMAT must be one of json, gcp, pino; got "logfmt"',
    );
  });

  it("an unknown SEQUENCE_STORE is a ConfigError", () => {
    assert.equal(
      configError({ ...BASE, SEQUENCE_STORE: "etcd" }),
      'SEQUENCE_STORE must be "cluster" or "memory", got "etcd"',
    );
  });
});

const SIM: Env = { SIM_NAME: "s" };
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

describe("loadConfig: a setting that turns a check on fails closed when blank", () => {
  it("WEBHOOK_PATH_SECRET, TLS_CERT_FILE, TLS_KEY_FILE and CLIENT_CA_FILE set but blank are ConfigErrors naming them", () => {
    const tls = { TLS_CERT_FILE: "c.pem", TLS_KEY_FILE: "k.pem" };
    const cases: [Env, string][] = [
      [{ ...SIM, WEBHOOK_PATH_SECRET: "" }, "WEBHOOK_PATH_SECRET"],
      [{ ...SIM, WEBHOOK_PATH_SECRET: " \n\t" }, "WEBHOOK_PATH_SECRET"],
      [{ ...SIM, TLS_CERT_FILE: " ", TLS_KEY_FILE: "k.pem" }, "TLS_CERT_FILE"],
      [{ ...SIM, TLS_CERT_FILE: "", TLS_KEY_FILE: "" }, "TLS_CERT_FILE"],
      [{ ...SIM, TLS_CERT_FILE: "c.pem", TLS_KEY_FILE: "  " }, "TLS_KEY_FILE"],
      [{ ...SIM, ...tls, CLIENT_CA_FILE: "" }, "CLIENT_CA_FILE"],
      [{ ...SIM, CLIENT_CA_FILE: " " }, "CLIENT_CA_FILE"],
    ];
    for (const [env, name] of cases) {
      assert.equal(
        configError(env),
        `${name} is set but empty; unset it to turn it off`,
        JSON.stringify(env),
      );
    }
  });

  it("--tls-cert and --tls-key given but blank are ConfigErrors naming the flag", () => {
    for (const [flags, name] of [
      [{ tlsCert: "", tlsKey: "" }, "--tls-cert"],
      [{ tlsCert: "c.pem", tlsKey: " " }, "--tls-key"],
    ] as const) {
      assert.throws(
        () => loadConfig(SIM, flags),
        new ConfigError(`${name} is set but empty; unset it to turn it off`),
      );
    }
  });

  it("WEBHOOK_PATH_SECRET_FILE that was never read is a ConfigError, not an open door", () => {
    assert.throws(
      () => loadConfig({ ...SIM, WEBHOOK_PATH_SECRET_FILE: "/var/openfaas/secrets/path-secret" }),
      /WEBHOOK_PATH_SECRET_FILE was not read/,
    );
  });

  it("DRIVER_USERS that names nobody is a ConfigError; blank still means SimKube's default", () => {
    assert.equal(configError({ ...SIM, DRIVER_USERS: " , ," }), 'DRIVER_USERS names no user: " , ,"');
    assert.deepEqual(loadConfig({ ...SIM, DRIVER_USERS: "" }).driverUsers, [...DEFAULT_DRIVER_USERS]);
  });
});

describe("loadConfig: how Simulations' traces are loaded (issue 35)", () => {
  it("unset: the trace cache's defaults; each variable sets its own field", () => {
    assert.equal(loadConfig(SIM).traceLoads, undefined);
    assert.deepEqual(
      loadConfig({
        ...SIM,
        TRACE_LOAD_TIMEOUT_SECONDS: "8",
        TRACE_FAILURE_CACHE_SECONDS: "3",
        TRACE_CONCURRENT_LOADS: "4",
      }).traceLoads,
      { loadTimeoutMs: 8000, failureCacheMs: 3000, maxConcurrentLoads: 4 },
    );
    assert.deepEqual(loadConfig({ ...SIM, TRACE_CONCURRENT_LOADS: "1" }).traceLoads, {
      maxConcurrentLoads: 1,
    });
  });

  it("a load deadline as long as the webhook's longest timeout, or not a whole number, is a ConfigError", () => {
    assert.match(
      configError({ ...SIM, TRACE_LOAD_TIMEOUT_SECONDS: "30" }),
      /well below the webhook's timeout/,
    );
    assert.equal(
      configError({ ...SIM, TRACE_CONCURRENT_LOADS: "0" }),
      'TRACE_CONCURRENT_LOADS must be a whole number from 1 up, got "0"',
    );
  });
});

describe("loadConfig: what bounds a trace's memory", () => {
  it("unset: the defaults the memory limit is sized for", () => {
    assert.equal(loadConfig(SIM).traceMemory, undefined);
    assert.deepEqual(TRACE_MEMORY_DEFAULTS, {
      maxTraceBytes: 64 * 1024 * 1024,
      cacheMaxTraces: 16,
      cacheMaxBytes: 64 * 1024 * 1024,
      recheckMs: 30_000,
    });
  });

  it("TRACE_MAX_MIB, TRACE_CACHE_MAX_TRACES, TRACE_CACHE_MAX_MIB, TRACE_RECHECK_SECONDS", () => {
    const env = {
      ...SIM,
      TRACE_MAX_MIB: "16",
      TRACE_CACHE_MAX_TRACES: " 4 ",
      TRACE_CACHE_MAX_MIB: "48",
      TRACE_RECHECK_SECONDS: "5",
    };
    assert.deepEqual(loadConfig(env).traceMemory, {
      maxTraceBytes: 16 * 1024 * 1024,
      cacheMaxTraces: 4,
      cacheMaxBytes: 48 * 1024 * 1024,
      recheckMs: 5000,
    });
  });

  it("a cap above the cache's default raises the cache's bytes with it", () => {
    assert.equal(loadConfig({ ...SIM, TRACE_MAX_MIB: "128" }).traceMemory?.cacheMaxBytes, 128 * 1024 * 1024);
  });

  it("a value that is not a whole number from 1, or a cache smaller than one trace at the cap, is a ConfigError", () => {
    for (const [name, value] of [
      ["TRACE_MAX_MIB", "0"],
      ["TRACE_MAX_MIB", "64Mi"],
      ["TRACE_CACHE_MAX_TRACES", "-1"],
      ["TRACE_RECHECK_SECONDS", "1.5"],
    ] as const) {
      assert.equal(
        configError({ ...SIM, [name]: value }),
        `${name} must be a whole number from 1 up, got "${value}"`,
      );
    }
    assert.match(
      configError({ ...SIM, TRACE_MAX_MIB: "64", TRACE_CACHE_MAX_MIB: "32" }),
      /^TRACE_CACHE_MAX_MIB \(32\) must be at least TRACE_MAX_MIB \(64\)/,
    );
  });
});

describe("MAX_CONNECTIONS (the server's connection cap)", () => {
  it("unset leaves the server's default; a whole number from 1 sets it; anything else is a ConfigError", () => {
    assert.equal(loadConfig(BASE).maxConnections, undefined);
    assert.equal(loadConfig({ ...BASE, MAX_CONNECTIONS: " 250 " }).maxConnections, 250);
    for (const value of ["0", "-5", "many", "1.5"]) {
      assert.equal(
        configError({ ...BASE, MAX_CONNECTIONS: value }),
        `MAX_CONNECTIONS must be a whole number from 1 up, got "${value}"`,
      );
    }
  });
});

describe("CLIENT_CERT_SUBJECTS (client certificates pinned to the API server's identity)", () => {
  const TLS = { ...BASE, TLS_CERT_FILE: "/c.crt", TLS_KEY_FILE: "/c.key", CLIENT_CA_FILE: "/ca.crt" };

  it("names subject CNs and DNS/URI SANs, a bare name being a CN", () => {
    const config = loadConfig({
      ...TLS,
      CLIENT_CERT_SUBJECTS: "kube-apiserver, CN=apiserver-webhook ,DNS:api.example.com,URI:spiffe://c/ns/x",
    });
    assert.deepEqual(config.tls?.clientCertSubjects, [
      { kind: "CN", value: "kube-apiserver" },
      { kind: "CN", value: "apiserver-webhook" },
      { kind: "DNS", value: "api.example.com" },
      { kind: "URI", value: "spiffe://c/ns/x" },
    ]);
    assert.equal(loadConfig(TLS).tls?.clientCertSubjects, undefined);
    assert.deepEqual(
      loadConfig({ ...TLS, CLIENT_CERT_SUBJECTS: "system:kube-apiserver" }).tls?.clientCertSubjects,
      [{ kind: "CN", value: "system:kube-apiserver" }],
    );
  });

  it("needs CLIENT_CA_FILE, and a blank or empty list is a ConfigError, never 'any'", () => {
    const { CLIENT_CA_FILE: _ca, ...noCa } = TLS;
    assert.match(configError({ ...noCa, CLIENT_CERT_SUBJECTS: "kube-apiserver" }), /needs CLIENT_CA_FILE/);
    assert.match(configError({ ...TLS, CLIENT_CERT_SUBJECTS: " " }), /set but empty/);
    assert.match(configError({ ...TLS, CLIENT_CERT_SUBJECTS: ",," }), /names no subject/);
    assert.match(configError({ ...TLS, CLIENT_CERT_SUBJECTS: "IP:10.0.0.1" }), /CN=, DNS: or URI:/);
    assert.match(configError({ ...TLS, CLIENT_CERT_SUBJECTS: "DNS:" }), /CN=, DNS: or URI:/);
    assert.match(configError({ ...TLS, CLIENT_CERT_SUBJECTS: "O=system:masters" }), /CN=, DNS: or URI:/);
  });
});

describe("loadConfig: RESCHEDULE_SERVED (whether the deployment has reschedule-delete's DELETE webhook)", () => {
  it("true or false, trimmed; unset or blank: not known", () => {
    assert.equal(loadConfig({ ...BASE, RESCHEDULE_SERVED: " false " }).rescheduleServed, false);
    assert.equal(loadConfig({ ...BASE, RESCHEDULE_SERVED: "true" }).rescheduleServed, true);
    assert.equal(loadConfig(BASE).rescheduleServed, undefined);
    assert.equal(loadConfig({ ...BASE, RESCHEDULE_SERVED: " " }).rescheduleServed, undefined);
  });

  it("anything else is a ConfigError naming it", () => {
    assert.match(
      configError({ ...BASE, RESCHEDULE_SERVED: "no" }),
      /RESCHEDULE_SERVED must be true or false, got "no"/,
    );
  });
});
