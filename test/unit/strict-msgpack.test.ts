// The strict decoder: every plain msgpack format as msgpackr reads it, and nothing else.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Packr, Unpackr } from "msgpackr";
import { decodeMsgpack, MsgpackError } from "../../shared/trace/strict-msgpack.js";

const ROOMY = { maxDepth: 1_000, maxDecodedBytes: 1e9 };
// How shared/trace/reader.ts read traces before: the reference for "decodes the same".
const reference = new Unpackr({ mapsAsObjects: false, int64AsType: "bigint", useRecords: false });

function assertMsgpackError(bytes: Uint8Array, message: RegExp, limits = ROOMY): MsgpackError {
  let caught: unknown;
  assert.throws(
    () => decodeMsgpack(bytes, limits),
    (err: unknown) => {
      caught = err;
      assert.ok(err instanceof MsgpackError, `expected a MsgpackError, got ${String(err)}`);
      assert.match(err.message, message);
      return true;
    },
  );
  return caught as MsgpackError;
}

describe("decodeMsgpack: plain formats", () => {
  it("decodes every format the way msgpackr does", () => {
    const packr = new Packr({ useRecords: false, variableMapSize: true });
    const long = "x".repeat(70_000);
    const value = new Map<unknown, unknown>([
      [
        "small ints",
        [0, 1, 127, -1, -32, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, -33, -128, -129, -32_768],
      ],
      ["more ints", [-32_769, -(2 ** 31), 2n ** 64n - 1n, -(2n ** 63n), 2n ** 53n + 1n]],
      ["floats", [0.5, -1.25e300, Number.MAX_VALUE]],
      ["strings", ["", "a", "é€😀", "y".repeat(31), "z".repeat(32), "w".repeat(300), long]],
      ["bin", [Uint8Array.of(), Uint8Array.of(1, 2, 3), new Uint8Array(70_000)]],
      ["nil and bools", [null, true, false]],
      [[1, "array key"], new Map([[7, "int key"]])],
      [
        "big containers",
        [
          Array.from({ length: 70_000 }, (_, i) => i % 100),
          new Map(Array.from({ length: 20 }, (_, i) => [i, i])),
        ],
      ],
    ]);
    const bytes = packr.pack(value);
    assert.deepEqual(decodeMsgpack(bytes, ROOMY), reference.unpack(bytes));
  });

  it("decodes float32 exactly", () => {
    assert.equal(decodeMsgpack(Uint8Array.of(0xca, 0x3f, 0xc0, 0, 0), ROOMY), 1.5);
  });
});

describe("decodeMsgpack: refused input", () => {
  it("refuses every extension format, naming the type and the byte", () => {
    const cases: Array<[number[], string]> = [
      [[0xd4, 0x72, 0x40], "extension type 114"], // msgpackr's record definition
      [[0xd5, 0x72, 0x40, 0x00], "extension type 114"],
      [[0xd6, 0x69, 0, 0, 0, 1], "extension type 105"], // structured clone id
      [[0xd6, 0x70, 0, 0, 0, 1], "extension type 112"], // structured clone pointer
      [[0xd6, 0xff, 0, 0, 0, 0], "extension type -1"], // timestamp
      [[0xd7, 0x62, 0, 0, 0, 0, 0, 0, 0, 0], "extension type 98"], // bundled strings
      [[0xd8, 0x01, ...new Array(16).fill(0)], "extension type 1"],
      [[0xc7, 1, 0x73, 0], "extension type 115"], // Set
      [[0xc8, 0, 1, 0x78, 0], "extension type 120"], // RegExp
      [[0xc9, 0, 0, 0, 1, 0x65, 0], "extension type 101"], // Error
      [[0xd4], "an extension type"],
    ];
    for (const [bytes, what] of cases) {
      const err = assertMsgpackError(
        Uint8Array.from([0x92, 0x01, ...bytes]),
        new RegExp(`${what} is not allowed`),
      );
      assert.equal(err.offset, 2, what);
    }
  });

  it("does not let a record definition reinterpret later fixints, as msgpackr does", () => {
    // [record {a, b} = (1, 2), 0x40 3 4]: msgpackr reads the second element as a record too.
    const bytes = Uint8Array.of(0x92, 0xd4, 0x72, 0x40, 0x92, 0xa1, 0x61, 0xa1, 0x62, 1, 2, 0x40, 3, 4);
    assert.deepEqual(reference.unpack(bytes), [
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]);
    assertMsgpackError(bytes, /extension type 114 is not allowed: .*\(at byte 1\)/);
  });

  it("refuses 0xc1, trailing bytes, truncation and invalid UTF-8", () => {
    assertMsgpackError(Uint8Array.of(0xc1), /byte 0xc1 is never used/);
    assertMsgpackError(Uint8Array.of(0x01, 0x02), /1 bytes follow the end of the value \(at byte 1\)/);
    const truncated = assertMsgpackError(Uint8Array.of(0xa5, 0x61), /the data ends early/);
    assert.equal(truncated.truncated, true);
    assertMsgpackError(Uint8Array.of(0xcf, 0, 0), /the data ends early/);
    assertMsgpackError(Uint8Array.of(0xa2, 0xc3, 0x28), /a string that is not valid UTF-8 \(at byte 1\)/);
  });

  it("refuses a count the remaining bytes cannot hold, before allocating anything", () => {
    // An array32 of 2^32-1 items in 7 bytes: msgpackr would try new Array(4294967295).
    assertMsgpackError(
      Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02),
      /array of 4294967295 items cannot fit in the 2 bytes left \(at byte 0\)/,
    );
    assertMsgpackError(
      Uint8Array.of(0x82, 0x01, 0x02, 0x03),
      /map of 2 items cannot fit in the 3 bytes left/,
    );
  });

  it("refuses nesting deeper than the limit without exhausting the stack", () => {
    const nested = (depth: number) => Uint8Array.from([...new Array(depth).fill(0x91), 0x01]);
    assert.deepEqual(decodeMsgpack(nested(3), { ...ROOMY, maxDepth: 3 }), [[[1]]]);
    assertMsgpackError(nested(4), /nesting deeper than 3 levels \(at byte 3\)/, { ...ROOMY, maxDepth: 3 });
    // A million levels in a megabyte: refused at the limit, long before the call stack runs out.
    assertMsgpackError(nested(1_000_000), /nesting deeper than 128 levels \(at byte 128\)/, {
      ...ROOMY,
      maxDepth: 128,
    });
  });

  it("stops when the decoded size estimate passes the budget", () => {
    // 100,000 empty maps: one byte each on the wire, ~100 bytes each on the heap.
    const bytes = Buffer.concat([Buffer.from([0xdd, 0x00, 0x01, 0x86, 0xa0]), Buffer.alloc(100_000, 0x80)]);
    assert.equal((decodeMsgpack(bytes, ROOMY) as unknown[]).length, 100_000);
    assertMsgpackError(bytes, /decoded size would exceed 1000000 bytes/, {
      ...ROOMY,
      maxDecodedBytes: 1_000_000,
    });
  });
});
