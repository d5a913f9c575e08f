import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { withDeadline } from "../../shared/base/deadline.js";

// The timer is mocked: the deadline passes when the test says so, not after real time.
describe("withDeadline", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());

  it("gives the work's value when the work settles first", async () => {
    const answer = withDeadline(Promise.resolve("done"), 100, () => "late");
    assert.equal(await answer, "done");
    mock.timers.tick(100); // the timer was cleared: nothing else happens
  });

  it("gives the work's rejection when the work fails first", async () => {
    await assert.rejects(
      withDeadline(Promise.reject(new Error("boom")), 100, () => "late"),
      /boom/,
    );
  });

  it("gives onLate's value once the deadline passes, and the work goes on", async () => {
    let finish: (value: string) => void = () => {};
    const work = new Promise<string>((resolve) => {
      finish = resolve;
    });
    const answer = withDeadline(work, 100, () => "late");
    mock.timers.tick(99);
    mock.timers.tick(1);
    assert.equal(await answer, "late");
    finish("done");
    assert.equal(await work, "done", "the work was not cancelled");
  });

  it("rejects with what onLate throws", async () => {
    const answer = withDeadline(new Promise<string>(() => {}), 50, () => {
      throw new Error("no answer within 50 ms");
    });
    mock.timers.tick(50);
    await assert.rejects(answer, /no answer within 50 ms/);
  });

  it("swallows a rejection of the work that comes after the deadline", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      let fail: (err: Error) => void = () => {};
      const work = new Promise<string>((_, reject) => {
        fail = reject;
      });
      const answer = withDeadline(work, 10, () => "late");
      mock.timers.tick(10);
      assert.equal(await answer, "late");
      fail(new Error("too late"));
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
