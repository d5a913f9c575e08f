// A strict msgpack decoder for untrusted input: the plain formats of the msgpack spec and nothing else.
//
// Why not msgpackr: it always honours its own extensions, whatever the options. A record definition
// (fixext 0x72) is decoded even with useRecords: false and then silently turns later fixints 0x40..0x7f
// into records; Set, RegExp, Error and bundled-string extensions are always registered; and unless
// structuredClone is false, id/pointer extensions (0x69/0x70) make back-references, so a few hundred bytes
// decode to a DAG that expands exponentially when walked (a 470-byte trace: 2^28 leaves).
//
// Here every value is decoded from its own bytes, so nothing can be referenced twice, and three limits
// bound the work: nesting depth, declared element counts (never more than the bytes left could hold), and
// an estimate of the decoded size in memory. Any extension type is refused: rmp-serde never writes one.
//
// Shapes: nil -> null, bool, int/uint up to 32 bits and floats -> number, 64-bit ints -> bigint, str ->
// string (valid UTF-8 only), bin -> Uint8Array, array -> unknown[], map -> Map (keys of any type).

export interface MsgpackLimits {
  /** Deepest nesting of arrays and maps; the top-level value is depth 1. */
  maxDepth: number;
  /** Budget for the estimated in-memory size of everything decoded (see COST). */
  maxDecodedBytes: number;
}

/** Bytes that are not one complete, plain msgpack value, or that break a limit. */
export class MsgpackError extends Error {
  override readonly name = "MsgpackError";
  constructor(
    readonly offset: number,
    readonly reason: string,
    /** The input ended inside a value. */
    readonly truncated = false,
  ) {
    super(`${reason} (at byte ${offset})`);
  }
}

// V8 heap costs in bytes (Node 20, measured with 10^6 of each), only to keep the decoded size proportional
// to the input: an empty map is one byte of msgpack but 192 bytes of heap, so a file of empty maps would
// expand ~190x without a budget. Scalars are charged where they sit: an array slot or a map entry.
const COST = { array: 32, slot: 8, map: 184, mapEntry: 40, string: 24, bigint: 24, binary: 64 } as const;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes exactly one value that spans all of `bytes`. Throws MsgpackError. */
export function decodeMsgpack(bytes: Uint8Array, limits: MsgpackLimits): unknown {
  const reader = new Reader(bytes, limits);
  const value = reader.value(1);
  if (reader.pos !== bytes.length) {
    throw new MsgpackError(reader.pos, `${bytes.length - reader.pos} bytes follow the end of the value`);
  }
  return value;
}

class Reader {
  pos = 0;
  private spent = 0;
  private readonly view: DataView;
  private readonly text: Buffer;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: MsgpackLimits,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  value(depth: number): unknown {
    const at = this.pos;
    const b = this.u8();
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if (b <= 0x8f) return this.map(b & 0x0f, depth, at);
    if (b <= 0x9f) return this.array(b & 0x0f, depth, at);
    if (b <= 0xbf) return this.string(b & 0x1f);
    return this.tagged(b, depth, at);
  }

