// SipHash-1-3, as Rust's std `DefaultHasher` computes it (`DefaultHasher::new()` uses zero keys), so
// that hashes we compute match the ones SimKube writes into traces and annotations.
//
// Why not BigInt: a BigInt SipHash costs ~100 µs per pod spec. Here each 64-bit lane is a pair of
// int32 halves kept in local variables while blocks run (int32 only, so V8 keeps them in registers
// and never boxes them as doubles), and input bytes are gathered in one reusable buffer and
// compressed 8 at a time through an Int32Array view of it (no per-byte calls).
//
// Rust semantics kept here (core::hash::sip):
// - `write` calls concatenate: the hash depends only on the byte stream, not on how it was split;
// - `finish` pads the last partial block with zeros and puts `(total length & 0xff)` in its top byte,
//   then runs 3 finalization rounds; it does not consume the hasher;
// - `write_str` is the UTF-8 bytes followed by a single 0xff byte (0xff never occurs in UTF-8).

const BUFFER_BYTES = 2048; // a multiple of 8; big enough that most pod specs need few flushes
const MAX_UTF8_PER_UTF16_UNIT = 3;

const TWO_32 = 0x1_0000_0000;

// The block loop reads 32-bit words straight from the byte buffer; that is little-endian only on
// little-endian hosts, so big-endian hosts assemble words byte by byte instead.
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const utf8 = new TextEncoder();

/** A u64 as two unsigned 32-bit halves. */
export interface U64Parts {
  lo: number;
  hi: number;
}

export class SipHasher13 {
  // v0..v3 as lo/hi int32 halves: [v0l, v0h, v1l, v1h, v2l, v2h, v3l, v3h].
  private readonly state = new Int32Array(8);
  private readonly initial = new Int32Array(8);
  private readonly buf = new Uint8Array(BUFFER_BYTES);
  private readonly words = new Int32Array(this.buf.buffer);
  private pos = 0; // bytes pending in buf
  private compressedBytes = 0; // bytes already compressed, mod 256 (all that finish needs)
  private nonAscii = false;

  /** Keys as u64 parts; Rust's DefaultHasher uses zero keys. */
  constructor(k0: U64Parts = { lo: 0, hi: 0 }, k1: U64Parts = { lo: 0, hi: 0 }) {
    // Initial constants: "somepseudorandomlygeneratedbytes".
    this.initial.set([
      k0.lo ^ 0x70736575,
      k0.hi ^ 0x736f6d65,
      k1.lo ^ 0x6e646f6d,
      k1.hi ^ 0x646f7261,
      k0.lo ^ 0x6e657261,
      k0.hi ^ 0x6c796765,
      k1.lo ^ 0x79746573,
      k1.hi ^ 0x74656462,
    ]);
    this.state.set(this.initial);
  }

  /**
   * Back to the state of a new hasher with the same keys. Reusing one hasher is much cheaper than
   * making one per hash: allocating the buffer costs about as much as hashing a small pod spec.
   */
  reset(): this {
    this.state.set(this.initial);
    this.pos = 0;
    this.compressedBytes = 0;
    this.nonAscii = false;
    return this;
  }

  /**
   * Whether a string with a character beyond ASCII was written since the hasher was made or reset. A
   * caller that orders strings by UTF-16 units (cheaper) can tell from it whether that order may differ
   * from UTF-8's, which only a character beyond ASCII can make it do.
   */
  get wroteNonAscii(): boolean {
    return this.nonAscii;
  }

  /** Feeds bytes (Rust `Hasher::write`). */
  write(bytes: Uint8Array): this {
    let i = 0;
    const n = bytes.length;
    while (i < n) {
      if (this.pos === BUFFER_BYTES) this.flush();
      const take = Math.min(n - i, BUFFER_BYTES - this.pos);
      if (take < 16) {
        for (let j = 0; j < take; j++) this.buf[this.pos + j] = bytes[i + j] as number;
      } else {
        this.buf.set(bytes.subarray(i, i + take), this.pos);
      }
      this.pos += take;
      i += take;
    }
    return this;
  }

  /** One byte (Rust `write_u8`: how a `bool` hashes). */
  writeU8(byte: number): this {
    if (this.pos === BUFFER_BYTES) this.flush();
    this.buf[this.pos++] = byte;
    return this;
  }

