// The bench's load generator against a server on 127.0.0.1: wrk's Lua script must count wrong answers (a
// patch where none may be, a denial, a non-200) and report its numbers. Skipped where wrk is not installed
// (it is a bench tool, not a test dependency: `apt-get install -y wrk`).

import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createWrkWorkspace, runWrk, type WrkWorkspace, wrkErrors, wrkInstalled } from "../bench/wrk.js";

const installed = wrkInstalled();

/** Answers each review by its uid: "ok" allowed, "patch" allowed with a patch, "deny" denied, "fail" 500. */
function server(): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const uid = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { request: { uid: string } }).request
        .uid;
      const response: Record<string, unknown> = { uid, allowed: uid !== "deny" };
      if (uid === "patch") response.patch = "W10=";
      res.writeHead(uid === "fail" ? 500 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
}

const body = (uid: string) => ({ uid, body: Buffer.from(JSON.stringify({ request: { uid } })) });

describe("wrk load generator", { skip: !installed && "wrk is not installed" }, () => {
  let srv: http.Server;
  let url: URL;
  let workspace: WrkWorkspace;
  before(async () => {
    srv = server();
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`);
    workspace = createWrkWorkspace();
  });
  after(async () => {
    workspace.remove();
    srv.closeAllConnections();
    await new Promise((resolve) => srv.close(resolve));
  });

  const run = (uids: string[], noPatch: boolean) =>
    runWrk({
      url,
      script: workspace.script,
      bodies: workspace.writeBodies(uids.join("-"), uids.map(body)),
      seconds: 1,
      connections: 2,
      noPatch,
      pin: [],
    });

  it("counts no error when every answer admits", async () => {
    const report = await run(["ok"], true);
    assert.ok(report.requests > 0);
    assert.equal(wrkErrors(report), 0);
    assert.ok(report.p99Us >= report.p50Us && report.p50Us > 0);
    assert.ok(report.cpuSeconds > 0);
  });

  it("counts every answer with a patch when patches are errors, and none when they are not", async () => {
    const strict = await run(["patch"], true);
    assert.equal(strict.bad, strict.requests);
    const lenient = await run(["patch"], false);
    assert.equal(lenient.bad, 0);
  });

  it("counts denials and HTTP errors", async () => {
    const report = await run(["deny", "fail"], false);
    // Every answer is wrong; wrk also counts the 500s as status errors.
    assert.equal(report.bad, report.requests);
    assert.ok(report.status > 0);
  });
});
