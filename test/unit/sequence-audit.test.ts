import assert from "node:assert/strict";
import { test } from "node:test";
import type { ObservedPod } from "../../functions/cli/replay/lifecycle-match.js";
import { auditSequences } from "../../functions/cli/replay/sequence-audit.js";
import { FREE_ANNOTATION } from "../../shared/sequence/shard.js";

const pod = (name: string, hash: string, sequence: number, clone = false): ObservedPod => ({
  name,
  owner: `Pod default/${name}`,
  clone,
  mutated: true,
  hash,
  sequence,
});

test("a replay whose pods carry every number the store handed out: no gap, no duplicate", () => {
  const audit = auditSequences(
    [{ data: { "1": "2" } }, { data: { "9": "1" } }],
    [pod("a", "1", 0), pod("b", "1", 1), pod("c", "9", 0), pod("a-clone-1", "1", 0, true)],
  );
  assert.deepEqual(
    { ...audit, details: audit.details.length },
    { hashes: 2, handedOut: 3, storeGaps: 0, withoutPod: 0, duplicates: 0, details: 0 },
  );
});

test("free numbers left in the store, numbers without a pod, and one number on two pods are all counted", () => {
  const shard = {
    metadata: { annotations: { [FREE_ANNOTATION]: JSON.stringify({ "1": [1] }) } },
    data: { "1": "4" },
  };
  const audit = auditSequences([shard], [pod("a", "1", 0), pod("b", "1", 2), pod("c", "1", 2)]);
  assert.equal(audit.handedOut, 3);
  assert.equal(audit.storeGaps, 1, "#1 was reserved and never handed out");
  assert.equal(audit.withoutPod, 1, "#3 was handed out, no pod carries it");
  assert.equal(audit.duplicates, 1);
  assert.deepEqual(audit.details, [
    "hash 1: never handed out 1",
    "hash 1: #3 handed out, no pod carries it",
    "hash 1: 1 number(s) on two pods",
  ]);
});
