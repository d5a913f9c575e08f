import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SipHasher13, sipHash13 } from "../../shared/hash/siphash.js";
import { referenceSipHash13 } from "../support/reference-siphash.js";

// Expected values printed by rustc 1.95 with std's DefaultHasher (SipHash-1-3, zero keys):
//   let mut s = DefaultHasher::new(); <writes>; s.finish()
// A wrong round count, constant, endianness, length byte or tail padding changes all of them.

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);
const rustHash = (write: (h: SipHasher13) => void): string => {
  const h = new SipHasher13();
  write(h);
  return h.finishDecimal();
};

describe("SipHasher13 against Rust's DefaultHasher", () => {
  const prefixCases: [number, string][] = [
    [0, "15130871412783076140"],
    [1, "7541581120933061747"],
    [3, "5569996484167262381"],
    [7, "3389392686435873370"],
    [8, "16921169381604339434"],
    [9, "8471974163824919394"],
    [15, "17514137373579004394"],
    [16, "9904005486622393783"],
    [17, "5225236159122152477"],
    [63, "4061470857350050649"],
    [64, "8493894268803903686"],
  ];
  for (const [n, expected] of prefixCases) {
    test(`write(bytes 0..${n})`, () => {
      assert.equal(
        rustHash((h) => h.write(bytes(n))),
        expected,
      );
    });
  }

  test("a 1000-byte input spans several blocks", () => {
    const big = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 256);
    assert.equal(sipHash13(big), 2432718774320802998n);
  });

  test("str hashes as its UTF-8 bytes then 0xff", () => {
    assert.equal(
      rustHash((h) => h.writeStr("abc")),
      "17224545590736200989",
    );
    assert.equal(
      rustHash((h) => h.writeStr("")),
      "3476900567878811119",
    );
    assert.equal(
      rustHash((h) => h.writeStr("héllo✓😀")),
      "2269366629856892793",
    );
  });

  test("integers are 8 little-endian bytes; i64 is two's complement", () => {
    assert.equal(
      rustHash((h) => h.writeU64(1, 0)),
      "2206609067086327257",
    );
    assert.equal(
      rustHash((h) => h.writeU64(0x05060708, 0x01020304)),
      "7617054741688285970",
    );
    assert.equal(
      rustHash((h) => h.writeU64(0x0102030405060708n)),
      "7617054741688285970",
    );
    assert.equal(
      rustHash((h) => h.writeU64(2n ** 64n - 1n)),
      "3395815149532668813",
    );
    assert.equal(
      rustHash((h) => h.writeU64(-1n)),
      "3395815149532668813",
    );
    assert.equal(
      rustHash((h) => h.writeU64(-42n)),
      "17964655908796450167",
    );
  });

  test("bool is one byte, None::<()> eight zero bytes", () => {
    assert.equal(
      rustHash((h) => h.writeU8(1)),
      "4952851536318644461",
    );
    assert.equal(
      rustHash((h) => h.writeU8(0)),
      "7541581120933061747",
    );
    assert.equal(
      rustHash((h) => h.writeU64(0, 0)),
      "13646096770106105413",
    );
  });

  test("SimKube's empty stable spec as a byte stream", () => {
    // {"containers": [], "volumes": []}: two keys, two empty arrays (arrays hash no length).
    assert.equal(
      rustHash((h) => h.writeStr("containers").writeStr("volumes")),
      "17506812802394981455",
    );
  });
});

