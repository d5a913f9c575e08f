// The TLS in front of the OpenFaaS gateway, as a user's ingress would be: the API server calls webhooks over
// https only, and CE's gateway speaks plain HTTP. A listener on this host's loopback terminates TLS with a
// certificate for `localhost` from the run's CA (which the rendered webhook configuration's caBundle names)
// and carries each connection, bytes unchanged, to a ready endpoint of the gateway's Service (its pod, over
// the node's route). When the gateway has no ready endpoint or refuses, the connection is closed: the API
// server sees the call fail (CREATE fails closed, DELETE is ignored, as their failure policies say).

import net from "node:net";
import tls from "node:tls";
import type { RestClient } from "../rest.js";

export interface TlsFront {
  /** https://localhost:<port>: the --webhook-gateway-url the API server reaches the gateway at. */
  readonly url: string;
  /** Connections that found no gateway endpoint or could not reach it. */
  readonly failures: () => number;
  stop(): Promise<void>;
}

interface Endpoints {
  subsets?: { addresses?: { ip: string }[]; ports?: { port: number }[] }[];
}

/** The first ready address of a Service, from its Endpoints; undefined when none is ready. */
export async function readyEndpoint(
  admin: RestClient,
  namespace: string,
  service: string,
): Promise<{ ip: string; port: number } | undefined> {
  const e = await admin.request<Endpoints>("GET", `/api/v1/namespaces/${namespace}/endpoints/${service}`);
  for (const subset of e.subsets ?? []) {
    const ip = subset.addresses?.[0]?.ip;
    const port = subset.ports?.[0]?.port;
    if (ip && port) return { ip, port };
  }
  return undefined;
}

/** Looks the endpoint up at most once a second: a burst of reviews must not become a burst of GETs. */
function cachedEndpoint(lookup: () => Promise<{ ip: string; port: number } | undefined>) {
  let at = 0;
  let value: Promise<{ ip: string; port: number } | undefined> | undefined;
  return () => {
    if (!value || Date.now() - at > 1000) {
      at = Date.now();
      value = lookup().catch(() => undefined);
    }
    return value;
  };
}

export async function startTlsFront(options: {
  admin: RestClient;
  namespace: string;
  service: string;
  cert: string;
  key: string;
}): Promise<TlsFront> {
  const endpoint = cachedEndpoint(() => readyEndpoint(options.admin, options.namespace, options.service));
  let failures = 0;
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ cert: options.cert, key: options.key }, (client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    endpoint().then((to) => {
      if (!to) {
        failures++;
        client.destroy();
        return;
      }
      const upstream = net.connect(to.port, to.ip);
      sockets.add(upstream);
      upstream.once("close", () => sockets.delete(upstream));
      upstream.on("error", () => {
        failures++;
        client.destroy();
      });
      client.once("close", () => upstream.destroy());
      upstream.once("close", () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://localhost:${port}`,
    failures: () => failures,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
