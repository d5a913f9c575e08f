// GET /metrics: Prometheus text from prom-client, served next to the review route and outside its path
// secret; reviews timed by outcome; the function's own counters (decisions, skips, clones) mirrored from
// its stats; API errors counted by verb and status.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import request from "supertest";
import { createApp, drainAndClose } from "../../functions/runtime/http-server.js";
import { countingApiErrors, createFunctionMetrics, isSkip } from "../../functions/runtime/metrics.js";
import { startFunction } from "../../functions/runtime/registry.js";
import { allow, deny, parseReview, type ReviewHandler } from "../../shared/admission/review.js";
import { createLogger } from "../../shared/base/log.js";
import { loadConfig } from "../../shared/config/config.js";
import { type KubeApi, KubeError } from "../../shared/kube/api.js";

const SECRET = "0123456789abcdef0123456789abcdef";
const log = createLogger("silent");

/** Allows CREATEs, denies everything else. */
const handler: ReviewHandler = async (body) => {
  const parsed = parseReview(body);
  if (!parsed.ok) throw new Error("test sends only good reviews");
  return parsed.request.operation === "CREATE" ? allow(parsed.request) : deny(parsed.request, "no");
};

const review = (uid: string, operation: string) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid, operation, object: { kind: "Pod" } },
});

