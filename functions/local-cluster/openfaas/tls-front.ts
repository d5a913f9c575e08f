// The TLS in front of the OpenFaaS gateway, as a user's ingress would be: the API server calls webhooks over
// https only, and CE's gateway speaks plain HTTP. A listener on this host's loopback terminates TLS with a
// certificate for `localhost` from the run's CA (which the rendered webhook configuration's caBundle names)
// and carries each connection, bytes unchanged, to a ready endpoint of the gateway's Service (its pod, over
// the node's route). When the gateway has no ready endpoint or refuses, the connection is closed: the API
// server sees the call fail (CREATE fails closed, DELETE is ignored, as their failure policies say).

import net from "node:net";
import tls from "node:tls";
import type { RestClient } from "../rest.js";

const CONNECT_TIMEOUT_MS = 2_000;

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

/**
 * The endpoint as last looked up, refreshed once a second in the background. A connection does not wait for a
 * lookup while an endpoint is known: the lookup shares the API server client with whoever creates pods, and a
 * pod create waits for its webhook call, so a connection waiting behind those creates would stall them all
 * until their client timeouts. When the last lookup found none, a connection looks again before it is refused,
 * so a gateway that has just come back is used at once.
 */
type Endpoint = { ip: string; port: number } | undefined;
function refreshedEndpoint(lookup: () => Promise<Endpoint>) {
  let latest: Endpoint;
  let started = 0;
  let applied = 0;
  const refresh = async (): Promise<Endpoint> => {
    const mine = ++started;
    const found = await lookup().catch(() => undefined);
    if (mine > applied) {
      applied = mine;
      latest = found;
    }
    return found;
  };
  let first: Promise<Endpoint> | undefined = refresh();
  let refreshing = false;
  const timer = setInterval(() => {
    if (refreshing) return;
    refreshing = true;
    refresh().finally(() => {
      refreshing = false;
    });
  }, 1000);
  timer.unref();
  const current = async (): Promise<Endpoint> => {
    if (first) {
      await first;
      first = undefined;
    }
    return latest ?? refresh();
  };
  return { current, stop: () => clearInterval(timer) };
}

export async function startTlsFront(options: {
  admin: RestClient;
  namespace: string;
  service: string;
  cert: string;
  key: string;
}): Promise<TlsFront> {
  const endpoint = refreshedEndpoint(() => readyEndpoint(options.admin, options.namespace, options.service));
  let failures = 0;
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ cert: options.cert, key: options.key }, (client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    endpoint.current().then((to) => {
      if (!to) {
        failures++;
        client.destroy();
        return;
      }
      const upstream = net.connect(to.port, to.ip);
      // An endpoint up to a second stale may be a pod gone: fail fast rather than wait out TCP's connect.
      const connectTimer = setTimeout(
        () => upstream.destroy(new Error("connect timeout")),
        CONNECT_TIMEOUT_MS,
      );
      upstream.once("connect", () => clearTimeout(connectTimer));
      upstream.once("close", () => clearTimeout(connectTimer));
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
        endpoint.stop();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
