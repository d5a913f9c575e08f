import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { cpuTicksFromStat } from "../bench/processes.js";
import { type CpuProfile, formatProfile, groupOf, summarizeProfile } from "../bench/profile-summary.js";
import {
  createWrkWorkspace,
  parseWrkReport,
  runWrk,
  UID_MARK,
  wrkErrors,
  wrkInstalled,
} from "../bench/wrk.js";

const REPORT =
  'BENCH-WRK {"requests":100,"durationUs":2000000,"p50Us":900,"p99Us":4100,"maxUs":9000,' +
  '"connect":0,"read":1,"write":0,"status":2,"timeout":3,"bad":4,"cpuSeconds":0.25}';

describe("parseWrkReport", () => {
  it("reads the report line among wrk's other output", () => {
    const report = parseWrkReport(`Running 2s test @ http://127.0.0.1:1/\n${REPORT}\n`);
    assert.ok(typeof report !== "string", String(report));
    assert.equal(report.requests, 100);
    assert.equal(report.p99Us, 4100);
    assert.equal(report.cpuSeconds, 0.25);
    assert.equal(wrkErrors(report), 10);
  });

  it("says when the report line is missing", () => {
    const report = parseWrkReport("unable to connect to 127.0.0.1:1 Connection refused\n");
    assert.match(String(report), /no report line.*Connection refused/s);
  });

  it("names the fields a report lacks or holds as non-numbers", () => {
    const report = parseWrkReport('BENCH-WRK {"requests":1,"durationUs":"x"}');
    assert.match(String(report), /lacks durationUs, p50Us/);
  });

  it("says when the report is not JSON", () => {
    assert.match(String(parseWrkReport("BENCH-WRK {oops")), /not JSON/);
  });
});

describe("wrk scripts", () => {
  it("paces only the paced script: the saturated bursts stay on wrk's path without delay()", () => {
    const workspace = createWrkWorkspace();
    try {
      const saturated = readFileSync(workspace.script, "utf8");
      const paced = readFileSync(workspace.pacedScript, "utf8");
      assert.ok(!saturated.includes("function delay"));
      assert.ok(paced.startsWith(saturated), "the paced script is the same script plus the pacing");
      assert.match(paced, /function delay\(\)\s+return -math\.log\(1 - math\.random\(\)\) \* meanDelayMs/);
      assert.match(paced, /meanDelayMs = tonumber\(args\[3\]\)/);
    } finally {
      workspace.remove();
    }
  });
});

describe("wrk's fresh-uid script", () => {
  // The sequence bench relies on it: a uid seen twice would be answered from mutate-create's memory.
  it("sends every request with a uid of its own, tagged per run", {
    skip: !wrkInstalled() && "no wrk",
  }, async () => {
    const uids: string[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        uids.push(
          (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { request: { uid: string } }).request.uid,
        );
        res.end('{"response":{"allowed":true}}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const workspace = createWrkWorkspace();
    try {
      const bodies = workspace.writeBodies("fresh", [
        { uid: "a", body: Buffer.from(`{"request":{"uid":"a-${UID_MARK}"}}`) },
        { uid: "b", body: Buffer.from(`{"request":{"uid":"b-${UID_MARK}"}}`) },
      ]);
      const port = (server.address() as AddressInfo).port;
      const report = await runWrk({
        url: new URL(`http://127.0.0.1:${port}/`),
        script: workspace.freshUidScript,
        bodies,
        seconds: 1,
        connections: 2,
        noPatch: false,
        pin: [],
        tag: "run7-",
      });
      assert.equal(wrkErrors(report), 0);
      assert.ok(uids.length >= 4, `only ${uids.length} requests`);
      assert.equal(new Set(uids).size, uids.length, "a uid was sent twice");
      assert.ok(
        uids.every((u) => /^[ab]-run7-\d+$/.test(u)),
        `unexpected uids: ${uids.slice(0, 4).join(", ")}`,
      );
    } finally {
      workspace.remove();
      server.close();
    }
  });
});

describe("cpuTicksFromStat", () => {
  it("reads utime and stime, counting fields after the command name", () => {
    // Fields 14 and 15 are 250 and 50; the command name holds a space and a parenthesis.
    const stat = "4242 (node (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 11 0 100 0";
    assert.deepEqual(cpuTicksFromStat(stat), { user: 250, system: 50 });
  });

  it("is undefined for a truncated line", () => {
    assert.equal(cpuTicksFromStat("4242 (node) S 1 2"), undefined);
  });
});

describe("summarizeProfile", () => {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9 });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(idle)", "") },
      { id: 2, callFrame: frame("_deepClone", "file:///r/node_modules/fast-json-patch/commonjs/helpers.js") },
      { id: 3, callFrame: frame("write", "file:///r/node_modules/pino/lib/proto.js") },
      { id: 4, callFrame: frame("writev", "") },
      { id: 5, callFrame: frame("loadModule", "node:internal/modules/cjs/loader") },
    ],
    // The first sample (module loading, 1000 µs) is start-up, before the window.
    samples: [5, 2, 3, 1, 2, 4],
    timeDeltas: [1000, 10, 20, 30, 40, 50],
  };

  it("sums self time per function and per group within the window, idle apart", () => {
    const summary = summarizeProfile(profile, "/r", 149);
    assert.equal(summary.idleUs, 30);
    assert.equal(summary.busyUs, 120);
    assert.deepEqual(summary.groups, [
      { name: "patch building (fast-json-patch, plans)", us: 50 },
      { name: "Node HTTP, streams, sockets (node:*)", us: 50 },
      { name: "logging (pino, shared/log)", us: 20 },
    ]);
    assert.equal(summary.top[0]?.name, "_deepClone fast-json-patch/commonjs/helpers.js:10");
  });

  it("counts the whole profile without a window", () => {
    assert.equal(summarizeProfile(profile, "/r").busyUs, 1120);
  });

  it("reports µs per review", () => {
    const text = formatProfile(summarizeProfile(profile, "/r", 149), 10);
    assert.match(text, /busy\s+12\.0 µs\/review/);
    assert.match(text, /5\.0\s+41\.7%\s+patch building/);
  });
});

describe("groupOf", () => {
  it("files JSON builtins, counters and the adapter apart", () => {
    assert.equal(groupOf("parse", ""), "JSON parse/serialise");
    assert.equal(
      groupOf("increment", "file:///r/dist/shared/counters.js"),
      "counters (shared/counters, stats)",
    );
    assert.equal(
      groupOf("sendJson", "file:///r/dist/functions/runtime/http-server.js"),
      "HTTP adapter (runtime/http-server)",
    );
    assert.equal(groupOf("mystery", ""), "native (V8 builtins, other)");
  });
});
