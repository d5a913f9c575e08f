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
//
// MsgpackCursor reads one value at a time, so a caller can decode the parts it needs and skip the rest
// (a trace's events are most of its bytes and the functions never look at them). Skipping checks and
// charges exactly what decoding would: the same bytes pass or fail whichever way they are read.

import { isUtf8 } from "node:buffer";

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

// Below this length a string is built in JS: a call into C++ (TextDecoder, Buffer#toString) costs more
// than it saves on the short keys and names that make up most of a trace.
const SHORT_STRING = 24;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes exactly one value that spans all of `bytes`. Throws MsgpackError. */
export function decodeMsgpack(bytes: Uint8Array, limits: MsgpackLimits): unknown {
  const cursor = new MsgpackCursor(bytes, limits);
  const value = cursor.value(1);
  cursor.expectEnd();
  return value;
}

/** Thrown by MsgpackCursor.json for a value JSON cannot hold; one instance, as it is expected, not rare. */
export class NotJsonValue extends Error {
  override readonly name = "NotJsonValue";
}
export const NOT_JSON_VALUE = new NotJsonValue("not a JSON value");

export interface CursorMark {
  readonly pos: number;
  readonly spent: number;
}

/** Reads values one after another from `bytes`, under one set of limits for all of them. */
export class MsgpackCursor {
  pos = 0;
  private spent = 0;
  private readonly view: DataView;
  private readonly text: Buffer;
  private readonly length: number;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: MsgpackLimits,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.length = bytes.length;
  }

  /** Where the cursor is, to come back to with rewind (what was charged since is given back too). */
  mark(): CursorMark {
    return { pos: this.pos, spent: this.spent };
  }

  rewind(mark: CursorMark): void {
    this.pos = mark.pos;
    this.spent = mark.spent;
  }

  /** Throws unless every byte has been read. */
  expectEnd(): void {
    if (this.pos !== this.length) {
      throw new MsgpackError(this.pos, `${this.length - this.pos} bytes follow the end of the value`);
    }
  }

  /** Decodes the next value, `depth` levels down (the top-level value is depth 1). */
  value(depth: number): unknown {
    const at = this.pos;
    if (at >= this.length) throw this.truncated(at);
    const b = this.bytes[at] as number;
    this.pos = at + 1;
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return b - 0x100;
    if (b >= 0xa0 && b <= 0xbf) return this.string(b & 0x1f);
    if (b <= 0x8f) return this.map(b & 0x0f, depth, at);
    if (b <= 0x9f) return this.array(b & 0x0f, depth, at);
    return this.tagged(b, depth, at);
  }

  /**
   * The element count of the map that comes next, its header read and checked as decoding would check it;
   * -1 (and nothing read) when the next value is not a map.
   */
  mapHeader(depth: number): number {
    const at = this.pos;
    const count = this.containerCount(0x80, 0xde);
    if (count >= 0) this.openMap(count, depth, at);
    return count;
  }

  /** As mapHeader, for an array. */
  arrayHeader(depth: number): number {
    const at = this.pos;
    const count = this.containerCount(0x90, 0xdc);
    if (count >= 0) this.openArray(count, depth, at);
    return count;
  }

  /** Moves past the next value without building it, with every check and charge decoding would make. */
  skip(depth: number): void {
    const at = this.pos;
    if (at >= this.length) throw this.truncated(at);
    const b = this.bytes[at] as number;
    this.pos = at + 1;
    if (b <= 0x7f || b >= 0xe0) return;
    if (b >= 0xa0 && b <= 0xbf) this.skipString(b & 0x1f);
    else if (b <= 0x8f) this.skipMap(b & 0x0f, depth, at);
    else if (b <= 0x9f) this.skipArray(b & 0x0f, depth, at);
    else this.skipTagged(b, depth, at);
  }

  /**
   * The next value as plain JSON, the way Kubernetes objects are used: maps become objects. Throws
   * NOT_JSON_VALUE (the cursor then inside the value: rewind) for a map key that is not a string, binary
   * data or a non-finite float. 64-bit integers become numbers, or decimal strings beyond 2^53. Checks and
   * charges as value() does.
   */
  json(depth: number): unknown {
    const at = this.pos;
    if (at >= this.length) throw this.truncated(at);
    const b = this.bytes[at] as number;
    if (b <= 0x7f) {
      this.pos = at + 1;
      return b;
    }
    if (b >= 0xa0 && b <= 0xbf) {
      this.pos = at + 1;
      return this.string(b & 0x1f);
    }
    let count = this.containerCount(0x80, 0xde);
    if (count >= 0) return this.jsonObject(count, depth, at);
    count = this.containerCount(0x90, 0xdc);
    if (count >= 0) {
      this.openArray(count, depth, at);
      const out = new Array<unknown>(count);
      for (let i = 0; i < count; i++) out[i] = this.json(depth + 1);
      return out;
    }
    const v = this.value(depth);
    if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    if (v instanceof Uint8Array || (typeof v === "number" && !Number.isFinite(v))) throw NOT_JSON_VALUE;
    return v;
  }

  private jsonObject(count: number, depth: number, at: number): Record<string, unknown> {
    this.openMap(count, depth, at);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const key = this.value(depth + 1);
      if (typeof key !== "string") throw NOT_JSON_VALUE;
      const value = this.json(depth + 1);
      // As Object.fromEntries: "__proto__" is an ordinary own property, never the prototype.
      if (key === "__proto__")
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }

  // --- containers ---

  /** Reads a fix/16/32 container header of one family; -1 and nothing read when the next value is other. */
  private containerCount(fix: number, wide: number): number {
    const at = this.pos;
    if (at >= this.length) throw this.truncated(at);
    const b = this.bytes[at] as number;
    if (b >= fix && b <= fix + 0x0f) {
      this.pos = at + 1;
      return b & 0x0f;
    }
    if (b !== wide && b !== wide + 1) return -1;
    this.pos = at + 1;
    return b === wide ? this.u16() : this.u32();
  }

  private openArray(count: number, depth: number, at: number): void {
    this.enter(count, 1, depth, at, "array");
    this.charge(COST.array + COST.slot * count, at);
  }

  private openMap(count: number, depth: number, at: number): void {
    this.enter(count, 2, depth, at, "map");
    this.charge(COST.map + COST.mapEntry * count, at);
  }

  private array(count: number, depth: number, at: number): unknown[] {
    this.openArray(count, depth, at);
    const out = new Array<unknown>(count);
    for (let i = 0; i < count; i++) out[i] = this.value(depth + 1);
    return out;
  }

  private map(count: number, depth: number, at: number): Map<unknown, unknown> {
    this.openMap(count, depth, at);
    const out = new Map<unknown, unknown>();
    for (let i = 0; i < count; i++) {
      const key = this.value(depth + 1);
      out.set(key, this.value(depth + 1));
    }
    return out;
  }

  private skipArray(count: number, depth: number, at: number): void {
    this.openArray(count, depth, at);
    for (let i = 0; i < count; i++) this.skip(depth + 1);
  }

  private skipMap(count: number, depth: number, at: number): void {
    this.openMap(count, depth, at);
    for (let i = 0; i < 2 * count; i++) this.skip(depth + 1);
  }

  // Every element takes at least one byte (a map entry two), so a count the rest of the input cannot
  // hold is a lie that would otherwise allocate up to 2^32 slots before failing.
  private enter(count: number, minBytes: number, depth: number, at: number, what: string): void {
    if (depth > this.limits.maxDepth) {
      throw new MsgpackError(at, `nesting deeper than ${this.limits.maxDepth} levels`);
    }
    const left = this.length - this.pos;
    if (count * minBytes > left) {
      const why = `the data ends early (truncated file?): ${what} of ${count} items cannot fit in the ${left} bytes left`;
      throw new MsgpackError(at, why, true);
    }
  }

  // --- everything with a format byte of its own (0xc0..0xdf) ---

  private tagged(b: number, depth: number, at: number): unknown {
    if (b >= 0xdc) {
      const count = b & 1 ? this.u32() : this.u16();
      return b <= 0xdd ? this.array(count, depth, at) : this.map(count, depth, at);
    }
    const pos = this.pos;
    switch (b) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return this.binary(this.lengthOf(b - 0xc4));
      case 0xca:
        return this.view.getFloat32(this.advance(4));
      case 0xcb:
        return this.view.getFloat64(this.advance(8));
      case 0xcc:
        return this.u8();
      case 0xcd:
        return this.u16();
      case 0xce:
        return this.u32();
      case 0xcf:
        this.charge(COST.bigint, pos);
        return this.view.getBigUint64(this.advance(8));
      case 0xd0:
        return this.view.getInt8(this.advance(1));
      case 0xd1:
        return this.view.getInt16(this.advance(2));
      case 0xd2:
        return this.view.getInt32(this.advance(4));
      case 0xd3:
        this.charge(COST.bigint, pos);
        return this.view.getBigInt64(this.advance(8));
      case 0xd9:
      case 0xda:
      case 0xdb:
        return this.string(this.lengthOf(b - 0xd9));
      default:
        throw this.refused(b, at);
    }
  }

  private skipTagged(b: number, depth: number, at: number): void {
    if (b >= 0xdc) {
      const count = b & 1 ? this.u32() : this.u16();
      if (b <= 0xdd) this.skipArray(count, depth, at);
      else this.skipMap(count, depth, at);
      return;
    }
    if (b === 0xc0 || b === 0xc2 || b === 0xc3) return;
    if (b >= 0xc4 && b <= 0xc6) {
      const length = this.lengthOf(b - 0xc4);
      this.charge(COST.binary + length, this.advance(length));
      return;
    }
    if (b >= 0xd9 && b <= 0xdb) {
      this.skipString(this.lengthOf(b - 0xd9));
      return;
    }
    // Numbers: 0xca f32, 0xcb f64, 0xcc..0xcf uint, 0xd0..0xd3 int.
    const size = NUMBER_SIZE[b - 0xc0] ?? 0;
    if (size === 0) throw this.refused(b, at);
    if (size === 8 && b !== 0xcb) this.charge(COST.bigint, this.pos);
    this.advance(size);
  }

  private refused(b: number, at: number): MsgpackError {
    if (b === 0xc1) return new MsgpackError(at, "byte 0xc1 is never used in msgpack");
    // 0xc7..0xc9, 0xd4..0xd8: the type byte follows the length (ext 8/16/32) or the format byte (fixext).
    const typeAt = b <= 0xc9 ? at + 1 + (1 << (b - 0xc7)) : at + 1;
    const type = typeAt < this.length ? (this.view.getInt8(typeAt) as number) : undefined;
    const which = type === undefined ? "an extension type" : `extension type ${type}`;
    return new MsgpackError(at, `${which} is not allowed: SimKube's traces are plain msgpack`);
  }

  // --- strings and binary ---

  private string(length: number): string {
    const at = this.pos;
    const end = this.advance(length) + length;
    this.charge(COST.string + length, at);
    const bytes = this.bytes;
    if (length < SHORT_STRING) {
      // Most strings in a trace are short ASCII keys and names: build them here.
      let s = "";
      for (let i = at; i < end; i++) {
        const c = bytes[i] as number;
        if (c >= 0x80) return decodeUtf8(bytes.subarray(at, end), at);
        s += String.fromCharCode(c);
      }
      return s;
    }
    for (let i = at; i < end; i++) {
      if ((bytes[i] as number) >= 0x80) return decodeUtf8(bytes.subarray(at, end), at);
    }
    // ASCII: latin1 is the same text and much cheaper to build than UTF-8.
    return this.text.toString("latin1", at, end);
  }

  private skipString(length: number): void {
    const at = this.pos;
    const end = this.advance(length) + length;
    this.charge(COST.string + length, at);
    const bytes = this.bytes;
    for (let i = at; i < end; i++) {
      if ((bytes[i] as number) >= 0x80) {
        if (!isUtf8(bytes.subarray(at, end))) throw notUtf8(at);
        return;
      }
    }
  }

  private binary(length: number): Uint8Array {
    const at = this.advance(length);
    this.charge(COST.binary + length, at);
    return this.bytes.slice(at, at + length);
  }

  // --- fixed-size reads ---

  /** A str/bin length of 1, 2 or 4 bytes (`size` 0, 1 or 2). */
  private lengthOf(size: number): number {
    return size === 0 ? this.u8() : size === 1 ? this.u16() : this.u32();
  }

  /** Checks that `n` bytes are left, moves past them and returns where they start. */
  private advance(n: number): number {
    const at = this.pos;
    if (at + n > this.length) throw this.truncated(at);
    this.pos = at + n;
    return at;
  }

  private u8(): number {
    return this.bytes[this.advance(1)] as number;
  }

  private u16(): number {
    return this.view.getUint16(this.advance(2));
  }

  private u32(): number {
    return this.view.getUint32(this.advance(4));
  }

  private truncated(at: number): MsgpackError {
    return new MsgpackError(at, "the data ends early (truncated file?)", true);
  }

  private charge(bytes: number, at: number): void {
    this.spent += bytes;
    if (this.spent > this.limits.maxDecodedBytes) {
      throw new MsgpackError(
        at,
        `decoded size would exceed ${this.limits.maxDecodedBytes} bytes (the limit for an input of ${this.length} bytes)`,
      );
    }
  }
}

// Payload bytes of the number formats, by format byte - 0xc0 (0: not a number).
const NUMBER_SIZE: readonly number[] = (() => {
  const sizes = new Array<number>(0x20).fill(0);
  for (const [b, size] of [
    [0xca, 4],
    [0xcb, 8],
    [0xcc, 1],
    [0xcd, 2],
    [0xce, 4],
    [0xcf, 8],
    [0xd0, 1],
    [0xd1, 2],
    [0xd2, 4],
    [0xd3, 8],
  ] as const) {
    sizes[b - 0xc0] = size;
  }
  return sizes;
})();

function notUtf8(at: number): MsgpackError {
  return new MsgpackError(at, "a string that is not valid UTF-8");
}

function decodeUtf8(slice: Uint8Array, at: number): string {
  try {
    return utf8.decode(slice);
  } catch {
    throw notUtf8(at);
  }
}
