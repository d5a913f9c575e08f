// `trace inspect` and `trace lookup`, pure parts: the summary's counts, the table, and the lifecycle a pod
// gets with the reasons, which must agree with mutate-create's own lookup.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { formatInspect, MAX_OWNER_ROWS, summarizeTrace } from "../../functions/cli/trace/inspect.js";
import { describeLifecycle, explainLookup, LookupError } from "../../functions/cli/trace/lookup.js";
import { lookupPodLifecycle } from "../../shared/trace/lifecycle.js";
import { parseTrace } from "../../shared/trace/reader.js";
import { buildTrace, empty, findSharedTrace, finished, running } from "../support/trace-builder.js";

const generated = buildTrace({
  config: { trackedObjects: { "apps/v1.Deployment": { trackLifecycle: true } } },
  events: [
    {
      ts: 1000,
      applied: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "ns" } }],
    },
    {
      ts: 1060,
      deleted: [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "ns" } }],
    },
  ],
  index: { "apps/v1.Deployment": ["ns/web", "ns/idle"], "example.com/v1.Widget": ["ns/w"] },
  podLifecycles: [
    {
      gvk: "apps/v1.Deployment",
      nsName: "ns/web",
      hash: "11",
      lifecycles: [finished(1000, 1030), running(1001)],
    },
    { gvk: "apps/v1.Deployment", nsName: "ns/web", hash: "12", lifecycles: [finished(1002, 1003)] },
    {
      gvk: "example.com/v1.Widget",
      nsName: "ns/w",
      hash: "18446744073709551615",
      lifecycles: [empty(), finished(5, 9)],
    },
  ],
});

describe("summarizeTrace", () => {
  it("counts a generated trace", () => {
    const { summary, owners } = summarizeTrace(generated);
    assert.deepEqual(
      {
        version: summary.version,
        events: summary.events,
        applied: summary.appliedObjects,
        deleted: summary.deletedObjects,
        span: [summary.startTs, summary.endTs, summary.durationSeconds],
        indexObjects: summary.indexObjects,
        owners: summary.owners,
        hashes: summary.hashes,
        lifecycles: summary.lifecycles,
        kinds: [summary.finished, summary.running, summary.empty],
      },
      {
        version: 2,
        events: 2,
        applied: 1,
        deleted: 1,
        span: [1000, 1060, 60],
        indexObjects: 3,
        owners: 2,
        hashes: 3,
        lifecycles: 5,
        kinds: [3, 1, 1],
      },
    );
    assert.deepEqual(owners[0], {
      owner: "apps/v1.Deployment ns/web",
      hashes: 2,
      lifecycles: 3,
      finished: 2,
      running: 1,
      empty: 0,
    });
  });

  it("counts SimKube's own traces", (t) => {
    const expected: Record<string, [number, number, number, number, number, number]> = {
      // events, index objects, owners, lifecycles, finished, running
      "bare-pods.sktrace": [4, 16, 4, 4, 3, 1],
      "cronjob.sktrace": [3, 1, 1, 3, 3, 0],
      "dsb-scaling.sktrace": [19, 27, 0, 0, 0, 0],
    };
    for (const [name, counts] of Object.entries(expected)) {
      const path = findSharedTrace(name);
      if (!path) {
        t.skip(`shared trace ${name} not found`);
        continue;
      }
      const { summary } = summarizeTrace(parseTrace(readFileSync(path)));
      const { events, indexObjects, owners, lifecycles, finished: f, running: r } = summary;
      assert.deepEqual([events, indexObjects, owners, lifecycles, f, r], counts, name);
    }
  });

  it("handles a trace without events", () => {
    const { summary } = summarizeTrace(buildTrace({}));
    assert.deepEqual([summary.startTs, summary.endTs, summary.durationSeconds], [null, null, 0]);
    assert.match(formatInspect("t", summary, []).join("\n"), /time span +no events/);
  });
});

describe("formatInspect", () => {
  it("prints the header and one row per owner", () => {
    const { summary, owners } = summarizeTrace(generated);
    const lines = formatInspect("demo.sktrace", summary, owners);
    assert.equal(lines[0], "trace          demo.sktrace");
    assert.ok(lines.includes("time span      1970-01-01T00:16:40Z .. 1970-01-01T00:17:40Z (60 s)"));
    assert.ok(lines.includes("tracked kinds  apps/v1.Deployment (lifecycles)"));
    assert.ok(lines.includes("index          3 object(s): apps/v1.Deployment 2, example.com/v1.Widget 1"));
    assert.ok(lines.some((l) => /^apps\/v1\.Deployment ns\/web +2 +3 +2 +1$/.test(l)));
  });

  it(`prints at most ${MAX_OWNER_ROWS} owners and counts the rest`, () => {
    const many = buildTrace({
      podLifecycles: Array.from({ length: MAX_OWNER_ROWS + 7 }, (_, i) => ({
        gvk: "v1.Pod",
        nsName: `ns/p${i}`,
        hash: i,
        lifecycles: [finished(0, 1)],
      })),
    });
    const { summary, owners } = summarizeTrace(many);
    const lines = formatInspect("many", summary, owners);
    assert.equal(lines.filter((l) => l.startsWith("v1.Pod ns/p")).length, MAX_OWNER_ROWS);
    assert.equal(lines.at(-1), "... and 7 more owner(s)");
  });
});