  /**
   * A u64, little-endian (Rust `write_u64`; an i64 writes the same two's-complement bytes).
   * Takes a bigint (reduced modulo 2^64, so negative i64 values work) or two 32-bit halves.
   */
  writeU64(value: bigint): this;
  writeU64(lo: number, hi: number): this;
  writeU64(loOrValue: number | bigint, hi = 0): this {
    let lo: number;
    if (typeof loOrValue === "bigint") {
      const v = BigInt.asUintN(64, loOrValue);
      lo = Number(v & 0xffff_ffffn);
      hi = Number(v >> 32n);
    } else {
      lo = loOrValue;
    }
    if (this.pos > BUFFER_BYTES - 8) this.flush();
    const b = this.buf;
    let p = this.pos;
    b[p++] = lo;
    b[p++] = lo >>> 8;
    b[p++] = lo >>> 16;
    b[p++] = lo >>> 24;
    b[p++] = hi;
    b[p++] = hi >>> 8;
    b[p++] = hi >>> 16;
    b[p++] = hi >>> 24;
    this.pos = p;
    return this;
  }

  /** Rust `str::hash`: the UTF-8 bytes of `s`, then 0xff. */
  writeStr(s: string): this {
    const n = s.length;
    if (n * MAX_UTF8_PER_UTF16_UNIT + 1 > BUFFER_BYTES - this.pos) {
      this.flush();
      if (n * MAX_UTF8_PER_UTF16_UNIT + 1 > BUFFER_BYTES - this.pos) return this.writeLongStr(s);
    }
    const b = this.buf;
    let p = this.pos;
    // Most Kubernetes strings are ASCII: copy code units until the first non-ASCII one.
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      b[p++] = c;
    }
    if (i < n) {
      this.nonAscii = true;
      // encodeInto turns lone surrogates into U+FFFD, as Rust's String cannot hold them anyway.
      p += utf8.encodeInto(i === 0 ? s : s.slice(i), b.subarray(p)).written;
    }
    b[p++] = 0xff;
    this.pos = p;
    return this;
  }

  /** The hash of everything written so far (Rust `finish`; the hasher stays usable). */
  finish(): bigint {
    const { lo, hi } = this.finishParts();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** `finish()` as a decimal string, the form SimKube writes into annotations. */
  finishDecimal(): string {
    const { lo, hi } = this.finishParts();
    if (hi < 0x20_0000) return String(hi * TWO_32 + lo); // below 2^53: exact as a number
    return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  /** `finish()` as two unsigned 32-bit halves. */
  finishParts(): U64Parts {
    this.flush();
    // The last block: the pending bytes (< 8), zero-padded, total length mod 256 in the top byte.
    const tailBytes = this.pos;
    const b = this.buf;
    let mlo = 0;
    let mhi = ((this.compressedBytes + tailBytes) & 0xff) << 24;
    for (let i = 0; i < tailBytes; i++) {
      if (i < 4) mlo |= (b[i] as number) << (8 * i);
      else mhi |= (b[i] as number) << (8 * (i - 4));
    }
    const last = finishScratch;
    last[0] = mlo;
    last[1] = mhi;
    // Finalize a copy, so that the hasher can go on: compress the last block, v2 ^= 0xff, then three
    // more rounds (a round is a compression of a zero block).
    const v = finishState;
    v.set(this.state);
    compress(v, last, 1);
    v[4] = (v[4] as number) ^ 0xff;
    compress(v, ZERO_BLOCKS, 3);
    return {
      lo: ((v[0] as number) ^ (v[2] as number) ^ (v[4] as number) ^ (v[6] as number)) >>> 0,
      hi: ((v[1] as number) ^ (v[3] as number) ^ (v[5] as number) ^ (v[7] as number)) >>> 0,
    };
  }

  // Strings too long for the buffer (rare: a huge env value or annotation-sized blob), in pieces.
  private writeLongStr(s: string): this {
    let rest = s;
    while (rest.length > 0) {
      if (BUFFER_BYTES - this.pos < 4) this.flush();
      const { read, written } = utf8.encodeInto(rest, this.buf.subarray(this.pos));
      if (written !== read) this.nonAscii = true; // only characters beyond ASCII take more than a byte
      this.pos += written;
      rest = rest.slice(read);
    }
    return this.writeU8(0xff);
  }

  // Compresses every complete 8-byte block in the buffer and moves the remainder (< 8 bytes) to its start.
  private flush(): void {
    const blocks = this.pos >>> 3;
    if (blocks === 0) return;
    const b = this.buf;
    if (LITTLE_ENDIAN) {
      compress(this.state, this.words, blocks);
    } else {
      const w = beScratch;
      for (let k = 0; k < blocks; k++) {
        for (let half = 0; half < 2; half++) {
          const o = 8 * k + 4 * half;
          w[half] =
            (b[o] as number) |
            ((b[o + 1] as number) << 8) |
            ((b[o + 2] as number) << 16) |
            ((b[o + 3] as number) << 24);
        }
        compress(this.state, w, 1);
      }
    }
    const used = blocks * 8;
    for (let i = used; i < this.pos; i++) b[i - used] = b[i] as number;
    this.pos -= used;
    this.compressedBytes = (this.compressedBytes + used) & 0xff;
  }
}

const finishScratch = new Int32Array(2);
const finishState = new Int32Array(8);
const beScratch = new Int32Array(2);
const ZERO_BLOCKS = new Int32Array(6);

/**
 * SipHash-1-3 compression of `blocks` 8-byte blocks (words[2k] low half, words[2k+1] high half) into
 * `v`. One SipRound per block. 64-bit arithmetic on int32 halves, all in locals: a carry out of
 * the low half is the top bit of (a & b) | ((a | b) & ~sum), so no value ever leaves int32.
 */
function compress(v: Int32Array, words: Int32Array, blocks: number): void {
  let v0l = v[0] as number;
  let v0h = v[1] as number;
  let v1l = v[2] as number;
  let v1h = v[3] as number;
  let v2l = v[4] as number;
  let v2h = v[5] as number;
  let v3l = v[6] as number;
  let v3h = v[7] as number;
  let t: number;
  let lo: number;
  for (let k = 0; k < blocks; k++) {
    const ml = words[2 * k] as number;
    const mh = words[2 * k + 1] as number;
    v3l ^= ml;
    v3h ^= mh;
    // v0 += v1; v1 = rotl(v1, 13) ^ v0; v0 = rotl(v0, 32)
    lo = (v0l + v1l) | 0;
    v0h = (v0h + v1h + (((v0l & v1l) | ((v0l | v1l) & ~lo)) >>> 31)) | 0;
    v0l = lo;
    t = v1l;
    v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l;
    v1h = ((v1h << 13) | (t >>> 19)) ^ v0h;
    t = v0l;
    v0l = v0h;
    v0h = t;
    // v2 += v3; v3 = rotl(v3, 16) ^ v2
    lo = (v2l + v3l) | 0;
    v2h = (v2h + v3h + (((v2l & v3l) | ((v2l | v3l) & ~lo)) >>> 31)) | 0;
    v2l = lo;
    t = v3l;
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l;
    v3h = ((v3h << 16) | (t >>> 16)) ^ v2h;
    // v0 += v3; v3 = rotl(v3, 21) ^ v0
    lo = (v0l + v3l) | 0;
    v0h = (v0h + v3h + (((v0l & v3l) | ((v0l | v3l) & ~lo)) >>> 31)) | 0;
    v0l = lo;
    t = v3l;
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l;
    v3h = ((v3h << 21) | (t >>> 11)) ^ v0h;
    // v2 += v1; v1 = rotl(v1, 17) ^ v2; v2 = rotl(v2, 32)
    lo = (v2l + v1l) | 0;
    v2h = (v2h + v1h + (((v2l & v1l) | ((v2l | v1l) & ~lo)) >>> 31)) | 0;
    v2l = lo;
    t = v1l;
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l;
    v1h = ((v1h << 17) | (t >>> 15)) ^ v2h;
    t = v2l;
    v2l = v2h;
    v2h = t;
    v0l ^= ml;
    v0h ^= mh;
  }
  v[0] = v0l;
  v[1] = v0h;
  v[2] = v1l;
  v[3] = v1h;
  v[4] = v2l;
  v[5] = v2h;
  v[6] = v3l;
  v[7] = v3h;
}

/** SipHash-1-3 with zero keys of `bytes`, as a bigint (Rust: `DefaultHasher::new()`, `write`, `finish`). */
export function sipHash13(bytes: Uint8Array): bigint {
  return new SipHasher13().write(bytes).finish();
}
