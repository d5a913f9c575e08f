// Issue 4's proof: four mutate-create instances (each its own HTTP server, client and caches) share one API
// server. 1,000 CREATE reviews of a few spec hashes go to them interleaved and concurrently; every hash's
// sequence numbers must come out exactly 0..n-1. Then every instance is replaced (a scale-to-zero restart)
// and counting goes on where it stopped.

import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, describe, it } from "node:test";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import { buildMutateCreateDeps } from "../../functions/mutate-create/wiring.js";
import { createApp, listen } from "../../functions/runtime/http-server.js";
import { type AdmissionReview, decodePatch } from "../../shared/admission/review.js";
import { createLogger } from "../../shared/base/log.js";
import { loadConfig } from "../../shared/config/config.js";
import { createKubeApi } from "../../shared/kube/client.js";
import { assertExactRange } from "../support/assertions.js";
import {
  buildCreateReview,
  buildNamespace,
  buildPod,
  buildSimulation,
  buildSimulationRoot,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";

const IMAGES = ["nginx:1.27", "redis:7", "busybox:1.36", "postgres:16"];
const SEQ_KEY = "static.simkube.io/pod-sequence-number";
const HASH_KEY = "static.simkube.io/pod-spec-stable-hash";

const quiet = () =>
  createLogger(
    "warn",
    new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    }),
  );

async function startInstances(
  api: FakeApiServer,
  count: number,
): Promise<{ urls: string[]; servers: Server[] }> {
  const kubeconfigPath = await writeKubeconfig(api.url);
  const config = loadConfig({
    SIM_NAME: TEST_SIM_NAME,
    SEQUENCE_STORE: "cluster",
    SEQUENCE_NAMESPACE: "simkube",
  });
  const servers: Server[] = [];
  for (let i = 0; i < count; i++) {
    const log = quiet();
    const deps = await buildMutateCreateDeps(config, createKubeApi({ kubeconfigPath }), log);
    servers.push(await listen(createApp(createMutateCreateHandler(deps), log), 0, "127.0.0.1"));
  }
  return { servers, urls: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/`) };
}

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
}

/** Sends `total` CREATE reviews round-robin over the instances, `concurrency` at a time; returns hash -> seqs. */
async function sendCreates(urls: string[], total: number, concurrency: number, offset: number) {
  const seen = new Map<string, number[]>();
  let next = 0;
  async function worker() {
    while (next < total) {
      const i = next++;
      const pod = buildPod({
        name: `pod-${offset + i}`,
        phase: "Pending",
        spec: { containers: [{ name: "c", image: IMAGES[i % IMAGES.length] }] },
      });
      const res = await fetch(urls[i % urls.length] as string, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(buildCreateReview({ pod })),
      });
      const review = (await res.json()) as AdmissionReview;
      assert.equal(review.response?.allowed, true, review.response?.status?.message);
      const annotations = new Map(
        decodePatch(review.response ?? { uid: "", allowed: true }).flatMap((op) =>
          op.op === "add" && op.path === "/metadata/annotations"
            ? Object.entries(op.value as Record<string, string>)
            : op.op === "add" && op.path.startsWith("/metadata/annotations/")
              ? [[op.path.slice("/metadata/annotations/".length).replace("~1", "/"), op.value as string]]
              : [],
        ),
      );
      const hash = annotations.get(HASH_KEY);
      const seq = annotations.get(SEQ_KEY);
      assert.ok(hash && seq, "patch carries hash and sequence");
      seen.set(hash, [...(seen.get(hash) ?? []), Number(seq)]);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return seen;
}

describe("cluster-wide sequence numbers across four mutate-create instances", { timeout: 120_000 }, () => {
  let api: FakeApiServer;
  // Every instance started, closed in after() too: a failed assertion must not leave servers holding the
  // test process open.
  const started: Server[] = [];

  after(async () => {
    await closeAll(started.filter((s) => s.listening));
    await api?.close();
    await removeAllKubeconfigs();
  });

  it("hands every hash exactly 0..n-1 under concurrency, and continues after a restart", async () => {
    api = await startFakeApiServer({ namespaces: ["simkube", "test-namespace"] });
    api.store.put(buildSimulation());
    api.store.put(buildSimulationRoot());
    api.store.put(buildNamespace({ name: "simkube" }));

    const first = await startInstances(api, 4);
    started.push(...first.servers);
    const seen = await sendCreates(first.urls, 1000, 48, 0);
    await closeAll(first.servers);

    assert.equal(seen.size, IMAGES.length);
    const counts = new Map<string, number>();
    for (const [hash, seqs] of seen) {
      assertExactRange(seqs, `hash ${hash}`);
      counts.set(hash, seqs.length);
    }
    assert.equal(
      [...counts.values()].reduce((a, b) => a + b, 0),
      1000,
    );

    // Scale to zero and back: fresh processes know nothing but what the cluster kept.
    const second = await startInstances(api, 4);
    started.push(...second.servers);
    const more = await sendCreates(second.urls, 200, 16, 1000);
    await closeAll(second.servers);
    for (const [hash, seqs] of more) {
      assertExactRange(seqs, `hash ${hash} after the restart`, counts.get(hash) ?? 0);
    }
  });
});
