// A POST written over a plain socket, as a client that sends its whole body before reading (the API server's
// Go client, curl) does: it writes every byte it can, and keeps what the server answered even when a write
// fails. Whether the answer arrived, and whether writing failed, are both reported.

import net from "node:net";

export interface RawPostOutcome {
  /** Everything the server sent, as text (status line, headers, body). */
  response: string;
  /** The first error on the socket (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** Body bytes written before the socket failed or closed. */
  written: number;
}

export interface RawPostOptions {
  port: number;
  path?: string;
  bodyBytes: number;
  /** Declare the length (Content-Length) or stream it (Transfer-Encoding: chunked). */
  framing: "content-length" | "chunked";
  chunkBytes?: number;
}

function chunkFrame(chunk: Buffer, framing: RawPostOptions["framing"]): Buffer {
  if (framing === "content-length") return chunk;
  return Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
}

export function rawPost(o: RawPostOptions): Promise<RawPostOutcome> {
  const chunkBytes = o.chunkBytes ?? 64 * 1024;
  return new Promise((resolve) => {
    const socket = net.connect(o.port, "127.0.0.1");
    const received: Buffer[] = [];
    let error: string | undefined;
    let written = 0;
    let closed = false;
    socket.on("data", (data: Buffer) => received.push(data));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on("close", () => {
      closed = true;
      const outcome: RawPostOutcome = { response: Buffer.concat(received).toString("latin1"), written };
      if (error !== undefined) outcome.error = error;
      resolve(outcome);
    });
    const framing =
      o.framing === "content-length" ? `content-length: ${o.bodyBytes}` : "transfer-encoding: chunked";
    socket.write(
      `POST ${o.path ?? "/"} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`,
    );
    const writeMore = () => {
      while (!closed && written < o.bodyBytes) {
        const size = Math.min(chunkBytes, o.bodyBytes - written);
        written += size;
        if (!socket.write(chunkFrame(Buffer.alloc(size, 0x61), o.framing))) {
          socket.once("drain", writeMore);
          return;
        }
      }
      if (!closed && o.framing === "chunked") socket.write("0\r\n\r\n");
    };
    writeMore();
  });
}
