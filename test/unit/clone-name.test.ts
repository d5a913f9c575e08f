import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildCloneName,
  isValidPodName,
  MAX_POD_NAME_LENGTH,
} from "../../functions/reschedule-delete/clone-name.js";

describe("buildCloneName", () => {
  const cases: Array<[string, string, string]> = [
    ["first reschedule", "the-pod", "the-pod-clone-1"],
    ["clone of a clone", "the-pod-clone-1", "the-pod-clone-2"],
    ["subsequent reschedule", "the-pod-clone-42", "the-pod-clone-43"],
    ["counter rolls over a digit", "the-pod-clone-9", "the-pod-clone-10"],
    ["only the last -clone-N counts", "a-clone-3-clone-7", "a-clone-3-clone-8"],
    ["-clone- without digits is part of the name", "the-pod-clone-x", "the-pod-clone-x-clone-1"],
    [
      "a counter too big for a number still increases",
      "p-clone-99999999999999999999",
      "p-clone-100000000000000000000",
    ],
    ["dotted names", "web.v1", "web.v1-clone-1"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(buildCloneName(input), expected));
  }

  it("keeps names up to the limit untouched", () => {
    const name = "a".repeat(MAX_POD_NAME_LENGTH - "-clone-1".length);
    assert.equal(buildCloneName(name), `${name}-clone-1`);
  });

  it("shortens a 250-character name to a valid, unique 253-character name", () => {
    const long = "a".repeat(250);
    const clone = buildCloneName(long);
    assert.equal(clone.length, MAX_POD_NAME_LENGTH);
    assert.ok(clone.endsWith("-clone-1"));
    assert.ok(isValidPodName(clone), clone);
    assert.equal(buildCloneName(long), clone, "deterministic");
    const sibling = `${"a".repeat(249)}b`;
    assert.notEqual(buildCloneName(sibling), clone, "same prefix, different name: different clone");
  });

  it("never leaves '-' or '.' before the hash", () => {
    for (const filler of ["-", ".", "-.-"]) {
      const name = `${"a".repeat(233)}${filler.repeat(30)}z`.slice(0, 253);
      const clone = buildCloneName(name);
      assert.ok(isValidPodName(clone), `${filler}: ${clone}`);
      assert.ok(clone.length <= MAX_POD_NAME_LENGTH);
    }
  });

  it("counts on from a shortened clone", () => {
    const first = buildCloneName("b".repeat(253));
    const second = buildCloneName(first);
    assert.ok(second.endsWith("-clone-2"), second);
    assert.equal(second.slice(0, -"-clone-2".length), first.slice(0, -"-clone-1".length));
    assert.ok(isValidPodName(second));
  });

  it("stays valid when the counter grows a digit at the limit", () => {
    const atLimit = `${"c".repeat(MAX_POD_NAME_LENGTH - "-clone-9".length)}-clone-9`;
    const next = buildCloneName(atLimit);
    assert.ok(next.endsWith("-clone-10"), next);
    assert.ok(next.length <= MAX_POD_NAME_LENGTH && isValidPodName(next), next);
  });
});

describe("isValidPodName", () => {
  it("accepts DNS-1123 subdomains only", () => {
    assert.equal(isValidPodName("the-pod-clone-1"), true);
    assert.equal(isValidPodName("a.b-c"), true);
    assert.equal(isValidPodName("-a"), false);
    assert.equal(isValidPodName("a-"), false);
    assert.equal(isValidPodName("a.-b"), false);
    assert.equal(isValidPodName("A"), false);
    assert.equal(isValidPodName("a".repeat(254)), false);
  });
});
