// Free loopback ports: bind port 0 on 127.0.0.1, read the port the kernel chose, release it. Another process
// could take it in between; the processes started on them fail loudly if so (readiness sees the exit).

import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const ports = {} as Record<K, number>;
  const taken = new Set<number>();
  for (const name of names) {
    let port = await freePort();
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    ports[name] = port;
  }
  return ports;
}
