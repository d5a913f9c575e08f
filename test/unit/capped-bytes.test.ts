// CappedBytes: one buffer for a whole trace, sized from what the source announced, and never past the cap.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CappedBytes } from "../../shared/trace/capped-bytes.js";

const chunk = (size: number, fill: number) => new Uint8Array(size).fill(fill);

describe("CappedBytes", () => {
  it("keeps the chunks in order, with an exact size hint", () => {
    const bytes = new CappedBytes(1000, 6);
    assert.equal(bytes.append(chunk(2, 1)), true);
    assert.equal(bytes.append(chunk(4, 2)), true);
    assert.deepEqual([...bytes.bytes()], [1, 1, 2, 2, 2, 2]);
  });

  it("grows when the source sends more than it announced, or announced nothing", () => {
    for (const hint of [undefined, 3, 0, Number.NaN]) {
      const bytes = new CappedBytes(1_000_000, hint);
      for (let i = 0; i < 20; i++) assert.equal(bytes.append(chunk(10_000, i)), true);
      const all = bytes.bytes();
      assert.equal(all.length, 200_000, `hint ${hint}`);
      for (let i = 0; i < 20; i++) assert.equal(all[i * 10_000 + 9_999], i, `hint ${hint}, chunk ${i}`);
    }
  });

  it("refuses the chunk that would pass the cap, whatever the hint said", () => {
    const bytes = new CappedBytes(10, 1_000_000);
    assert.equal(bytes.append(chunk(6, 1)), true);
    assert.equal(bytes.append(chunk(4, 2)), true);
    assert.equal(bytes.append(chunk(1, 3)), false);
    assert.equal(bytes.size, 10);
    assert.deepEqual([...bytes.bytes()], [1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
  });
});
