// bench:knative-cold takes each pod's start apart from containerd's log: the right pod's calls (not another
// pod's, not an earlier sandbox of the same name), each container by its sandbox, times to the sub-millisecond.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseNanoTime, podStartFromLog } from "../bench/pod-start-log.js";
import { startPieces } from "../bench/pod-start-pieces.js";

const line = (time: string, msg: string) =>
  `time="2026-12-06T19:00:${time}Z" level=info msg="${msg.replaceAll('"', '\\"')}"`;
const sandbox = (pod: string) =>
  `RunPodSandbox for &PodSandboxMetadata{Name:${pod},Uid:u1,Namespace:ns,Attempt:0,}`;
const create = (sid: string, name: string) =>
  `CreateContainer within sandbox "${sid}" for container &ContainerMetadata{Name:${name},Attempt:0,}`;
const created = (sid: string, name: string, cid: string) =>
  `CreateContainer within sandbox "${sid}" for &ContainerMetadata{Name:${name},Attempt:0,} returns container id "${cid}"`;

const LOG = [
  line("00.000000000", sandbox("fn-1")),
  line("00.100000000", sandbox("other")),
  line("00.150000000", `${sandbox("other")} returns sandbox id "bbb"`),
  line("00.200000000", `${sandbox("fn-1")} returns sandbox id "aaa"`),
  line("00.210000000", create("bbb", "function")),
  line("00.220000000", create("aaa", "function")),
  line("00.250000000", created("aaa", "function", "c1")),
  line("00.251000000", 'StartContainer for "c1"'),
  line("00.300500000", 'StartContainer for "c1" returns successfully'),
  line("00.310000000", create("aaa", "queue-proxy")),
  line("00.320000000", created("aaa", "queue-proxy", "c2")),
  line("00.330000000", 'StartContainer for "c2"'),
  line("00.400000000", 'StartContainer for "c2" returns successfully'),
  'time="2026-12-06T19:00:01.000000000Z" level=warning msg="not a CRI call"',
  "a line that is not logfmt at all",
].join("\n");

describe("bench:knative-cold's pod start from containerd's log", () => {
  it("reads RFC 3339 times with nanoseconds as ms since the epoch", () => {
    assert.equal(parseNanoTime("1970-01-01T00:00:01.000500000Z"), 1000.5);
    assert.equal(parseNanoTime("1970-01-01T01:00:01+01:00"), 1000);
    assert.equal(parseNanoTime("yesterday"), undefined);
  });

  it("finds the pod's sandbox and its containers in order, ignoring another pod's", () => {
    const start = podStartFromLog(LOG, "fn-1");
    const at = (s: number) => Date.parse("2026-12-06T19:00:00Z") + s;
    assert.deepEqual(start, {
      sandboxAsked: at(0),
      sandboxReady: at(200),
      containers: [
        { name: "function", createAsked: at(220), created: at(250), started: at(300.5) },
        { name: "queue-proxy", createAsked: at(310), created: at(320), started: at(400) },
      ],
    });
    assert.equal(podStartFromLog(LOG, "fn"), undefined, "a name is matched whole, not as a prefix");
  });

  it("takes the last sandbox of a name: a pod recreated under it starts anew", () => {
    const again = [LOG, line("02.000000000", sandbox("fn-1"))].join("\n");
    assert.deepEqual(podStartFromLog(again, "fn-1")?.containers, []);
  });

  it("turns the sightings and the log into pieces that follow each other", () => {
    const base = Date.parse("2026-12-06T19:00:00Z");
    const seen = { createdAt: base - 100, scheduledAt: base - 40, ipAt: base + 900 };
    const pieces = startPieces(seen, podStartFromLog(LOG, "fn-1"));
    assert.deepEqual(pieces, {
      scheduledMs: 60,
      kubeletMs: 40,
      sandboxMs: 200,
      createMs: 50,
      startMs: 50.5,
      othersMs: 99.5,
      ipAfterStartMs: 599.5,
    });
    assert.deepEqual(startPieces({}, undefined), {}, "nothing seen, nothing made up");
  });
});