/** One sample's value from the exposition text, e.g. value(text, 'x_total{function="f"}'). */
function value(text: string, sample: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

/**
 * The text exposition format's shape: blocks of # HELP, # TYPE, then samples of that family only, one blank
 * line between blocks; no family twice. Returns each family's type.
 */
function exposedFamilies(text: string): Map<string, string> {
  const types = new Map<string, string>();
  assert.ok(text.endsWith("\n") && !text.endsWith("\n\n\n"), "ends in one newline");
  for (const block of text.trimEnd().split("\n\n")) {
    const [help, type, ...samples] = block.split("\n");
    const family = /^# HELP (\w+) \S/.exec(help ?? "")?.[1];
    assert.ok(family, `a block starts with # HELP: ${block.slice(0, 80)}`);
    const typed = new RegExp(`^# TYPE ${family} (counter|gauge|histogram|summary)$`).exec(type ?? "");
    assert.ok(typed, `# TYPE follows # HELP for ${family}`);
    assert.ok(!types.has(family), `${family} once`);
    types.set(family, typed[1] as string);
    for (const sample of samples) {
      assert.match(sample, /^(\w+)(\{(\w+="(?:[^"\\]|\\.)*",?)*\})? \S+$/);
      assert.ok(sample.startsWith(family), `${sample} in ${family}'s block`);
    }
  }
  return types;
}

describe("GET /metrics", () => {
  it("is well-formed text with simkube_fn_build_info and the latency histogram among prom-client's metrics", async () => {
    const metrics = createFunctionMetrics("mutate-create", () => ({}), {
      version: "9.8.7",
      nodeVersion: "v22.0.0",
      commit: "abc1234",
    });
    metrics.collectProcessMetrics();
    metrics.observeReview("patched", 0.003);
    const app = createApp(handler, log, { metrics });
    const res = await request(app).get("/metrics").expect(200);
    const families = exposedFamilies(res.text);
    assert.equal(families.get("simkube_fn_build_info"), "gauge");
    assert.equal(families.get("simkube_fn_admission_duration_seconds"), "histogram");
    assert.equal(families.get("process_cpu_user_seconds_total"), "counter");
    const info =
      'simkube_fn_build_info{function="mutate-create",version="9.8.7",node_version="v22.0.0",commit="abc1234"}';
    assert.equal(value(res.text, info), 1);
    const bucket =
      'simkube_fn_admission_duration_seconds_bucket{le="0.005",function="mutate-create",outcome="patched"}';
    assert.equal(value(res.text, bucket), 1);
    // Without a commit given, the label says so; the version is package.json's, the Node.js the running one.
    const plain = await createFunctionMetrics("mutate-create", () => ({})).exposition();
    assert.match(
      plain,
      /^simkube_fn_build_info\{function="mutate-create",version="\d+\.\d+\.\d+",node_version="v\d+\.\d+\.\d+",commit="unknown"\} 1$/m,
    );
  });

  it("serves Prometheus text with latency by outcome, decisions, skips and clones; not behind the path secret", async () => {
    const stats = {
      reviews: 3,
      decisions: { cloned: 2, "final-phase": 5, "pinned-owner-gone": 1 },
      clones: { created: 2, alreadyExisted: 1, failed: 0 },
    };
    const metrics = createFunctionMetrics("reschedule-delete", () => stats);
    metrics.setColdStart(0.42);
    const app = createApp(handler, log, { pathSecret: SECRET, metrics, stats: () => stats });
    await request(app).post(`/${SECRET}`).send(review("a", "CREATE")).expect(200);
    await request(app).post(`/${SECRET}`).send(review("b", "DELETE")).expect(200);
    await request(app).post(`/${SECRET}`).type("json").send("{not json").expect(400);

    const res = await request(app).get("/metrics").expect(200);
    assert.match(res.headers["content-type"] ?? "", /^text\/plain; version=0\.0\.4/);
    const text = res.text;
    const count = (outcome: string) =>
      value(
        text,
        `simkube_fn_admission_duration_seconds_count{function="reschedule-delete",outcome="${outcome}"}`,
      );
    assert.equal(count("allowed"), 1);
    assert.equal(count("denied"), 1);
    assert.equal(count("error"), 1, "a 400 is timed as an error");
    assert.equal(
      value(text, 'simkube_fn_decisions_total{function="reschedule-delete",decision="final-phase"}'),
      5,
    );
    assert.equal(value(text, 'simkube_fn_skips_total{function="reschedule-delete",reason="final-phase"}'), 5);
    assert.equal(
      value(text, 'simkube_fn_skips_total{function="reschedule-delete",reason="cloned"}'),
      undefined,
    );
    assert.equal(value(text, 'simkube_fn_clones_created_total{function="reschedule-delete"}'), 2);
    assert.equal(value(text, 'simkube_fn_cold_start_seconds{function="reschedule-delete"}'), 0.42);

    stats.clones.created = 3;
    const again = (await request(app).get("/metrics").expect(200)).text;
    assert.equal(
      value(again, 'simkube_fn_clones_created_total{function="reschedule-delete"}'),
      3,
      "read at scrape time",
    );
  });

  it("a patched review is its own outcome", async () => {
    const metrics = createFunctionMetrics("mutate-create", () => ({}));
    const patching: ReviewHandler = async (body) => {
      const parsed = parseReview(body);
      if (!parsed.ok) throw new Error("bad");
      return {
        ...allow(parsed.request),
        response: { uid: parsed.request.uid, allowed: true, patchType: "JSONPatch", patch: "W10=" },
      };
    };
    const app = createApp(patching, log, { metrics });
    await request(app).post("/").send(review("p", "CREATE")).expect(200);
    const text = (await request(app).get("/metrics").expect(200)).text;
    assert.equal(
      value(text, 'simkube_fn_admission_duration_seconds_count{function="mutate-create",outcome="patched"}'),
      1,
    );
  });

  it("counts failed API calls by verb and status, and passes results and errors through", async () => {
    const metrics = createFunctionMetrics("mutate-create", () => ({}));
    const kube: KubeApi = {
      read: async () => {
        throw new KubeError(404, "NotFound", "gone");
      },
      create: async (o) => o,
      replace: async () => {
        throw new Error("socket hang up");
      },
    };
    const counted = countingApiErrors(kube, metrics.registry, "mutate-create");
    await assert.rejects(counted.read({ apiVersion: "v1", kind: "Pod", name: "x" }), KubeError);
    await assert.rejects(counted.replace({ kind: "ConfigMap" }), /socket hang up/);
    assert.deepEqual(await counted.create({ kind: "Pod" }), { kind: "Pod" });
    const text = await metrics.registry.metrics();
    assert.equal(
      value(text, 'simkube_fn_api_errors_total{function="mutate-create",verb="get",status="404"}'),
      1,
    );
    assert.equal(
      value(text, 'simkube_fn_api_errors_total{function="mutate-create",verb="update",status="0"}'),
      1,
    );
    assert.equal(
      value(text, 'simkube_fn_api_errors_total{function="mutate-create",verb="create",status="0"}'),
      undefined,
    );
  });

  it("skips are the decisions that let a pod be: not mutations, clones, pins or denials", () => {
    for (const reason of ["not-in-simulation", "final-phase", "update-without-root"])
      assert.ok(isSkip(reason), reason);
    for (const reason of ["mutated", "cloned", "pinned-owner-gone", "error", "no-object", "malformed"]) {
      assert.ok(!isSkip(reason), reason);
    }
  });

  it("serve wires it: a started function answers GET /metrics with its cold start and process metrics", async () => {
    const config = loadConfig({ SIM_NAME: "s", SEQUENCE_STORE: "memory" }, { port: "0" });
    const kube: KubeApi = {
      read: async () => {
        throw new KubeError(503, "ServiceUnavailable", "down");
      },
      create: async (o) => o,
      replace: async (o) => o,
    };
    const running = await startFunction("reschedule-delete", config, kube, log, "127.0.0.1");
    try {
      const res = await fetch(`http://127.0.0.1:${running.port}/metrics`);
      assert.equal(res.status, 200);
      const text = await res.text();
      const coldStart = value(text, 'simkube_fn_cold_start_seconds{function="reschedule-delete"}');
      assert.ok(
        coldStart !== undefined && coldStart > 0 && coldStart === Math.min(coldStart, process.uptime()),
      );
      assert.match(text, /# TYPE simkube_fn_admission_duration_seconds histogram/);
      // prom-client's process and Node.js metrics, which Node service dashboards expect.
      for (const name of [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "nodejs_eventloop_lag_seconds",
        "nodejs_heap_size_used_bytes",
      ])
        assert.match(text, new RegExp(`^# TYPE ${name} `, "m"), name);
    } finally {
      await drainAndClose(running.server, 1_000, 0);
    }
  });
});
