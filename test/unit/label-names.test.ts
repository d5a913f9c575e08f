// Label keys and values as the API server validates them (apimachinery's IsQualifiedName and
// IsValidLabelValue): shared by --monitor-label and the sequence ConfigMaps' simulation label.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isLabelKey, isLabelValue } from "../../shared/base/index.js";

describe("label keys and values", () => {
  it("takes keys with and without a DNS-subdomain prefix, and refuses the rest", () => {
    for (const key of ["a", "release", "A.b-c_D9", "team/x", "app.kubernetes.io/name", "x".repeat(63)]) {
      assert.equal(isLabelKey(key), true, key);
    }
    for (const key of ["", "x_", "-a", "a b", "/a", "Team/x", "a/", "x".repeat(64), `${"a".repeat(254)}/x`]) {
      assert.equal(isLabelKey(key), false, key);
    }
  });

  it("takes empty values and label-name-shaped ones up to 63 characters", () => {
    for (const value of ["", "a", "a.b", "A-b_9", "v".repeat(63)])
      assert.equal(isLabelValue(value), true, value);
    for (const value of ["a b", "a/b", "_a", "a.", "v".repeat(64)])
      assert.equal(isLabelValue(value), false, value);
  });
});
