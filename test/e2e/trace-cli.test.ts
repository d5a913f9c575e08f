// `simkube-fn trace build|inspect|lookup` from the built CLI: files in, one-line errors out.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseTrace } from "../../shared/trace/reader.js";
import { buildTraceBytes, findSharedTrace, finished } from "../support/trace-builder.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(HERE, "../../bundle/simkube-fn.mjs");
const SCENARIO = path.resolve(HERE, "../../../examples/scenario.yaml");

const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-trace-cli-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, "trace", ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function file(name: string, bytes: Uint8Array | string): string {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

describe("trace build", () => {
  it("writes the example scenario as a trace the functions' reader accepts", () => {
    const out = path.join(dir, "example.sktrace");
    const build = cli("build", SCENARIO, "-o", out);
    assert.equal(build.status, 0, build.stderr);
    assert.match(
      build.stdout,
      /^wrote .*example\.sktrace: \d+ bytes, 5 events, 5 objects, 7 lifecycles of 5 owners\n$/,
    );
    const trace = parseTrace(readFileSync(out));
    assert.equal(trace.events.length, 5);
  });

  it("names the scenario and the problem when it is wrong", () => {
    const bad = file(
      "bad.yaml",
      'start: "2026-01-01T00:00:00Z"\npods:\n  - { name: p, image: x, finshed: 3 }\n',
    );
    const build = cli("build", bad, "-o", path.join(dir, "never.sktrace"));
    assert.equal(build.status, 1);
    assert.equal(
      build.stderr,
      `simkube-fn: ${bad}: pods[0]: unknown field "finshed" (expected one of: name, namespace, image, labels, spec, created, started, finished, interrupted)\n`,
    );
    const missing = cli("build", path.join(dir, "nope.yaml"), "-o", path.join(dir, "never.sktrace"));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /^simkube-fn: could not read scenario .*nope\.yaml: ENOENT\n$/);
  });

  it("exits 2 on bad usage", () => {
    const noOutput = cli("build", SCENARIO);
    assert.equal(noOutput.status, 2);
    assert.equal(
      noOutput.stderr,
      "simkube-fn: trace build needs -o FILE.sktrace\nrun 'simkube-fn help trace' for its usage\n",
    );
    assert.equal(cli("frobnicate").status, 2);
    assert.equal(cli("inspect", "--bogus", "x").status, 2);
  });
});

