import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseTeardownArgs } from "../../functions/cli/loadtest/command.js";
import {
  checkAnswer,
  type LoadResult,
  percentile,
  statsUrl,
  validateTarget,
} from "../../functions/cli/loadtest/load.js";
import {
  buildReport,
  clonesBetween,
  formatReport,
  reportPassed,
  summarizeLatency,
} from "../../functions/cli/loadtest/report.js";

function review(response: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });
}

describe("checkAnswer", () => {
  const cases: { name: string; status: number; body: string; allowPatch?: boolean; error?: string }[] = [
    { name: "allowed, uid echoed", status: 200, body: review({ uid: "u1", allowed: true }) },
    { name: "HTTP 500", status: 500, body: '{"message":"internal error"}', error: "http-status" },
    { name: "HTTP 413", status: 413, body: "{}", error: "http-status" },
    { name: "not JSON", status: 200, body: "<html>", error: "not-a-review" },
    { name: "JSON but no response", status: 200, body: '{"kind":"AdmissionReview"}', error: "not-a-review" },
    { name: "wrong kind", status: 200, body: '{"kind":"Status","response":{}}', error: "not-a-review" },
    {
      name: "uid not echoed",
      status: 200,
      body: review({ uid: "other", allowed: true }),
      error: "uid-mismatch",
    },
    { name: "denied", status: 200, body: review({ uid: "u1", allowed: false }), error: "not-allowed" },
    {
      name: "allowed as a string",
      status: 200,
      body: review({ uid: "u1", allowed: "true" }),
      error: "not-allowed",
    },
    {
      name: "a patch on DELETE",
      status: 200,
      body: review({ uid: "u1", allowed: true, patchType: "JSONPatch", patch: "W10=" }),
      error: "patch",
    },
    {
      name: "a patch where patches are fine (CREATE)",
      status: 200,
      body: review({ uid: "u1", allowed: true, patchType: "JSONPatch", patch: "W10=" }),
      allowPatch: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const checked = checkAnswer(c.status, c.body, "u1", { allowPatch: c.allowPatch ?? false });
      assert.equal(checked.error, c.error);
      if (c.error) assert.ok(checked.detail);
    });
  }
});

describe("percentile", () => {
  it("uses the nearest rank of an ascending array", () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(sorted, 50), 50);
    assert.equal(percentile(sorted, 95), 95);
    assert.equal(percentile(sorted, 99), 99);
    assert.equal(percentile(sorted, 100), 100);
    assert.equal(percentile(sorted, 0), 1);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it("summarizes latencies", () => {
    assert.deepEqual(summarizeLatency([1, 2, 3, 4]), { p50: 2, p95: 4, p99: 4, max: 4, mean: 2.5 });
  });
});

describe("targets", () => {
  it("accepts http and https, refuses the rest", () => {
    assert.ok(validateTarget("http://127.0.0.1:8080/") instanceof URL);
    assert.ok(validateTarget("https://fn.example.com/") instanceof URL);
    assert.equal(typeof validateTarget("ftp://x/"), "string");
    assert.equal(typeof validateTarget("not a url"), "string");
  });

  it("finds /stats next to the target, behind a gateway's path prefix too", () => {
    assert.equal(statsUrl(new URL("http://127.0.0.1:8080")).href, "http://127.0.0.1:8080/stats");
    assert.equal(statsUrl(new URL("http://127.0.0.1:8080/?x=1")).href, "http://127.0.0.1:8080/stats");
    assert.equal(
      statsUrl(new URL("http://gw:8080/function/reschedule-delete")).href,
      "http://gw:8080/function/reschedule-delete/stats",
    );
  });
});

function loadResult(overrides: Partial<LoadResult> = {}): LoadResult {
  return {
    total: 4,
    sent: 4,
    ok: 4,
    errors: 0,
    errorsByKind: {},
    errorSamples: [],
    latenciesMs: Float64Array.from([1, 2, 3, 10]),
    durationMs: 2000,
    timedOut: false,
    ...overrides,
  };
}

