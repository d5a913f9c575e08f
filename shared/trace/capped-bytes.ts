// Collects a stream of chunks into one buffer, capped in size. A trace is read whole before it is decoded;
// gathering the chunks and joining them at the end held every byte twice at the peak (3.1x the file for the
// read alone). Writing each chunk into a buffer sized from what the source announced (a file's size, a
// Content-Length, an object's length) holds them once; a source that sends more than it announced, or
// announced nothing, still works: the buffer doubles, never past the cap.

const MIN_CAPACITY = 64 * 1024;

export class CappedBytes {
  private buffer: Buffer;
  private length = 0;

  /** sizeHint: what the source announced, if anything; trusted only up to maxBytes. */
  constructor(
    private readonly maxBytes: number,
    sizeHint?: number,
  ) {
    const hinted = sizeHint !== undefined && Number.isSafeInteger(sizeHint) && sizeHint > 0;
    // One byte over the hint: reading stops at the end of the stream, and a source that sends exactly what it
    // announced then never has to grow.
    this.buffer = Buffer.allocUnsafe(hinted ? Math.min(sizeHint + 1, maxBytes + 1) : MIN_CAPACITY);
  }

  /** Appends a chunk; false (and nothing kept) when it would pass the cap. */
  append(chunk: Uint8Array): boolean {
    const needed = this.length + chunk.byteLength;
    if (needed > this.maxBytes) return false;
    if (needed > this.buffer.length) this.grow(needed);
    this.buffer.set(chunk, this.length);
    this.length = needed;
    return true;
  }

  get size(): number {
    return this.length;
  }

  /** The bytes so far; the unused tail is not copied. */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  private grow(needed: number): void {
    const capacity = Math.min(Math.max(needed, this.buffer.length * 2), this.maxBytes);
    const bigger = Buffer.allocUnsafe(capacity);
    bigger.set(this.buffer.subarray(0, this.length));
    this.buffer = bigger;
  }
}

/**
 * Collects a byte stream, giving up (and closing the stream) as soon as it passes maxBytes. `fail` makes the
 * error; `sizeHint` is what the source announced, if anything.
 */
export async function readCapped<E extends Error>(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
  fail: (why: string) => E,
  sizeHint?: number,
): Promise<Uint8Array> {
  const collected = new CappedBytes(maxBytes, sizeHint);
  for await (const chunk of chunks) {
    // Leaving the loop cancels the web stream / destroys the file stream.
    if (!collected.append(chunk)) {
      const seen = collected.size + chunk.byteLength;
      throw fail(`larger than the limit of ${maxBytes} bytes (stopped after ${seen})`);
    }
  }
  return collected.bytes();
}
