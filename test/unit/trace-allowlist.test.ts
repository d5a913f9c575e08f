// The deployment's trace allowlist (shared/trace/allowlist.ts): what a Simulation's tracePath may name.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../shared/config/config.js";
import {
  type AllowedLocation,
  deploymentTraceCheck,
  isAllowedLocation,
  parseAllowedLocation,
} from "../../shared/trace/allowlist.js";

function allowlist(...entries: string[]): AllowedLocation[] {
  return entries.map((entry) => {
    const parsed = parseAllowedLocation(entry);
    assert.ok(typeof parsed === "object", String(parsed));
    return parsed;
  });
}

describe("trace allowlist", () => {
  it("allows an exact entry, or what is under an entry ending in /", () => {
    const allowed = allowlist(
      "https://traces.example.com/sims/",
      "/var/traces/",
      "s3://bucket/sims/",
      "http://10.0.0.5:8080/one.sktrace",
    );
    for (const location of [
      "https://traces.example.com/sims/a.sktrace",
      "https://traces.example.com:443/sims/a.sktrace?X-Amz-Signature=abc",
      "/var/traces/a.sktrace",
      "file:///var/traces/deep/a.sktrace",
      "s3://bucket/sims/a.sktrace",
      "s3a://bucket/sims/a.sktrace",
      "http://10.0.0.5:8080/one.sktrace",
    ]) {
      assert.ok(isAllowedLocation(allowed, location), location);
    }
    for (const location of [
      "https://traces.example.com/other.sktrace",
      "https://traces.example.com.evil.net/sims/a.sktrace",
      "http://traces.example.com/sims/a.sktrace",
      "https://traces.example.com/sims/..%2fsecret",
      "https://traces.example.com/sims/%2e%2e/secret",
      "https://traces.example.com/sims/../secret",
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.5:8081/one.sktrace",
      "http://10.0.0.5:8080/one.sktrace/more",
      "/var/traces/../../etc/passwd",
      "/var/traces-other/a.sktrace",
      "var/traces/a.sktrace",
      "file:///etc/passwd",
      "s3://bucket/other/a.sktrace",
      "s3://other-bucket/sims/a.sktrace",
      "gs://bucket/sims/a.sktrace",
      "ftp://traces.example.com/sims/a.sktrace",
    ]) {
      assert.ok(!isAllowedLocation(allowed, location), location);
    }
  });

  it("nothing is allowed by default; TRACE_PATH is, exactly", () => {
    assert.equal(deploymentTraceCheck()("https://t.example.com/a.sktrace"), false);
    const check = deploymentTraceCheck([], "https://t.example.com/a.sktrace?sig=1");
    assert.equal(check("https://t.example.com/a.sktrace?sig=2"), true);
    assert.equal(check("https://t.example.com/b.sktrace"), false);
  });

  it("TRACE_ALLOWED_LOCATIONS (comma-separated) and --allow-trace-location (replaces it) are checked", () => {
    const config = loadConfig({ TRACE_ALLOWED_LOCATIONS: " https://a.example/x/ , /t/ ," });
    assert.deepEqual(
      config.traceAllowlist?.map((a) => a.text),
      ["https://a.example/x/", "/t/"],
    );
    const flagged = loadConfig(
      { TRACE_ALLOWED_LOCATIONS: "https://a.example/x/" },
      { allowTraceLocations: ["s3://b/"] },
    );
    assert.deepEqual(
      flagged.traceAllowlist?.map((a) => a.text),
      ["s3://b/"],
    );
    assert.equal(loadConfig({}).traceAllowlist, undefined);
    for (const [env, flags, message] of [
      [
        { TRACE_ALLOWED_LOCATIONS: "relative/dir/" },
        {},
        /^TRACE_ALLOWED_LOCATIONS: "relative\/dir\/": a file path must be absolute/,
      ],
      [{}, { allowTraceLocations: ["https://a.example/x?sig=1"] }, /^--allow-trace-location: .*no query/],
      [{ TRACE_ALLOWED_LOCATIONS: "ftp://a/" }, {}, /unsupported scheme "ftp"/],
    ] as const) {
      assert.throws(
        () => loadConfig(env, flags),
        (err: Error) => err instanceof ConfigError && message.test(err.message),
      );
    }
  });

  it("refuses object keys with encoded separators or dot segments, for s3, gs and azure alike (issue 35)", () => {
    const allowed = allowlist("s3://bucket/sims/", "gs://bucket/sims/", "azure://container/sims/");
    for (const scheme of ["s3", "s3a", "gs", "azure", "az"]) {
      const bucket = scheme.startsWith("az") ? "container" : "bucket";
      const base = `${scheme}://${bucket}/sims`;
      assert.ok(isAllowedLocation(allowed, `${base}/a.sktrace`), `${base}/a.sktrace`);
      assert.ok(isAllowedLocation(allowed, `${base}/a%20b.sktrace`), "an encoded space is a plain name");
      for (const key of [
        "..%2Fother%2Fsecret.sktrace",
        "%2e%2e/other/secret.sktrace",
        "../other/secret.sktrace",
        "a/../../other/secret.sktrace",
        "./a.sktrace",
        "a%2Fb.sktrace",
        "a%2fb.sktrace",
        "a%5Cb.sktrace",
        "..%5Cother%5Csecret.sktrace",
        "%2E/a.sktrace",
      ]) {
        assert.ok(!isAllowedLocation(allowed, `${base}/${key}`), `${base}/${key}`);
      }
    }
    for (const entry of ["s3://bucket/a/../", "azure://container/a%2Fb/"]) {
      assert.equal(typeof parseAllowedLocation(entry), "string", entry);
    }
  });
});