// Deterministic pseudo-random bytes (xorshift32), so failures reproduce.
function pseudoRandomBytes(n: number, seed: number): Uint8Array {
  let x = seed || 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("SipHasher13 against a BigInt reference", () => {
  test("the reference agrees with Rust", () => {
    assert.equal(referenceSipHash13(new Uint8Array(0)), 15130871412783076140n);
    assert.equal(referenceSipHash13(bytes(17)), 5225236159122152477n);
  });

  test("every length from 0 to 300, with carries in every lane", () => {
    for (let n = 0; n <= 300; n++) {
      const input = pseudoRandomBytes(n, n + 7);
      assert.equal(sipHash13(input), referenceSipHash13(input), `length ${n}`);
    }
  });

  test("inputs longer than the internal buffer (several flushes)", () => {
    for (const n of [2047, 2048, 2049, 4096 + 5, 20_000]) {
      const input = pseudoRandomBytes(n, n);
      assert.equal(sipHash13(input), referenceSipHash13(input), `length ${n}`);
    }
  });

  test("non-zero keys", () => {
    const k0 = 0x0706050403020100n;
    const k1 = 0x0f0e0d0c0b0a0908n;
    const split = (k: bigint) => ({ lo: Number(k & 0xffffffffn), hi: Number(k >> 32n) });
    for (const n of [0, 7, 8, 64]) {
      const input = bytes(n);
      assert.equal(
        new SipHasher13(split(k0), split(k1)).write(input).finish(),
        referenceSipHash13(input, k0, k1),
      );
    }
  });
});

describe("SipHasher13 streaming", () => {
  test("the hash depends on the byte stream only, not on how writes split it", () => {
    const input = pseudoRandomBytes(5000, 99);
    const whole = sipHash13(input);
    for (const seed of [1, 2, 3]) {
      const h = new SipHasher13();
      const cuts = pseudoRandomBytes(200, seed);
      let at = 0;
      for (let i = 0; at < input.length; i++) {
        const step = (cuts[i % cuts.length] as number) % 40;
        if (step === 1) h.writeU8(input[at] as number);
        else h.write(input.subarray(at, at + step));
        at = Math.min(input.length, at + step); // step 0: an empty write
      }
      assert.equal(h.finish(), whole, `seed ${seed}`);
    }
  });

  test("writeStr, writeU8 and writeU64 are the same bytes as write", () => {
    const viaHelpers = new SipHasher13()
      .writeStr("héllo")
      .writeU8(1)
      .writeU64(0x05060708, 0x01020304)
      .finish();
    const raw = new Uint8Array([...new TextEncoder().encode("héllo"), 0xff, 1, 8, 7, 6, 5, 4, 3, 2, 1]);
    assert.equal(viaHelpers, sipHash13(raw));
  });

  test("a string longer than the buffer, non-ASCII included, is hashed in pieces correctly", () => {
    const long = "kube-ä-😀-".repeat(1500); // ~ 21 KB of UTF-8, with 4-byte sequences around the cuts
    const raw = new Uint8Array([...new TextEncoder().encode(long), 0xff]);
    assert.equal(
      new SipHasher13().writeU8(7).writeStr(long).finish(),
      sipHash13(new Uint8Array([7, ...raw])),
    );
  });

  test("wroteNonAscii says whether a string beyond ASCII was written since the last reset", () => {
    const h = new SipHasher13();
    assert.equal(h.writeStr("kube-api-access").writeU8(0xff).writeU64(0x80, 0).wroteNonAscii, false);
    assert.equal(h.writeStr("caf\u00e9").wroteNonAscii, true);
    assert.equal(h.reset().wroteNonAscii, false);
    assert.equal(h.writeStr("x".repeat(5000)).wroteNonAscii, false, "a long ASCII string");
    assert.equal(
      h.writeStr(`${"x".repeat(5000)}\u{1F600}`).wroteNonAscii,
      true,
      "a long string ending beyond ASCII",
    );
  });

  test("finish does not consume the hasher", () => {
    const h = new SipHasher13().write(bytes(9));
    assert.equal(h.finish(), h.finish());
    assert.equal(h.finishDecimal(), "8471974163824919394");
    h.write(bytes(17).subarray(9));
    assert.equal(h.finish(), 5225236159122152477n);
  });

  test("finish, finishDecimal and finishParts agree, above and below 2^53", () => {
    for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      const h = new SipHasher13().write(bytes(n));
      const big = h.finish();
      const { lo, hi } = h.finishParts();
      assert.equal((BigInt(hi) << 32n) | BigInt(lo), big);
      assert.equal(h.finishDecimal(), big.toString());
    }
    // A hash below 2^53 takes the number path of finishDecimal: find one among small inputs.
    let found = false;
    for (let i = 0; i < 5000 && !found; i++) {
      const h = new SipHasher13().writeU64(i, 0);
      if (h.finish() < 2n ** 53n) {
        assert.equal(h.finishDecimal(), h.finish().toString());
        found = true;
      }
    }
    assert.ok(found, "expected a small hash among 5000 inputs");
  });
});