  private tagged(b: number, depth: number, at: number): unknown {
    switch (b) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
        return this.binary(this.u8());
      case 0xc5:
        return this.binary(this.u16());
      case 0xc6:
        return this.binary(this.u32());
      case 0xca:
        return this.fixed(4, (o) => this.view.getFloat32(o));
      case 0xcb:
        return this.fixed(8, (o) => this.view.getFloat64(o));
      case 0xcc:
        return this.u8();
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xcf:
        return this.big(() => this.view.getBigUint64(this.pos));
      case 0xd0:
        return this.fixed(1, (o) => this.view.getInt8(o));
      case 0xd1:
        return this.fixed(2, (o) => this.view.getInt16(o));
      case 0xd2:
        return this.fixed(4, (o) => this.view.getInt32(o));
      case 0xd3:
        return this.big(() => this.view.getBigInt64(this.pos));
      case 0xd9:
        return this.string(this.u8());
      case 0xda:
        return this.string(this.u16());
      case 0xdb:
        return this.string(this.u32());
      case 0xdc:
        return this.array(this.u16(), depth, at);
      case 0xdd:
        return this.array(this.u32(), depth, at);
      case 0xde:
        return this.map(this.u16(), depth, at);
      case 0xdf:
        return this.map(this.u32(), depth, at);
      case 0xc1:
        throw new MsgpackError(at, "byte 0xc1 is never used in msgpack");
      default:
        throw this.extension(b, at); // 0xc7..0xc9, 0xd4..0xd8
    }
  }

  private extension(b: number, at: number): MsgpackError {
    // The type byte follows the length (ext 8/16/32) or the format byte (fixext).
    const typeAt = b <= 0xc9 ? at + 1 + (1 << (b - 0xc7)) : at + 1;
    const type = typeAt < this.bytes.length ? (this.view.getInt8(typeAt) as number) : undefined;
    const which = type === undefined ? "an extension type" : `extension type ${type}`;
    return new MsgpackError(at, `${which} is not allowed: SimKube's traces are plain msgpack`);
  }

  private array(count: number, depth: number, at: number): unknown[] {
    this.enter(count, 1, depth, at, "array");
    this.charge(COST.array + COST.slot * count, at);
    const out = new Array<unknown>(count);
    for (let i = 0; i < count; i++) out[i] = this.value(depth + 1);
    return out;
  }

  private map(count: number, depth: number, at: number): Map<unknown, unknown> {
    this.enter(count, 2, depth, at, "map");
    this.charge(COST.map + COST.mapEntry * count, at);
    const out = new Map<unknown, unknown>();
    for (let i = 0; i < count; i++) {
      const key = this.value(depth + 1);
      out.set(key, this.value(depth + 1));
    }
    return out;
  }

  // Every element takes at least one byte (a map entry two), so a count the rest of the input cannot
  // hold is a lie that would otherwise allocate up to 2^32 slots before failing.
  private enter(count: number, minBytes: number, depth: number, at: number, what: string): void {
    if (depth > this.limits.maxDepth) {
      throw new MsgpackError(at, `nesting deeper than ${this.limits.maxDepth} levels`);
    }
    const left = this.bytes.length - this.pos;
    if (count * minBytes > left) {
      const why = `the data ends early (truncated file?): ${what} of ${count} items cannot fit in the ${left} bytes left`;
      throw new MsgpackError(at, why, true);
    }
  }

  private string(length: number): string {
    const at = this.pos;
    this.need(length);
    this.charge(COST.string + length, at);
    this.pos += length;
    // Most strings in a trace are ASCII keys and names: latin1 is the same text and much cheaper to build.
    for (let i = at; i < at + length; i++) {
      if ((this.bytes[i] as number) >= 0x80) return decodeUtf8(this.bytes.subarray(at, at + length), at);
    }
    return this.text.toString("latin1", at, at + length);
  }

  private binary(length: number): Uint8Array {
    const at = this.pos;
    this.need(length);
    this.charge(COST.binary + length, at);
    this.pos += length;
    return this.bytes.slice(at, at + length);
  }

  private big(read: () => bigint): bigint {
    this.need(8);
    this.charge(COST.bigint, this.pos);
    const v = read();
    this.pos += 8;
    return v;
  }

  private fixed(size: number, read: (offset: number) => number): number {
    this.need(size);
    const v = read(this.pos);
    this.pos += size;
    return v;
  }

  private u8(): number {
    this.need(1);
    return this.bytes[this.pos++] as number;
  }

  private u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  private u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  private need(n: number): void {
    if (this.pos + n > this.bytes.length) {
      throw new MsgpackError(this.pos, "the data ends early (truncated file?)", true);
    }
  }

  private charge(bytes: number, at: number): void {
    this.spent += bytes;
    if (this.spent > this.limits.maxDecodedBytes) {
      throw new MsgpackError(
        at,
        `decoded size would exceed ${this.limits.maxDecodedBytes} bytes (the limit for an input of ${this.bytes.length} bytes)`,
      );
    }
  }
}

function decodeUtf8(slice: Uint8Array, at: number): string {
  try {
    return utf8.decode(slice);
  } catch {
    throw new MsgpackError(at, "a string that is not valid UTF-8");
  }
}
