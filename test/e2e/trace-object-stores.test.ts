// Object-store traces from the built bundle (dist/bundle/, what the image copies): the SDKs live in
// trace-sources/*.cjs beside simkube-fn.cjs, and are loaded only when a location of their store is read.
// mutate-create served with TRACE_PATH=s3://... (or a Simulation's spec.driver.tracePath) against s3rver
// gives a pod its lifecycle; `trace inspect` reads s3://, gs:// and azure:// from s3rver, fake-gcs-server and
// Azurite; a serve with a file trace loads no SDK at all.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { exampleTrace } from "../../functions/cli/trace/example.js";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { KWOK_USER } from "../../shared/base/identities.js";
import type { KubeObject } from "../../shared/kube/api.js";
import {
  buildDriverBarePod,
  buildSimulation,
  buildSimulationRoot,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import {
  fakeGcsServerBinary,
  type LocalStore,
  startAzurite,
  startFakeGcs,
  startS3,
} from "../support/object-stores.js";
import { CLI, serveFunction } from "../support/serve-cli.js";
import { buildTraceBytes, finished, ownersTraceSpec } from "../support/trace-builder.js";

const BUNDLE = path.dirname(CLI);
const VNS = "virtual-testing";
const TRACE = buildTraceBytes(
  ownersTraceSpec([{ gvk: "v1.Pod", nsName: "testing/bare-1", lifecycles: [finished(100, 160)] }]),
);

/** A --require hook that appends every trace-sources file the process requires to $LOADED_LOG. */
const HOOK = `const Module = require("node:module");
const fs = require("node:fs");
const load = Module._load;
Module._load = function (request, ...rest) {
  if (/trace-sources\\//.test(request)) fs.appendFileSync(process.env.LOADED_LOG, request + "\\n");
  return load.call(this, request, ...rest);
};
`;

describe("object-store traces from the built bundle", { timeout: 120_000 }, () => {
  let dir: string;
  let hook: string;
  const loaded = async (log: string) =>
    (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-object-stores-"));
    hook = path.join(dir, "hook.cjs");
    await writeFile(hook, HOOK);
  });
  after(async () => {
    await removeAllKubeconfigs();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps the SDKs out of the main bundle, each in its own file", async () => {
    const main = await readFile(path.join(BUNDLE, "simkube-fn.cjs"), "latin1");
    const markers: Record<string, string> = {
      s3: "S3Client",
      // Not STORAGE_EMULATOR_HOST: the help names it (functions/cli/env-help.ts).
      gcs: "GoogleAuth",
      azure: "BlobServiceClient",
    };
    for (const [store, marker] of Object.entries(markers)) {
      const own = await readFile(path.join(BUNDLE, "trace-sources", `${store}.cjs`), "latin1");
      assert.ok(own.includes(marker), `${store}.cjs holds ${marker}`);
      assert.ok(!main.includes(marker), `simkube-fn.cjs does not hold ${marker}`);
      const notices = await readFile(path.join(BUNDLE, "trace-sources", `${store}.cjs.LEGAL.txt`), "utf8");
      assert.match(notices, /Bundled packages and their licenses:/);
    }
  });

  describe("mutate-create served with its trace in S3", () => {
    let api: FakeApiServer;
    let s3: LocalStore;

    before(async () => {
      api = await startFakeApiServer({ namespaces: [VNS] });
      api.store.put(buildSimulation({ speed: 2 }));
      api.store.put(buildSimulationRoot());
      s3 = await startS3({ "sim/trace.sktrace": TRACE });
    });
    after(async () => {
      await s3?.stop();
      await api?.close();
    });

    it("gives a pod its production completion time, loading the S3 reader alone", async () => {
      const log = path.join(dir, "loaded-s3.log");
      const served = await serveFunction("mutate-create", {
        ...s3.env,
        NODE_OPTIONS: `--require ${hook}`,
        LOADED_LOG: log,
        SIM_NAME: TEST_SIM_NAME,
        KUBECONFIG: await writeKubeconfig(api.url),
        TRACE_PATH: `s3://${s3.bucket}/sim/trace.sktrace`,
        SEQUENCE_STORE: "memory",
      });
      try {
        await assertLifecycleGiven(api, served.url, served.output);
      } finally {
        await stopChild(served.child);
      }
      assert.deepEqual(await loaded(log), ["./trace-sources/s3.cjs"]);
    });

    it("reads each Simulation's spec.driver.tracePath from S3 when no SIM_NAME or TRACE_PATH is set", async () => {
      const driver = {
        namespace: "simkube",
        tracePath: `s3://${s3.bucket}/sim/trace.sktrace`,
        virtualNsPrefix: "virtual",
      };
      api.store.put(buildSimulation({ speed: 2, spec: { driver } }));
      await api.request("DELETE", `/api/v1/namespaces/${VNS}/pods/bare-1`);
      const served = await serveFunction("mutate-create", {
        ...s3.env,
        KUBECONFIG: await writeKubeconfig(api.url),
        SEQUENCE_STORE: "memory",
        TRACE_ALLOWED_LOCATIONS: `s3://${s3.bucket}/sim/`,
      });
      try {
        await assertLifecycleGiven(api, served.url, served.output);
      } finally {
        await stopChild(served.child);
      }
    });

    it("loads no SDK when the trace is a file", async () => {
      const file = path.join(dir, "trace.sktrace");
      await writeFile(file, TRACE);
      const log = path.join(dir, "loaded-file.log");
      const served = await serveFunction("mutate-create", {
        NODE_OPTIONS: `--require ${hook}`,
        LOADED_LOG: log,
        SIM_NAME: TEST_SIM_NAME,
        KUBECONFIG: await writeKubeconfig(api.url),
        TRACE_PATH: file,
        SEQUENCE_STORE: "memory",
      });
      const health = await fetch(new URL("/healthz", served.url));
      await stopChild(served.child);
      assert.equal(health.status, 200);
      assert.deepEqual(await loaded(log), []);
    });
  });

  describe("`trace inspect` of s3://, gs:// and azure:// URLs", () => {
    const gcs = fakeGcsServerBinary();
    const stores: LocalStore[] = [];
    let example: Uint8Array;

    before(async () => {
      example = (await exampleTrace()).bytes;
      stores.push(await startAzurite({ "runs/example.sktrace": example }));
      if ("binary" in gcs) stores.push(await startFakeGcs(gcs.binary, { "runs/example.sktrace": example }));
      else process.stderr.write(`\n*** SKIPPED the gs:// bundle check: ${gcs.skip} ***\n\n`);
      stores.push(await startS3({ "runs/example.sktrace": example }));
    });
    after(async () => {
      for (const store of stores) await store.stop();
    });

    it("reads the example trace through each store's reader", async () => {
      for (const store of stores) {
        const location = `${store.scheme}://${store.bucket}/runs/example.sktrace`;
        const started = performance.now();
        // Not spawnSync: s3rver answers from this process.
        const run = await promisify(execFile)(
          process.execPath,
          [CLI, "trace", "inspect", location, "--json"],
          {
            env: { PATH: process.env.PATH ?? "", HOME: tmpdir(), ...store.env },
            encoding: "utf8",
            timeout: 60_000,
          },
        );
        const ms = performance.now() - started;
        process.stderr.write(
          `# bundle: trace inspect ${location} took ${ms.toFixed(0)} ms (a whole CLI run)\n`,
        );
        const summary = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { version?: number };
        assert.equal(summary.version, 2, location);
      }
    });
  });
});

/** Creates bare-1 through the API double (which calls the function at `url`), marks it Running as KWOK
 * would, and checks that it got the completion time the trace gives it. */
async function assertLifecycleGiven(api: FakeApiServer, url: string, output: () => string): Promise<void> {
  api.webhooks = [
    {
      name: "mutate-create.simkube.io",
      url,
      operations: ["CREATE", "UPDATE"],
      resources: ["pods", "pods/status"],
    },
  ];
  const created = await api.request("POST", `/api/v1/namespaces/${VNS}/pods`, barePod("bare-1"));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const res = await api.request(
    "PATCH",
    `/api/v1/namespaces/${VNS}/pods/bare-1/status`,
    { status: { phase: "Running" } },
    { contentType: "application/merge-patch+json", user: KWOK_USER },
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const stored = api.store.get({ kind: "Pod", namespace: VNS, name: "bare-1" });
  assert.equal(stored?.metadata?.labels?.["simkube.io/kwok-stage-complete"], "true", output());
  assert.match(stored?.metadata?.annotations?.["simkube.io/kwok-stage-complete-time"] ?? "", /^\d{4}-/);
}

function barePod(name: string): KubeObject {
  return buildDriverBarePod(name, VNS);
}
