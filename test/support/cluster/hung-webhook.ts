// A webhook endpoint that accepts TLS connections and never answers: what a function stuck in a cold start
// or a hung process looks like to the API server. It serves the run's webhook certificate, so the API server
// connects and then waits for the webhook's timeoutSeconds.

import { readFileSync } from "node:fs";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";

export interface HungWebhook {
  url: string;
  /** Requests received (none is ever answered). */
  received(): number;
  close(): Promise<void>;
}

export async function startHungWebhook(clusterDir: string): Promise<HungWebhook> {
  let received = 0;
  const sockets = new Set<Socket>();
  const server = https.createServer(
    {
      cert: readFileSync(path.join(clusterDir, "webhook.crt")),
      key: readFileSync(path.join(clusterDir, "webhook.key")),
    },
    () => {
      received++;
    },
  );
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
