// createWriteBatch: writes wait for the end of the turn (not a timer) or for a full batch, run together in the
// order queued, and one that throws neither stops the others nor escapes. What batching saves is measured by
// `npm run bench`.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createWriteBatch } from "../../functions/runtime/write-batch.js";

const noErrors = (err: unknown) => assert.fail(`a write threw: ${String(err)}`);
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createWriteBatch", () => {
  it("holds writes past the current callback and its microtasks, then runs them in order", async () => {
    const ran: string[] = [];
    const writeLater = createWriteBatch(noErrors);
    writeLater(() => ran.push("a"));
    await Promise.resolve();
    writeLater(() => ran.push("b"));
    await Promise.resolve();
    assert.deepEqual(ran, [], "nothing is written before the turn's other work");
    await nextTurn();
    assert.deepEqual(ran, ["a", "b"]);
  });

  it("writes everything queued in one turn before anything the check phase queued after it", async () => {
    const order: string[] = [];
    const writeLater = createWriteBatch(noErrors);
    writeLater(() => order.push("write 1"));
    setImmediate(() => order.push("other immediate"));
    writeLater(() => order.push("write 2"));
    await nextTurn();
    assert.deepEqual(order, ["write 1", "write 2", "other immediate"]);
  });

  it("runs a write queued while flushing in a later turn, and a batch queued after a flush", async () => {
    const ran: string[] = [];
    const writeLater = createWriteBatch(noErrors);
    writeLater(() => {
      ran.push("first");
      writeLater(() => ran.push("queued by first"));
    });
    await nextTurn();
    assert.deepEqual(ran, ["first"]);
    await nextTurn();
    assert.deepEqual(ran, ["first", "queued by first"]);
    writeLater(() => ran.push("next burst"));
    await nextTurn();
    assert.deepEqual(ran, ["first", "queued by first", "next burst"]);
  });

  it("writes a full batch at once, and what follows at the end of the turn", async () => {
    const ran: string[] = [];
    const writeLater = createWriteBatch(noErrors, 3);
    writeLater(() => ran.push("1"));
    writeLater(() => ran.push("2"));
    assert.equal(ran.length, 0);
    writeLater(() => ran.push("3"));
    assert.deepEqual(ran, ["1", "2", "3"], "the write that fills the batch flushes it");
    writeLater(() => ran.push("4"));
    assert.deepEqual(ran, ["1", "2", "3"]);
    await nextTurn();
    assert.deepEqual(ran, ["1", "2", "3", "4"]);
    await nextTurn();
    assert.deepEqual(ran, ["1", "2", "3", "4"], "each write runs once");
  });

  it("reports a write that throws and still runs the rest of its batch", async () => {
    const errors: unknown[] = [];
    const ran: string[] = [];
    const writeLater = createWriteBatch((err) => errors.push(err));
    const boom = new Error("socket gone");
    writeLater(() => ran.push("before"));
    writeLater(() => {
      throw boom;
    });
    writeLater(() => ran.push("after"));
    await nextTurn();
    assert.deepEqual(ran, ["before", "after"]);
    assert.deepEqual(errors, [boom]);
  });
});
