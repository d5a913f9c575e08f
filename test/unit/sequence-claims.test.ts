import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rememberClaims } from "../../functions/mutate-create/sequence-claims.js";
import { createMemorySequenceStore, type SequenceStore } from "../../shared/sequence/store.js";

const SCOPE = {
  simName: "test-sim",
  owner: { apiVersion: "simkube.io/v1", kind: "SimulationRoot", name: "r", uid: "1" },
};

describe("rememberClaims: a repeated admission call gets the same number", () => {
  test("the same request uid twice: one number; another uid: the next one", async () => {
    const store = rememberClaims(createMemorySequenceStore());
    assert.equal(await store.next("42", SCOPE, "uid-a"), 0);
    assert.equal(await store.next("42", SCOPE, "uid-a"), 0);
    assert.equal(await store.next("42", SCOPE, "uid-b"), 1);
    assert.equal(await store.next("42", SCOPE), 2, "no claim: always a new number");
    assert.equal(await store.next("42", { simName: "other" }, "uid-a"), 0, "per simulation run");
  });

  test("concurrent repeats share the first call's answer", async () => {
    const store = rememberClaims(createMemorySequenceStore());
    const got = await Promise.all([store.next("7", SCOPE, "u"), store.next("7", SCOPE, "u")]);
    assert.deepEqual(got, [0, 0]);
  });

  test("a call that got no number is not remembered: its repeat asks again", async () => {
    let calls = 0;
    const flaky: SequenceStore = {
      next: async () => {
        calls += 1;
        if (calls === 1) throw new Error("store busy");
        return 5;
      },
    };
    const store = rememberClaims(flaky);
    await assert.rejects(store.next("7", SCOPE, "u"), /store busy/);
    assert.equal(await store.next("7", SCOPE, "u"), 5);
  });

  test("claims are forgotten after the TTL and past the limit, oldest first", async () => {
    let clock = 0;
    const store = rememberClaims(createMemorySequenceStore(), { ttlMs: 1000, limit: 2, now: () => clock });
    assert.equal(await store.next("7", SCOPE, "a"), 0);
    clock = 1500;
    assert.equal(await store.next("7", SCOPE, "a"), 1, "expired");
    assert.equal(await store.next("7", SCOPE, "b"), 2);
    assert.equal(await store.next("7", SCOPE, "c"), 3);
    assert.equal(await store.next("7", SCOPE, "d"), 4);
    assert.equal(await store.next("7", SCOPE, "d"), 4);
    assert.equal(await store.next("7", SCOPE, "b"), 5, "b was the oldest past the limit of 2");
  });
});
