// Readiness's verdicts from a scripted check: never ready before a success, steady through a transient
// failure, cached for its TTL, one check at a time. (A fake clock; no sockets.)

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeReadFailure } from "../../functions/runtime/api-readiness.js";
import { createReadiness, type ReadinessVerdict } from "../../functions/runtime/readiness.js";
import { KubeError } from "../../shared/kube/api.js";

/** A check answering from a script (undefined: ok, a string: the failure), counting its calls. */
function scripted(results: (string | undefined)[]) {
  const script = [...results];
  let calls = 0;
  return {
    check: async () => {
      calls++;
      return script.length > 1 ? script.shift() : script[0];
    },
    calls: () => calls,
  };
}

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** Lets background checks (started by a stale current()) finish. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("createReadiness", () => {
  it("is not ready before a check succeeded, and says why", async () => {
    const s = scripted(["the API server is unreachable: connect ECONNREFUSED"]);
    const readiness = createReadiness(s.check);
    assert.deepEqual(await readiness.current(), {
      ready: false,
      reason: "the API server is unreachable: connect ECONNREFUSED",
    });
  });

  it("reuses a verdict within its TTL: probes do not reach the API each time", async () => {
    const c = clock();
    const s = scripted([undefined]);
    const readiness = createReadiness(s.check, { ttlMs: 5_000, now: c.now });
    for (let i = 0; i < 20; i++) assert.equal((await readiness.current()).ready, true);
    assert.equal(s.calls(), 1);
    c.advance(4_999);
    await readiness.current();
    await settle();
    assert.equal(s.calls(), 1);
    c.advance(1);
    await readiness.current();
    await settle();
    assert.equal(s.calls(), 2);
  });

  it("a stale verdict is answered at once and refreshed once in the background", async () => {
    const c = clock();
    let release: (() => void) | undefined;
    let calls = 0;
    const readiness = createReadiness(
      async () => {
        calls++;
        if (calls > 1) await new Promise<void>((resolve) => (release = resolve));
        return undefined;
      },
      { ttlMs: 1_000, now: c.now },
    );
    await readiness.current();
    c.advance(2_000);
    const answers = await Promise.all([readiness.current(), readiness.current(), readiness.current()]);
    assert.deepEqual(answers, [{ ready: true }, { ready: true }, { ready: true }]);
    assert.equal(calls, 2, "one refresh for three stale probes");
    release?.();
  });

  it("stays ready through fewer failures in a row than failuresToUnready, then turns not ready", async () => {
    const c = clock();
    const s = scripted([undefined, "blip", "blip", "blip"]);
    const changes: ReadinessVerdict[] = [];
    const readiness = createReadiness(s.check, {
      ttlMs: 0,
      failuresToUnready: 3,
      now: c.now,
      onChange: (v) => changes.push(v),
    });
    assert.deepEqual(await readiness.checkNow(), { ready: true });
    assert.deepEqual(await readiness.checkNow(), { ready: true, reason: "blip" });
    assert.deepEqual(await readiness.checkNow(), { ready: true, reason: "blip" });
    assert.deepEqual(await readiness.checkNow(), { ready: false, reason: "blip" });
    assert.deepEqual(changes, [{ ready: true }, { ready: false, reason: "blip" }]);
  });

  it("one success in between starts the count again; a success makes a not-ready function ready", async () => {
    const s = scripted([undefined, "blip", "blip", undefined, "blip", "blip", undefined]);
    const readiness = createReadiness(s.check, { ttlMs: 0, failuresToUnready: 3 });
    const seen: boolean[] = [];
    for (let i = 0; i < 7; i++) seen.push((await readiness.checkNow()).ready);
    assert.deepEqual(seen, [true, true, true, true, true, true, true]);
    const failing = createReadiness(scripted(["down", undefined]).check, { ttlMs: 0 });
    assert.equal((await failing.checkNow()).ready, false);
    assert.equal((await failing.checkNow()).ready, true);
  });

  it("a check that throws is a failure with its message, never an unhandled rejection", async () => {
    const readiness = createReadiness(async () => {
      throw new Error("boom");
    });
    assert.deepEqual(await readiness.current(), { ready: false, reason: "readiness check failed: boom" });
  });
});

describe("describeReadFailure", () => {
  it("names what is missing: the API server, credentials, RBAC, the CRDs", () => {
    const cases: [KubeError, RegExp][] = [
      [
        new KubeError(0, "ConnectionError", "connect ECONNREFUSED 10.0.0.1:443"),
        /^the API server is unreachable: connect ECONNREFUSED/,
      ],
      [
        new KubeError(401, "Unauthorized", "Unauthorized"),
        /^the API server refuses this function's credentials \(401\)/,
      ],
      [
        new KubeError(
          403,
          "Forbidden",
          'simulations.simkube.io "x" is forbidden: User "system:serviceaccount:fn:sa" cannot get',
        ),
        /^RBAC forbids the read this function needs \(get simulations\.simkube\.io\): .*cannot get$/,
      ],
      [
        new KubeError(404, "UnknownKind", "the server does not serve this kind"),
        /^the API server serves no simkube\.io\/v1 Simulation: install SimKube's CRDs/,
      ],
      [
        new KubeError(500, "InternalError", "etcd down"),
        /^get simulations\.simkube\.io failed \(500 InternalError\): etcd down$/,
      ],
    ];
    for (const [err, expected] of cases) {
      const line = describeReadFailure(err);
      assert.match(line, expected);
      assert.ok(!line.includes("\n"), "one line");
    }
  });
});
