// msgpack as SimKube writes it (rmp_serde::to_vec_named over rmp's encoder), so a trace we write is
// byte-for-byte what SimKube would write for the same value. Pure.
//
// rmp picks the smallest marker for every integer, and writes non-negative integers as unsigned (a u64
// hash above 2^32 is `uint 64`, never `int 64`, which is where general-purpose encoders differ); strings,
// arrays and maps likewise take the smallest header. Non-integral numbers are f64.

/** What a trace is made of: Maps keep key order and allow non-string keys (pod_lifecycles' tuples). */
export type MsgpackValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | MsgpackValue[]
  | Map<MsgpackValue, MsgpackValue>
  | { readonly [key: string]: MsgpackValue | undefined };

export class MsgpackWriteError extends Error {
  override readonly name = "MsgpackWriteError";
}

const U64_LIMIT = 1n << 64n;
const I64_MIN = -(1n << 63n);

/** A growable byte buffer: one allocation per doubling, not one per value. */
class ByteSink {
  private buf = Buffer.allocUnsafe(4096);
  length = 0;

  reserve(n: number): Buffer {
    if (this.length + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    return this.buf;
  }

  byte(b: number): void {
    this.reserve(1)[this.length++] = b;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.length));
  }
}

export function encodeMsgpack(value: MsgpackValue): Uint8Array {
  const sink = new ByteSink();
  write(sink, value, 0);
  return sink.bytes();
}

// Deeper than any Kubernetes object; stops a cyclic value before the stack does.
const MAX_DEPTH = 512;

function write(sink: ByteSink, value: MsgpackValue | undefined, depth: number): void {
  if (depth > MAX_DEPTH) throw new MsgpackWriteError(`value nested deeper than ${MAX_DEPTH} levels`);
  if (value === null) sink.byte(0xc0);
  else if (typeof value === "boolean") sink.byte(value ? 0xc3 : 0xc2);
  else if (typeof value === "number") writeNumber(sink, value);
  else if (typeof value === "bigint") writeInteger(sink, value);
  else if (typeof value === "string") writeString(sink, value);
  else if (Array.isArray(value)) {
    writeHeader(sink, value.length, 0x90, 0xdc);
    for (const item of value) write(sink, item, depth + 1);
  } else if (value instanceof Map) {
    writeHeader(sink, value.size, 0x80, 0xde);
    for (const [k, v] of value) {
      write(sink, k, depth + 1);
      write(sink, v, depth + 1);
    }
  } else if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    // Plain objects (Kubernetes objects): undefined members are absent, as in JSON.
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    writeHeader(sink, entries.length, 0x80, 0xde);
    for (const [k, v] of entries) {
      writeString(sink, k);
      write(sink, v, depth + 1);
    }
  } else {
    throw new MsgpackWriteError(`cannot encode ${describe(value)} as msgpack`);
  }
}

function writeNumber(sink: ByteSink, n: number): void {
  if (Number.isInteger(n)) {
    if (!Number.isSafeInteger(n)) throw new MsgpackWriteError(`integer ${n} is beyond 2^53: pass a bigint`);
    writeInteger(sink, BigInt(n));
    return;
  }
  if (!Number.isFinite(n)) throw new MsgpackWriteError(`cannot encode ${n}: not a JSON number`);
  const buf = sink.reserve(9);
  buf[sink.length] = 0xcb;
  buf.writeDoubleBE(n, sink.length + 1);
  sink.length += 9;
}

// rmp::encode::write_uint / write_sint: the smallest marker that holds the value.
function writeInteger(sink: ByteSink, n: bigint): void {
  if (n >= U64_LIMIT || n < I64_MIN) throw new MsgpackWriteError(`integer ${n} does not fit 64 bits`);
  if (n >= 0n && n < 0x80n) sink.byte(Number(n));
  else if (n >= 0n && n < 0x100n) fixed(sink, 0xcc, 1, (b, at) => b.writeUInt8(Number(n), at));
  else if (n >= 0n && n < 0x1_0000n) fixed(sink, 0xcd, 2, (b, at) => b.writeUInt16BE(Number(n), at));
  else if (n >= 0n && n < 0x1_0000_0000n) fixed(sink, 0xce, 4, (b, at) => b.writeUInt32BE(Number(n), at));
  else if (n >= 0n) fixed(sink, 0xcf, 8, (b, at) => b.writeBigUInt64BE(n, at));
  else if (n >= -32n) sink.byte(Number(n) & 0xff);
  else if (n >= -0x80n) fixed(sink, 0xd0, 1, (b, at) => b.writeInt8(Number(n), at));
  else if (n >= -0x8000n) fixed(sink, 0xd1, 2, (b, at) => b.writeInt16BE(Number(n), at));
  else if (n >= -0x8000_0000n) fixed(sink, 0xd2, 4, (b, at) => b.writeInt32BE(Number(n), at));
  else fixed(sink, 0xd3, 8, (b, at) => b.writeBigInt64BE(n, at));
}

function fixed(sink: ByteSink, marker: number, size: number, put: (b: Buffer, at: number) => void): void {
  const buf = sink.reserve(1 + size);
  buf[sink.length] = marker;
  put(buf, sink.length + 1);
  sink.length += 1 + size;
}

function writeString(sink: ByteSink, s: string): void {
  const size = Buffer.byteLength(s, "utf8");
  if (size < 32) sink.byte(0xa0 | size);
  else if (size < 0x100) fixed(sink, 0xd9, 1, (b, at) => b.writeUInt8(size, at));
  else if (size < 0x1_0000) fixed(sink, 0xda, 2, (b, at) => b.writeUInt16BE(size, at));
  else fixed(sink, 0xdb, 4, (b, at) => b.writeUInt32BE(size, at));
  const buf = sink.reserve(size);
  sink.length += buf.write(s, sink.length, "utf8");
}

/** Array and map headers: fix (up to 15 items), 16-bit, or 32-bit length. */
function writeHeader(sink: ByteSink, count: number, fix: number, marker16: number): void {
  if (count < 16) sink.byte(fix | count);
  else if (count < 0x1_0000) fixed(sink, marker16, 2, (b, at) => b.writeUInt16BE(count, at));
  else fixed(sink, marker16 + 1, 4, (b, at) => b.writeUInt32BE(count, at));
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value !== "object") return `a ${typeof value}`;
  return `an object of type ${(value as object).constructor?.name ?? "unknown"}`;
}