describe("trace inspect", () => {
  const generated = file(
    "generated.sktrace",
    buildTraceBytes({
      events: [{ ts: 100 }, { ts: 160 }],
      index: { "v1.Pod": ["ns/a", "ns/b"] },
      podLifecycles: [{ gvk: "v1.Pod", nsName: "ns/a", hash: "7", lifecycles: [finished(100, 130)] }],
    }),
  );

  it("--json prints one JSON object with the counts", () => {
    const inspect = cli("inspect", generated, "--json");
    assert.equal(inspect.status, 0, inspect.stderr);
    const lines = inspect.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 1);
    const summary = JSON.parse(lines[0] ?? "");
    assert.deepEqual(
      [
        summary.version,
        summary.events,
        summary.indexObjects,
        summary.owners,
        summary.lifecycles,
        summary.durationSeconds,
      ],
      [2, 2, 2, 1, 1, 60],
    );
  });

  it("prints a table", () => {
    const inspect = cli("inspect", generated);
    assert.equal(inspect.status, 0, inspect.stderr);
    assert.match(inspect.stdout, /^version +2$/m);
    assert.match(
      inspect.stdout,
      /^owners +1 with lifecycles: 1 lifecycle\(s\) under 1 pod spec hash\(es\); 1 finished/m,
    );
    assert.match(inspect.stdout, /^v1\.Pod ns\/a +1 +1 +1 +0$/m);
  });

  it("reads SimKube's bare-pods trace", (t) => {
    const trace = findSharedTrace("bare-pods.sktrace");
    if (!trace) return t.skip("shared trace bare-pods.sktrace not found");
    const inspect = cli("inspect", trace, "--json");
    assert.equal(inspect.status, 0, inspect.stderr);
    const s = JSON.parse(inspect.stdout);
    assert.deepEqual([s.version, s.events, s.indexObjects, s.owners, s.lifecycles], [2, 4, 16, 4, 4]);
  });

  const broken: Array<[string, () => string, RegExp]> = [
    [
      "a missing file",
      () => path.join(dir, "absent.sktrace"),
      /could not read trace file .*absent\.sktrace: no such file/,
    ],
    ["an empty file", () => file("empty.sktrace", ""), /empty\.sktrace: invalid trace: the file is empty/],
    [
      "a truncated file",
      () => file("cut.sktrace", buildTraceBytes({ events: [{ ts: 1 }] }).subarray(0, 20)),
      /cut\.sktrace: invalid trace: not readable msgpack: the data ends early/,
    ],
    ["text", () => file("text.sktrace", "hello"), /text\.sktrace: invalid trace: /],
    [
      "version 3",
      () => file("v3.sktrace", buildTraceBytes({ version: 3 })),
      /v3\.sktrace: unsupported trace format version 3/,
    ],
    [
      "version 1",
      () => file("v1.sktrace", buildTraceBytes({ version: 1 })),
      /v1\.sktrace: unsupported trace format version 1/,
    ],
  ];
  for (const [name, make, reason] of broken) {
    it(`fails on ${name} with one line naming the file and the reason`, () => {
      const target = make();
      for (const args of [[target], [target, "--json"]]) {
        const inspect = cli("inspect", ...args);
        assert.equal(inspect.status, 1);
        assert.equal(inspect.stdout, "");
        assert.equal(inspect.stderr.split("\n").length, 2, `one line: ${inspect.stderr}`);
        assert.ok(inspect.stderr.includes(target), inspect.stderr);
        assert.match(inspect.stderr, reason);
      }
    });
  }
});

describe("trace lookup", () => {
  const example = path.join(dir, "lookup.sktrace");

  it("explains the lifecycle a pod of the example's Deployment gets", () => {
    assert.equal(cli("build", SCENARIO, "-o", example).status, 0);
    const lookup = cli("lookup", example, "--owner", "Deployment/shop/web", "--seq", "3");
    assert.equal(lookup.status, 0, lookup.stderr);
    assert.match(lookup.stdout, /^owner +apps\/v1\.Deployment shop\/web$/m);
    assert.match(lookup.stdout, /^why +pod sequence number 3: entry 3 mod 3 = 0$/m);
    assert.match(
      lookup.stdout,
      /^lifecycle +Finished\(\d+, \d+\): the pod gets a completion time 415 s after it runs/m,
    );
  });

  it("looks up SimKube's cronjob trace", (t) => {
    const trace = findSharedTrace("cronjob.sktrace");
    if (!trace) return t.skip("shared trace cronjob.sktrace not found");
    const lookup = cli("lookup", trace, "--owner", "batch/v1.CronJob/default/hello-simkube", "--seq", "1");
    assert.equal(lookup.status, 0, lookup.stderr);
    assert.match(lookup.stdout, /^lifecycle +Finished\(1743286921, 1743286951\)/m);
  });

  it("rejects bad options and a bad trace", () => {
    const noOwner = cli("lookup", example);
    assert.equal(noOwner.status, 2);
    assert.match(noOwner.stderr, /needs --owner KIND\/NS\/NAME/);
    assert.equal(cli("lookup", example, "--owner", "Deployment/shop/web", "--seq", "-1").status, 2);
    assert.equal(cli("lookup", example, "--owner", "Deployment/shop/web", "--hash", "0x1").status, 2);
    const badOwner = cli("lookup", example, "--owner", "Widget/shop/web");
    assert.equal(badOwner.status, 1);
    assert.match(badOwner.stderr, /^simkube-fn: the trace has no objects of kind Widget/);
    const v3 = file("lookup-v3.sktrace", buildTraceBytes({ version: 3 }));
    const wrongVersion = cli("lookup", v3, "--owner", "Pod/ns/a");
    assert.equal(wrongVersion.status, 1);
    assert.match(wrongVersion.stderr, /lookup-v3\.sktrace: unsupported trace format version 3/);
  });
});
