// reviewPathCheck: which request paths are the review path. It compares in constant time without hashing,
// so these cases pin down that it still takes exactly "/" or "/<secret>" (query ignored) and nothing else,
// including a path whose characters only look like the secret's bytes after a lossy encoding.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reviewPathCheck } from "../../functions/runtime/path-secret.js";

const SECRET = "abcdefghij_-0123456789XYZ";

describe("reviewPathCheck", () => {
  it("takes / without a secret, with or without a query, and nothing else", () => {
    const isReview = reviewPathCheck(undefined);
    assert.equal(isReview("/"), true);
    assert.equal(isReview("/?timeout=10s"), true);
    for (const path of ["", "//", "/x", `/${SECRET}`, "/healthz"]) assert.equal(isReview(path), false, path);
  });

  it("takes /<secret> with or without a query", () => {
    const isReview = reviewPathCheck(SECRET);
    assert.equal(isReview(`/${SECRET}`), true);
    assert.equal(isReview(`/${SECRET}?timeout=10s`), true);
    // The same check, called again: the scratch buffer holds nothing over from the last call.
    assert.equal(isReview(`/${SECRET}`), true);
  });

  it("refuses every other path: shorter, longer, a prefix, a neighbour, or /", () => {
    const isReview = reviewPathCheck(SECRET);
    const others = [
      "",
      "/",
      `/${SECRET.slice(0, -1)}`,
      `/${SECRET}x`,
      `/${SECRET}/`,
      `//${SECRET.slice(1)}`,
      `/${SECRET.slice(0, -1)}z`,
      `/${SECRET.toLowerCase()}`,
    ];
    for (const path of others) assert.equal(isReview(path), false, path);
  });

  it("refuses non-ASCII look-alikes whose low byte is the secret's last character", () => {
    const isReview = reviewPathCheck(SECRET);
    // U+015A's low byte is 0x5A ("Z"), U+0100's is 0x00: a latin1 write would have let the first one in.
    for (const last of ["\u015a", "\u0100", "\u00da", "\ud83d\ude00"]) {
      assert.equal(isReview(`/${SECRET.slice(0, -1)}${last}`), false, JSON.stringify(last));
    }
  });
});
