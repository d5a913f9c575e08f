// The served bundle honours a kubeconfig's SOCKS proxy (`proxy-url: socks5://...`). client-node builds its
// SocksProxyAgent only for such a kubeconfig, and the serving bundles load it only then
// (scripts/client-node-slim.mjs): this is the test that the late load works in the bundle users run.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { URL } from "node:url";
import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import type { AdmissionReview } from "../../shared/admission/review.js";
import {
  buildCreateReview,
  buildDriverBarePod,
  buildSimulation,
  buildSimulationRoot,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { stopChild } from "../support/child-process.js";
import { removeAllKubeconfigs, writeKubeconfig } from "../support/kubeconfig.js";
import { type Served, serveFunction } from "../support/serve-cli.js";
import { type Socks5Proxy, startSocks5Proxy } from "../support/socks5-proxy.js";

describe("serve (bundle) with a kubeconfig whose proxy-url is socks5://", { timeout: 60_000 }, () => {
  let api: FakeApiServer;
  let proxy: Socks5Proxy;
  let served: Served;

  before(async () => {
    api = await startFakeApiServer({ namespaces: ["virtual-testing"] });
    api.store.put(buildSimulation());
    api.store.put(buildSimulationRoot());
    proxy = await startSocks5Proxy();
    served = await serveFunction("mutate-create", {
      SIM_NAME: TEST_SIM_NAME,
      KUBECONFIG: await writeKubeconfig(api.url, undefined, { proxyUrl: proxy.url }),
      SEQUENCE_STORE: "memory",
      LOG_LEVEL: "info", // serveFunction waits for the "listening" line
    });
  });

  after(async () => {
    if (served) await stopChild(served.child);
    await proxy?.close();
    await api?.close();
    await removeAllKubeconfigs();
  });

  it("admits a simulation pod, reading the Simulation and its root through the proxy", async () => {
    const review = buildCreateReview({ pod: buildDriverBarePod("through-socks", "virtual-testing") });
    const response = await fetch(served.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review),
    });
    const answer = (await response.json()) as AdmissionReview;
    assert.equal(answer.response?.allowed, true, `${answer.response?.status?.message}\n${served.output()}`);
    assert.ok(answer.response?.patch, "mutated");
    const apiPort = new URL(api.url).port;
    assert.ok(
      proxy.connects.some((to) => to.endsWith(`:${apiPort}`)),
      `the proxy carried a connection to the API server (saw ${proxy.connects.join(", ") || "none"})`,
    );
    assert.ok(api.count("GET", /simulationroots/) >= 1);
  });
});
