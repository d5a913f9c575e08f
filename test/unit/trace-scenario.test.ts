// examples/scenario.yaml and the scenario format: what trace a hand-written scenario becomes, and the errors
// a wrong one gets.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { EXAMPLE_SCENARIO, findExampleScenario } from "../../functions/cli/trace/example.js";
import { ScenarioError, scenarioToTrace } from "../../functions/cli/trace/scenario.js";
import { encodeTrace } from "../../functions/cli/trace/trace-writer.js";
import { findCompletionTime } from "../../functions/mutate-create/lifecycle-plan.js";
import { hashJson, podSpecHash } from "../../shared/hash/pod-hash.js";
import { parseTrace } from "../../shared/trace/reader.js";
import { getPodLifecycles } from "../../shared/trace/tables.js";
import { finished, running } from "../support/trace-builder.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const START = Date.parse("2026-01-05T09:00:00Z") / 1000;

function exampleText(): string {
  return readFileSync(path.join(REPO, EXAMPLE_SCENARIO), "utf8");
}

describe("examples/scenario.yaml", () => {
  const trace = scenarioToTrace(exampleText(), EXAMPLE_SCENARIO);

  it("has one event per creation time, and the interrupted pod's deletion", () => {
    assert.deepEqual(
      trace.events.map((e) => [
        e.ts - START,
        e.appliedObjs.map((o) => `${o.kind} ${o.metadata?.name}`),
        e.deletedObjs.map((o) => o.metadata?.name),
      ]),
      [
        [0, ["Pod nightly-report", "Deployment web"], []],
        [30, ["Pod db-migration"], []],
        [60, ["Pod cache-warmer"], []],
        [90, ["Pod log-shipper"], []],
        [150, [], ["cache-warmer"]],
      ],
    );
  });

  it("indexes every object under the hash of its spec, as SimKube's tracer does", () => {
    const pod = trace.events[0]?.appliedObjs[0];
    assert.equal(trace.index.get("v1.Pod")?.size, 4);
    assert.equal(trace.index.get("v1.Pod")?.get("batch/nightly-report"), hashJson(pod?.spec));
    assert.deepEqual([...(trace.index.get("apps/v1.Deployment")?.keys() ?? [])], ["shop/web"]);
  });

  it("files lifecycles under each owner and its pods' spec hash", () => {
    const at = (start: number, end?: number) =>
      end === undefined ? running(START + start) : finished(START + start, START + end);
    const lifecycles = (gvk: string, nsName: string) => [...(getPodLifecycles(trace, gvk, nsName) ?? [])];
    const pod = trace.events[1]?.appliedObjs[0] ?? {};
    assert.deepEqual(lifecycles("v1.Pod", "batch/db-migration"), [
      [podSpecHash({ spec: pod.spec }), [at(35, 95)]],
    ]);
    assert.deepEqual(lifecycles("v1.Pod", "batch/cache-warmer")[0]?.[1], [at(60, 150)]);
    assert.deepEqual(lifecycles("v1.Pod", "ops/log-shipper")[0]?.[1], [at(90)]);
    const web = trace.events[0]?.appliedObjs[1] as { spec: { template: { spec: unknown } } };
    assert.deepEqual(lifecycles("apps/v1.Deployment", "shop/web"), [
      [podSpecHash(web.spec.template), [at(5, 420), at(6), at(425)]],
    ]);
  });

  it("gives mutate-create's lookup the recorded run times", () => {
    const now = new Date("2026-06-01T00:00:00Z");
    const deployment = { apiVersion: "apps/v1", kind: "Deployment", nsName: "shop/web" };
    const first = findCompletionTime(trace, [deployment], "any", 0, 1, now);
    assert.deepEqual(first, {
      found: true,
      completionTime: "2026-06-01T00:06:55+00:00",
      owner: "apps/v1.Deployment:shop/web",
    });
    assert.deepEqual(findCompletionTime(trace, [deployment], "any", 1, 1, now), {
      found: false,
      reason: "no-finished-lifecycle",
    });
  });

  it("encodes to a trace that reads back the same", () => {
    assert.deepEqual(parseTrace(encodeTrace(trace)), trace);
  });

  it("is found from the checkout and from a bundle folder's copy", () => {
    assert.equal(
      findExampleScenario(path.join(REPO, "dist/bundle")),
      path.join(REPO, "dist/bundle", EXAMPLE_SCENARIO),
    );
    assert.equal(findExampleScenario(path.join(REPO, "dist")), path.join(REPO, EXAMPLE_SCENARIO));
    assert.equal(findExampleScenario("/"), undefined);
  });
});