describe("explainLookup", () => {
  it("uses mutate-create's choice for every sequence number", () => {
    for (let seq = 0; seq < 5; seq++) {
      for (const hash of [undefined, "11", "12", "99"]) {
        const answer = explainLookup(generated, {
          owner: "Deployment/ns/web",
          seq,
          ...(hash ? { hash } : {}),
        });
        assert.deepEqual(
          answer.lifecycle,
          lookupPodLifecycle(generated, "apps/v1.Deployment", "ns/web", hash ?? "", seq),
        );
      }
    }
  });

  it("says why: index, kind, hashes, the list chosen and the entry", () => {
    const answer = explainLookup(generated, { owner: "apps/v1.Deployment/ns/web", seq: 3, hash: "12" });
    assert.equal(answer.gvk, "apps/v1.Deployment");
    assert.deepEqual(answer.reasons, [
      "apps/v1.Deployment ns/web is in the trace's index",
      "apps/v1.Deployment is a built-in owner kind: its lifecycles apply whatever the pod's spec hash",
      "hashes: 11 (2 lifecycle(s)), 12 (1 lifecycle(s))",
      "hash 12 is the pod's own",
      "pod sequence number 3: entry 3 mod 1 = 0",
    ]);
    assert.deepEqual(answer.lifecycle, finished(1002, 1003));
    const first = explainLookup(generated, { owner: "deployment/ns/web", seq: 1 });
    assert.equal(first.reasons[3], "hash 11: the first in file order (no --hash given)");
    assert.deepEqual(first.lifecycle, running(1001));
  });

  it("needs the pod's own hash for a custom kind", () => {
    const none = explainLookup(generated, { owner: "Widget/ns/w", seq: 0 });
    assert.deepEqual(none.lifecycle, { kind: "Empty" });
    assert.match(
      none.reasons.join("\n"),
      /not a built-in owner kind[\s\S]*no --hash given: the pod gets no lifecycle/,
    );
    const other = explainLookup(generated, { owner: "Widget/ns/w", seq: 0, hash: "1" });
    assert.match(other.reasons.at(-1) ?? "", /no lifecycles under hash 1/);
    const own = explainLookup(generated, { owner: "Widget/ns/w", seq: 1, hash: "18446744073709551615" });
    assert.deepEqual(own.lifecycle, finished(5, 9));
  });

  it("skips owners outside the index, as mutate-create does, and says when an owner has no lifecycles", () => {
    const outside = explainLookup(generated, { owner: "Deployment/ns/gone", seq: 0 });
    assert.deepEqual(outside.reasons, [
      "apps/v1.Deployment ns/gone is not in the trace's index: mutate-create skips this owner",
    ]);
    const idle = explainLookup(generated, { owner: "Deployment/ns/idle", seq: 0 });
    assert.equal(idle.reasons.at(-1), "the trace has no lifecycles for this owner");
  });

  it("rejects a malformed owner and a kind the trace does not have", () => {
    const cases: Array<[string, RegExp]> = [
      ["web", /--owner must be KIND\/NAMESPACE\/NAME/],
      ["Deployment/web", /--owner must be KIND\/NAMESPACE\/NAME/],
      [
        "CronJob/ns/x",
        /no objects of kind CronJob \(kinds: apps\/v1\.Deployment, example\.com\/v1\.Widget\)/,
      ],
      ["a/b/c.D/ns/x", /invalid GVK/],
    ];
    for (const [owner, message] of cases) {
      assert.throws(
        () => explainLookup(generated, { owner, seq: 0 }),
        (err: unknown) => {
          assert.ok(err instanceof LookupError, String(err));
          assert.match(err.message, message);
          return true;
        },
      );
    }
    const twoKinds = buildTrace({ index: { "apps/v1.Widget": ["ns/a"], "example.com/v1.Widget": ["ns/a"] } });
    assert.throws(
      () => explainLookup(twoKinds, { owner: "Widget/ns/a", seq: 0 }),
      /ambiguous here: use one of/,
    );
  });

  it("describes each lifecycle for the user", () => {
    assert.match(describeLifecycle(finished(10, 70)), /completion time 60 s after it runs/);
    assert.match(describeLifecycle(running(10)), /still running when the trace ended/);
    assert.match(describeLifecycle(empty()), /no recorded lifecycle/);
  });
});
