// The TLS front before the OpenFaaS gateway (functions/local-cluster/openfaas/tls-front.ts), against a stand-in
// gateway on loopback and a stand-in API client whose Endpoints answers the test controls:
// - an endpoint once known, a connection is carried even while the next lookup hangs (the lookup shares the
//   API client with pod creates that wait on this very connection: waiting for it stalled a 2,000-pod burst);
// - no endpoint known: the connection is refused (closed) and counted, and a gateway that comes back is used by
//   the next connection without waiting for the background refresh.

import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startTlsFront, type TlsFront } from "../../functions/local-cluster/openfaas/tls-front.js";
import { createPki, issueServingCert } from "../../functions/local-cluster/pki.js";
import type { RestClient } from "../../functions/local-cluster/rest.js";

type Answer = "endpoint" | "none" | "hang";

let dir: string;
let ca: string;
let cert: string;
let key: string;
let gateway: http.Server;
let gatewayPort: number;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tls-front-"));
  const pki = await createPki(dir);
  const serving = await issueServingCert(dir, "front", ["localhost"]);
  ca = pki.caCertPem;
  cert = await readFile(serving.certFile, "utf8");
  key = await readFile(serving.keyFile, "utf8");
  gateway = http.createServer((_req, res) => res.end("from the gateway"));
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
  gatewayPort = (gateway.address() as AddressInfo).port;
});

after(async () => {
  gateway.closeAllConnections();
  await new Promise((resolve) => gateway.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** An API client whose Endpoints GET answers as `answer()` says at the time of the call. */
function fakeAdmin(answer: () => Answer): { admin: RestClient; lookups: () => number } {
  let lookups = 0;
  const request = (() => {
    lookups++;
    const now = answer();
    if (now === "hang") return new Promise(() => {});
    const subsets =
      now === "endpoint" ? [{ addresses: [{ ip: "127.0.0.1" }], ports: [{ port: gatewayPort }] }] : [];
    return Promise.resolve({ subsets });
  }) as RestClient["request"];
  const admin: RestClient = {
    server: "https://fake",
    request,
    getText: async () => "",
    ensure: async () => {},
    remove: async () => {},
  };
  return { admin, lookups: () => lookups };
}

function get(front: TlsFront): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${front.url}/function/x`, { ca, agent: false, timeout: 3_000 }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on("end", () => resolve(text));
    });
    req.on("timeout", () => req.destroy(new Error("no answer in 3 s")));
    req.on("error", reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the TLS front before the OpenFaaS gateway", () => {
  it("carries a connection to the known endpoint while the next lookup hangs", async () => {
    let answer: Answer = "endpoint";
    const { admin, lookups } = fakeAdmin(() => answer);
    const front = await startTlsFront({ admin, namespace: "openfaas", service: "gateway", cert, key });
    try {
      assert.equal(await get(front), "from the gateway");
      answer = "hang";
      await sleep(1_500); // a background lookup is now pending, never to answer
      assert.ok(lookups() >= 2, "a refresh was started");
      assert.equal(await get(front), "from the gateway");
      assert.equal(front.failures(), 0);
    } finally {
      await front.stop();
    }
  });

  it("refuses a connection while the gateway has no endpoint, and uses it at once when it is back", async () => {
    let answer: Answer = "none";
    const { admin } = fakeAdmin(() => answer);
    const front = await startTlsFront({ admin, namespace: "openfaas", service: "gateway", cert, key });
    try {
      await assert.rejects(get(front), /socket hang up|ECONNRESET|EPIPE/);
      assert.equal(front.failures(), 1);
      answer = "endpoint";
      assert.equal(await get(front), "from the gateway", "no wait for the next background refresh");
    } finally {
      await front.stop();
    }
  });
});