describe("report", () => {
  it("computes throughput, percentiles, clones and RSS from the stats before and after", () => {
    const report = buildReport({
      target: "http://127.0.0.1:1/",
      concurrency: 2,
      result: loadResult(),
      statsBefore: { clones: { created: 3, alreadyExisted: 0, failed: 0 }, rssBytes: 1 },
      statsAfter: { clones: { created: 3, alreadyExisted: 1, failed: 0 }, rssBytes: 50 * 1024 * 1024 },
      expectedClones: 0,
    });
    assert.equal(report.throughput, 2);
    assert.equal(report.latencyMs.p99, 10);
    assert.equal(report.clonesCreated, 0);
    assert.equal(report.serverRssBytes, 50 * 1024 * 1024);
    assert.ok(reportPassed(report));
    assert.match(formatReport(report), /throughput\s+2 reviews\/s/);
    assert.match(formatReport(report), /server RSS\s+50\.0 MiB/);
    assert.match(formatReport(report), /PASS/);
  });

  it("fails on any error, on a stopped run, and on unexpected clones", () => {
    const base = { target: "t", concurrency: 1, expectedClones: 0 };
    assert.ok(!reportPassed(buildReport({ ...base, result: loadResult({ ok: 3, errors: 1 }) })));
    assert.ok(!reportPassed(buildReport({ ...base, result: loadResult({ sent: 3, timedOut: true }) })));
    const cloned = buildReport({
      ...base,
      result: loadResult(),
      statsBefore: { rssBytes: 1 },
      statsAfter: { "clone:created": 2, rssBytes: 1 },
    });
    assert.equal(cloned.clonesCreated, 2);
    assert.ok(!reportPassed(cloned));
    assert.match(formatReport(cloned), /FAIL/);
  });

  it("allows fewer clones than interruptions (only existing pods are cloned), never more", () => {
    const base = { target: "t", concurrency: 1, expectedClones: 3, result: loadResult() };
    const clones = (created: number) => ({ clones: { created } });
    assert.ok(reportPassed(buildReport({ ...base, statsBefore: clones(0), statsAfter: clones(3) })));
    assert.ok(reportPassed(buildReport({ ...base, statsBefore: clones(0), statsAfter: clones(0) })));
    assert.ok(!reportPassed(buildReport({ ...base, statsBefore: clones(0), statsAfter: clones(4) })));
  });

  it("says unknown when /stats is absent or has no clone counter", () => {
    assert.equal(clonesBetween(undefined, undefined), "unknown");
    assert.equal(clonesBetween({ "clone:created": 1 }, undefined), "unknown");
    assert.equal(clonesBetween({ rssBytes: 1 }, { rssBytes: 2 }), "unknown");
    const report = buildReport({ target: "t", concurrency: 1, expectedClones: 0, result: loadResult() });
    assert.equal(report.serverRssBytes, "unknown");
    assert.equal(report.clonesCreated, "unknown");
    assert.ok(reportPassed(report));
  });
});

describe("parseTeardownArgs", () => {
  it("applies defaults", () => {
    const args = parseTeardownArgs(["teardown", "--target", "http://127.0.0.1:8080/"]);
    assert.equal(args.reviews, 1000);
    assert.equal(args.concurrency, 32);
    assert.equal(args.timeoutMs, 120_000);
    assert.equal(args.interruptions, 0);
    assert.equal(args.rootName, "sk-loadtest-driver-00000-root");
    assert.equal(args.json, false);
  });

  it("reads every flag", () => {
    const args = parseTeardownArgs([
      "teardown",
      "--target=https://fn.example.com/",
      "--reviews=5000",
      "--concurrency=64",
      "--timeout=30",
      "--interruptions=0.1",
      "--sim=my-sim",
      "--namespaces=a, b",
      "--json",
    ]);
    assert.equal(args.target.href, "https://fn.example.com/");
    assert.equal(args.reviews, 5000);
    assert.equal(args.concurrency, 64);
    assert.equal(args.timeoutMs, 30_000);
    assert.equal(args.interruptions, 0.1);
    assert.equal(args.rootName, "sk-my-sim-driver-00000-root");
    assert.deepEqual(args.namespaces, ["a", "b"]);
    assert.equal(args.json, true);
  });

  const bad: [string, string[]][] = [
    ["no scenario", ["--target", "http://x/"]],
    ["unknown scenario", ["burst", "--target", "http://x/"]],
    ["no target", ["teardown"]],
    ["not http", ["teardown", "--target", "file:///etc/passwd"]],
    ["zero reviews", ["teardown", "--target", "http://x/", "--reviews", "0"]],
    ["fractional concurrency", ["teardown", "--target", "http://x/", "--concurrency", "1.5"]],
    ["interruptions above 1", ["teardown", "--target", "http://x/", "--interruptions", "2"]],
    ["negative timeout", ["teardown", "--target", "http://x/", "--timeout", "-1"]],
  ];
  for (const [name, argv] of bad) {
    it(`refuses ${name}`, () => assert.throws(() => parseTeardownArgs(argv)));
  }
});