describe("scenario errors name the file, the place and the problem", () => {
  const pod = "  - { name: p, image: busybox, created: 10";
  const cases: Array<[string, string, RegExp]> = [
    ["not YAML", "start: [", /^s\.yaml: not valid YAML: /],
    ["not a mapping", "- 1", /^s\.yaml: expected a mapping, got a list$/],
    [
      "a misspelt field",
      `start: "2026-01-01T00:00:00Z"\npods:\n${pod}, finshed: 20 }`,
      /pods\[0\]: unknown field "finshed"/,
    ],
    ["no start", `pods:\n${pod} }`, /start: expected an RFC 3339 time/],
    ["a bad start", `start: yesterday\npods: []`, /start: expected an RFC 3339 time .* got "yesterday"/],
    [
      "finished and interrupted",
      `start: "2026-01-01T00:00:00Z"\npods:\n${pod}, finished: 20, interrupted: 15 }`,
      /pods\[0\]: a pod is either finished or interrupted, not both/,
    ],
    [
      "an end before the start",
      `start: "2026-01-01T00:00:00Z"\npods:\n${pod}, finished: 5 }`,
      /pods\[0\]: must not end before it started/,
    ],
    [
      "started before created",
      `start: "2026-01-01T00:00:00Z"\npods:\n${pod}, started: 5 }`,
      /pods\[0\]\.started: must not be before created/,
    ],
    [
      "a negative time",
      `start: "2026-01-01T00:00:00Z"\npods:\n  - { name: p, image: x, created: -1 }`,
      /pods\[0\]\.created: expected a whole number >= 0, got -1/,
    ],
    [
      "a bad name",
      `start: "2026-01-01T00:00:00Z"\npods:\n  - { name: My_Pod, image: x }`,
      /pods\[0\]\.name: "My_Pod" is not a valid Kubernetes name/,
    ],
    [
      "no image",
      `start: "2026-01-01T00:00:00Z"\npods:\n  - { name: p }`,
      /pods\[0\]\.image: expected a non-empty string, got nothing/,
    ],
    [
      "image and spec",
      `start: "2026-01-01T00:00:00Z"\npods:\n  - { name: p, image: x, spec: {} }`,
      /pods\[0\]: give either image or spec, not both/,
    ],
    [
      "a duplicate",
      `start: "2026-01-01T00:00:00Z"\npods:\n  - { name: p, image: x }\n  - { name: p, image: y }`,
      /v1\.Pod default\/p appears twice/,
    ],
    [
      "zero replicas",
      `start: "2026-01-01T00:00:00Z"\ndeployments:\n  - { name: d, image: x, replicas: 0 }`,
      /deployments\[0\]\.replicas: expected a whole number >= 1, got 0/,
    ],
    [
      "a Deployment pod before its Deployment",
      `start: "2026-01-01T00:00:00Z"\ndeployments:\n  - { name: d, image: x, created: 10, pods: [{ started: 3 }] }`,
      /deployments\[0\]\.pods\[0\]\.started: must not be before the Deployment's created/,
    ],
  ];
  for (const [name, text, message] of cases) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => scenarioToTrace(text, "s.yaml"),
        (err: unknown) => {
          assert.ok(err instanceof ScenarioError, String(err));
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }

  it("takes a full pod spec and labels when given", () => {
    const trace = scenarioToTrace(
      `start: "2026-01-01T00:00:00Z"\npods:\n  - name: p\n    labels: { tier: db }\n    spec: { containers: [{ name: c, image: x }], restartPolicy: Never }`,
      "s.yaml",
    );
    assert.deepEqual(trace.events[0]?.appliedObjs[0], {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default", labels: { tier: "db" } },
      spec: { containers: [{ name: "c", image: "x" }], restartPolicy: "Never" },
    });
  });
});
