import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuTicksFromStat } from "../bench/processes.js";
import { parseWrkReport, wrkErrors } from "../bench/wrk.js";

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

describe("cpuTicksFromStat", () => {
  it("adds utime and stime, counting fields after the command name", () => {
    // Fields 14 and 15 are 250 and 50; the command name holds a space and a parenthesis.
    const stat = "4242 (node (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 11 0 100 0";
    assert.equal(cpuTicksFromStat(stat), 300);
  });

  it("is undefined for a truncated line", () => {
    assert.equal(cpuTicksFromStat("4242 (node) S 1 2"), undefined);
  });
});
