// A minimal SOCKS5 proxy (RFC 1928: no authentication, CONNECT only) on 127.0.0.1, for tests that need a
// kubeconfig's `proxy-url: socks5://...` to be honoured. It records where each CONNECT went.

import net from "node:net";

export interface Socks5Proxy {
  url: string;
  /** "host:port" of every CONNECT it carried out. */
  connects: string[];
  close(): Promise<void>;
}

function destination(request: Buffer): { host: string; port: number; end: number } | undefined {
  // VER CMD RSV ATYP DST.ADDR DST.PORT
  if (request.length < 7 || request[0] !== 5 || request[1] !== 1) return undefined;
  const type = request[3];
  if (type === 1 && request.length >= 10) {
    return { host: [...request.subarray(4, 8)].join("."), port: request.readUInt16BE(8), end: 10 };
  }
  if (type === 3) {
    const length = request[4] as number;
    if (request.length < 5 + length + 2) return undefined;
    const host = request.subarray(5, 5 + length).toString("latin1");
    return { host, port: request.readUInt16BE(5 + length), end: 7 + length };
  }
  return undefined;
}

export async function startSocks5Proxy(): Promise<Socks5Proxy> {
  const connects: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    client.once("data", (greeting) => {
      if (greeting[0] !== 5) return client.destroy();
      client.write(Buffer.from([5, 0])); // no authentication
      client.once("data", (request) => {
        const target = destination(request);
        if (!target) return client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0])); // command not supported
        connects.push(`${target.host}:${target.port}`);
        const upstream = net.connect(target.port, target.host, () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          const rest = request.subarray(target.end);
          if (rest.length > 0) upstream.write(rest);
          client.pipe(upstream).pipe(client);
        });
        sockets.add(upstream);
        upstream.on("close", () => sockets.delete(upstream));
        upstream.on("error", () => client.destroy());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `socks5://127.0.0.1:${port}`,
    connects,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
