// Holds the project to SimKube itself, not only to docs/differences-from-simkube.md:
//   - SimKube's own handler tests at 46c21b3 (their insta snapshots) are replayed through mutate-create and
//     reschedule-delete, and each answer is compared with SimKube's; where it differs, the row of the page that
//     says why is named, and the row must exist;
//   - every SimKube file the page cites or this test reads has its SHA-256 recorded: a changed file fails
//     until someone re-reads it against the page;
//   - every reason the two functions can give for a decision maps to a row of the page, or says why it is
//     what SimKube does.
// The parts that read SimKube skip with a message when its sources are not beside the repository (in CI
// they must be).

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fastJsonPatch from "fast-json-patch";
import { createMutateCreateHandler } from "../../functions/mutate-create/handler.js";
import type { LifecycleResult, MutateDecision } from "../../functions/mutate-create/stats.js";
import { createMutateStats } from "../../functions/mutate-create/stats.js";
import { createRescheduleDeleteHandler } from "../../functions/reschedule-delete/handler.js";
import { RESCHEDULE_OUTCOMES, type RescheduleOutcome } from "../../functions/reschedule-delete/outcomes.js";
import { createPendingClones } from "../../functions/reschedule-delete/pending-clones.js";
import { createRescheduleStats } from "../../functions/reschedule-delete/stats.js";
import { type AdmissionReview, decodePatch } from "../../shared/admission/review.js";
import { SIMKUBE_DRIVER_USER } from "../../shared/base/identities.js";
import type { KubeObject } from "../../shared/kube/api.js";
import { createOwnerResolver } from "../../shared/kube/owners.js";
import type { Pod } from "../../shared/kube/pod.js";
import { createMemorySequenceStore } from "../../shared/sequence/store.js";
import { createSimulationSource } from "../../shared/simulation/simulation.js";
import {
  buildCreateReview,
  buildDeleteReview,
  buildSimulation,
  buildSimulationRoot,
  rootOwnerRef,
  TEST_DEPLOYMENT,
  TEST_SIM_NAME,
} from "../support/builders.js";
import { silentLog } from "../support/logs.js";
import { objectsKube } from "../support/objects-kube.js";
import {
  parseDebugAnswer,
  parseDebugJson,
  readSimkube,
  SIMKUBE_CITED_CODE,
  SIMKUBE_CITED_NOT_IN_FOLDER,
  SIMKUBE_COMMIT,
  SIMKUBE_DIR,
  SIMKUBE_FILE_SHA256,
  sha256OfSimkube,
  simkubeMissing,
  snapshotBody,
} from "../support/simkube-46c21b3.js";
import { buildTrace, finished } from "../support/trace-builder.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const DOC = readFileSync(path.join(REPO, "docs/differences-from-simkube.md"), "utf8");
const SNAPSHOTS = "sk-driver/src/tests/snapshots";
const SNAPSHOT_PREFIX = "sk_driver__tests__mutation_test__itest__";

function tableIds(name: string): string[] {
  const begin = DOC.indexOf(`<!-- ${name}:begin -->`);
  const end = DOC.indexOf(`<!-- ${name}:end -->`);
  assert.ok(begin >= 0 && end > begin, `the page has no ${name} table`);
  return [...DOC.slice(begin, end).matchAll(/^\| `([a-z0-9-]+)` +\|/gm)].map((m) => m[1] ?? "");
}
const DIFFERENCE_ROWS = new Set(tableIds("differences"));
const SAME_ROWS = new Set(tableIds("same"));

// ---------------------------------------------------------------------------------------------------------
// Replaying SimKube's handler tests (sk-driver/src/tests/mutation_test.rs, module itest)

/**
 * What SimKube's mutate_pod adds to a pod (mutation.rs L141–153, L166ff): taking it off the snapshot's pod
 * gives the test's input pod, whose fixture lives in sk-core's test utilities, not in the folder.
 */
function withoutSimkubeMutation(mutated: Pod): Pod {
  const pod = structuredClone(mutated);
  const meta = pod.metadata ?? {};
  const labels = { ...meta.labels };
  delete labels["simkube.io/simulation"];
  delete labels["simkube.io/kwok-stage-complete"];
  meta.labels = labels;
  const annotations = Object.fromEntries(
    Object.entries(meta.annotations ?? {}).filter(
      ([k]) => !k.startsWith("simkube.io/") && !k.startsWith("static.simkube.io/pod-"),
    ),
  );
  meta.annotations = annotations;
  const spec = (pod.spec ?? {}) as {
    nodeSelector?: Record<string, string>;
    tolerations?: Array<{ key?: string }>;
  };
  const selector = { ...spec.nodeSelector };
  delete selector.type;
  if (Object.keys(selector).length > 0) spec.nodeSelector = selector;
  else delete spec.nodeSelector;
  const tolerations = (spec.tolerations ?? []).filter((t) => t.key !== "kwok-provider");
  if (tolerations.length > 0) spec.tolerations = tolerations;
  else delete spec.tolerations;
  return pod;
}

/** SimKube's test world as the API double shows it: the pod's Deployment is owned by the driver's root. */
function createWorld(): KubeObject[] {
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: TEST_DEPLOYMENT,
      namespace: "test-namespace",
      uid: "yuioyoiuy",
      ownerReferences: [rootOwnerRef()],
    },
  } as KubeObject;
  // test_mutation_handler_create sets test_sim.spec.speed = 2 for both cases.
  return [buildSimulation({ speed: 2 }), buildSimulationRoot(), deployment];
}

/** The review as SimKube's adm_req fixture builds it: uid 12345-12345, no user. */
const NO_USER = {};

async function replayCreate(running: boolean) {
  const file = `${SNAPSHOTS}/${SNAPSHOT_PREFIX}mutation_handler_create@${running}.snap`;
  const expected = parseDebugJson(snapshotBody(readSimkube(file))) as Pod;
  const input = withoutSimkubeMutation(expected);
  const kube = objectsKube(createWorld());
  const log = silentLog();
  const stats = createMutateStats();
  // In the running case the trace holds the Deployment with Finished(0, 42) under the hash SimKube's test
  // names (18161541283955474812); the other case has an empty trace.
  const owner = { gvk: "apps/v1.Deployment", nsName: `test-namespace/${TEST_DEPLOYMENT}` };
  const trace = running
    ? buildTrace({
        index: { [owner.gvk]: [owner.nsName] },
        podLifecycles: [{ ...owner, hash: "18161541283955474812", lifecycles: [finished(0, 42)] }],
      })
    : buildTrace({});
  const handle = createMutateCreateHandler({
    simName: TEST_SIM_NAME,
    log,
    owners: createOwnerResolver(kube, log),
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    sequences: createMemorySequenceStore(),
    trace,
    now: () => 0n, // MockUtcClock::boxed(0)
    stats,
  });
  const review = await handle(buildCreateReview({ pod: input, user: NO_USER, uid: "12345-12345" }));
  return { review, input, expected, stats };
}

async function replayDelete(file: string, running: boolean) {
  const expected = parseDebugAnswer(snapshotBody(readSimkube(`${SNAPSHOTS}/${file}`)));
  // SimKube's test gives the pod one owner, the root (its owners cache): a bare simulation pod.
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "the-pod",
      namespace: "test-namespace",
      uid: "asdf1234",
      ownerReferences: [rootOwnerRef()],
    },
    spec: { containers: [] },
    status: running ? { phase: "Running" } : {},
  } as Pod;
  const kube = objectsKube([...createWorld(), pod]);
  const stats = createRescheduleStats();
  const pending = createPendingClones();
  const handle = createRescheduleDeleteHandler({
    kube,
    simName: TEST_SIM_NAME,
    driverUsers: [SIMKUBE_DRIVER_USER],
    log: silentLog(),
    simulation: createSimulationSource(kube, TEST_SIM_NAME),
    stats,
    pending,
    deletionWait: { waitMs: 200, firstDelayMs: 5, maxDelayMs: 50 },
  });
  const review = await handle(buildDeleteReview({ pod, user: NO_USER, uid: "12345-12345" }));
  assert.equal(await pending.settle(10_000), true);
  return { review, expected, decisions: stats.snapshot().decisions };
}

function patchedPod(review: AdmissionReview, pod: Pod): Pod {
  const patch = decodePatch(review.response ?? { uid: "", allowed: true });
  return fastJsonPatch.applyPatch(structuredClone(pod), patch).newDocument as Pod;
}

/** A snapshot replayed: what was compared, and the row naming any difference. */
interface Replayed {
  snapshot: string;
  differs?: { row: string; what: string };
}
const replayed: Replayed[] = [];

const missing = simkubeMissing();

describe(`SimKube ${SIMKUBE_COMMIT.slice(0, 7)}'s handler snapshots, replayed`, { skip: missing }, () => {
  it("the snapshots are the four this replay knows", () => {
    const files = Object.keys(SIMKUBE_FILE_SHA256).filter((f) => f.endsWith(".snap"));
    assert.equal(files.length, 4);
    for (const f of files) assert.ok(existsSync(path.join(SIMKUBE_DIR, f)), f);
  });

  for (const running of [false, true]) {
    it(`mutation_handler_create@${running}: the same pod, patched`, async () => {
      const { review, input, expected } = await replayCreate(running);
      assert.equal(review.response?.allowed, true, review.response?.status?.message);
      assert.equal(review.response?.uid, "12345-12345");
      assert.deepEqual(patchedPod(review, input), expected);
      replayed.push({ snapshot: `create@${running}` });
    });
  }

  const deletes: Array<[string, string, boolean]> = [
    ["mutation_handler_delete (no_reschedule)", "mutation_handler_delete.snap", false],
    ["mutation_handler_delete (reschedule)", "mutation_handler_delete.snap", true],
    ["mutation_handler_delete_client_error", "mutation_handler_delete_client_error.snap", true],
  ];
  for (const [name, file, running] of deletes) {
    it(`${name}: the same answer, allowed without a patch`, async () => {
      const { review, expected, decisions } = await replayDelete(`${SNAPSHOT_PREFIX}${file}`, running);
      assert.deepEqual(
        {
          uid: review.response?.uid,
          allowed: review.response?.allowed,
          patch: review.response?.patch !== undefined,
          message: review.response?.status?.message ?? "",
        },
        { uid: expected.uid, allowed: expected.allowed, patch: expected.patch, message: expected.message },
      );
      if (!running) {
        // SimKube makes no clone of a pod that is not Running, nor does simkube-fn.
        assert.deepEqual(decisions, { "not-running": 1 });
        replayed.push({ snapshot: name });
        return;
      }
      // SimKube's test reviews with no user; SimKube clones (or tries to: the client error case); simkube-fn
      // skips a delete that names nobody. The answer is the same; the clone is not.
      assert.deepEqual(decisions, { "no-user": 1 });
      const differs = { row: "skipped-delete-users", what: "no clone for a review with no user" };
      assert.ok(DIFFERENCE_ROWS.has(differs.row), `the page has no row ${differs.row}`);
      replayed.push({ snapshot: name, differs });
    });
  }

  it("names a row for every difference it found", (t) => {
    const named = replayed.filter((r) => r.differs);
    t.diagnostic(
      `replayed ${replayed.length} reviews from 4 snapshots: ${replayed.length - named.length} the same, ` +
        `${named.length} with a named difference (${named.map((r) => `${r.snapshot}: ${r.differs?.row}`).join("; ")})`,
    );
    assert.equal(replayed.length, 5, "every replay ran");
    for (const r of named) assert.ok(DIFFERENCE_ROWS.has(r.differs?.row ?? ""), r.snapshot);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The files the page cites, and this test reads

/** Each `blob/<commit>/<path>#L<a>[-L<b>]` link of the page: the path and the last line it cites. */
function citations(): Map<string, number> {
  const cited = new Map<string, number>();
  const pattern = new RegExp(`simkube/blob/${SIMKUBE_COMMIT}/([^#)\\s]+)(?:#L(\\d+)(?:-L(\\d+))?)?`, "g");
  for (const m of DOC.matchAll(pattern)) {
    const file = m[1] ?? "";
    const last = Number(m[3] ?? m[2] ?? 0);
    cited.set(file, Math.max(cited.get(file) ?? 0, last));
  }
  return cited;
}

describe(`SimKube ${SIMKUBE_COMMIT.slice(0, 7)}'s files, as reviewed`, { skip: missing }, () => {
  it("every file the page cites is hashed here, or listed as not in the folder", () => {
    const known = new Set([...Object.keys(SIMKUBE_FILE_SHA256), ...SIMKUBE_CITED_NOT_IN_FOLDER]);
    for (const file of citations().keys())
      assert.ok(known.has(file), `${file} is cited but neither hashed nor listed`);
    for (const file of SIMKUBE_CITED_NOT_IN_FOLDER) {
      assert.equal(existsSync(path.join(SIMKUBE_DIR, file)), false, `${file} is in the folder now: hash it`);
    }
  });

  it("no file changed since it was read against the page (a new hash means: re-read it, then update it)", () => {
    for (const [file, sha] of Object.entries(SIMKUBE_FILE_SHA256)) {
      assert.equal(sha256OfSimkube(file), sha, `${file} changed`);
    }
  });

  it("every cited line exists in its file", () => {
    for (const [file, last] of citations()) {
      if (!(file in SIMKUBE_FILE_SHA256)) continue;
      const lines = readSimkube(file).split("\n").length;
      assert.ok(last <= lines, `${file}: the page cites line ${last}, the file has ${lines}`);
    }
  });

  it("every cited line range holds the code the page cites it for", () => {
    const pattern = new RegExp(
      `^\\[([a-z0-9]+)\\]: https://github\\.com/acrlabs/simkube/blob/${SIMKUBE_COMMIT}/([^#\\s]+)#L(\\d+)(?:-L(\\d+))?$`,
      "gm",
    );
    const checked: string[] = [];
    for (const m of DOC.matchAll(pattern)) {
      const [, key = "", file = "", first = "0", last] = m;
      if (!(file in SIMKUBE_FILE_SHA256)) continue;
      const code = SIMKUBE_CITED_CODE[key];
      assert.ok(code, `[${key}] cites ${file}#L${first}: say in SIMKUBE_CITED_CODE what it cites`);
      const lines = readSimkube(file)
        .split("\n")
        .slice(Number(first) - 1, Number(last ?? first))
        .join("\n");
      assert.ok(lines.includes(code), `[${key}] ${file}#L${first}-L${last ?? first} does not hold ${code}`);
      checked.push(key);
    }
    assert.deepEqual(
      checked.sort(),
      Object.keys(SIMKUBE_CITED_CODE).sort(),
      "a cited code entry without a link",
    );
  });
});

// ---------------------------------------------------------------------------------------------------------
// Every decision reason, to a row or to "the same as SimKube"

/** The rows (of either table) that explain a reason, or why it is what SimKube does. */
type Explained = readonly string[] | { same: string };

/** Every decision mutate-create counts (stats.ts), and every lifecycle result. A new reason fails to compile. */
const MUTATE_REASONS: Record<MutateDecision | LifecycleResult, Explained> = {
  mutated: ["pod-fields"],
  "pinned-owner-gone": ["broken-chain-pinned"],
  "pinned-no-simulation-root": ["broken-chain-pinned"],
  "pinned-other-simulation-root": ["other-simulation-pinned"],
  "not-create-or-update": { same: "SimKube's webhook rules send only CREATE, UPDATE and DELETE" },
  "not-a-pod": { same: "both webhooks' rules name only pods" },
  terminating: { same: "SimKube mutates nothing on a pod with a deletionTimestamp (mutation.rs L114)" },
  "not-in-simulation": { same: "a pod whose chain holds no root is left alone (mutation.rs L96)" },
  "other-simulation": ["other-simulation-pinned"],
  "update-without-root": { same: "an UPDATE whose chain holds no root is left alone (mutation.rs L96)" },
  "no-object": { same: "SimKube cannot answer a CREATE without an object either; the pod is refused" },
  "bad-metadata": { same: "a pod SimKube cannot parse is answered invalid, refused (mutation.rs L67–72)" },
  malformed: { same: "a body SimKube cannot parse is answered invalid (mutation.rs L67–72)" },
  error: ["owner-lookup-failure", "owner-kinds", "trace-refusal", "transient-retries"],
  "completion-set": ["completion-time-format"],
  "labels-forbidden": ["node-status-write"],
  "no-trace": { same: "no completion time without lifecycle data (SimKube's driver always has its trace)" },
  "trace-refused": ["trace-refusal"],
  "trace-unreadable": ["trace-refusal"],
  "not-in-trace": { same: "an owner not in the trace gives no completion time (mutation.rs L291)" },
  "no-finished-lifecycle": { same: "only a Finished lifecycle gives a completion time (mutation.rs L312ff)" },
  "no-original-namespace": { same: "no original-namespace annotation, no lifecycle (mutation.rs L276)" },
};

/** Every outcome reschedule-delete counts (outcomes.ts). */
const RESCHEDULE_REASONS: Record<RescheduleOutcome, Explained> = {
  "not-delete": { same: "CREATE and UPDATE go to the mutation, never to a clone" },
  "not-a-pod": { same: "both webhooks' rules name only pods" },
  "dry-run": ["dry-run-delete"],
  "no-old-object": { same: "no oldObject, nothing to clone (SimKube's unwrap fails the request)" },
  "no-uid": ["live-checks"],
  "not-in-simulation": { same: "a pod whose chain holds no root is left alone (mutation.rs L96)" },
  "not-bare": { same: "only a pod with no owner besides the root is cloned (mutation.rs L172)" },
  "not-running": { same: "only a Running pod is cloned (mutation.rs L172)" },
  succeeded: { same: "a Succeeded pod is not Running, so not cloned (mutation.rs L172)" },
  "driver-delete": ["driver-deletes"],
  "teardown-controller": ["teardown-clone-attempts"],
  "controller-manager": ["skipped-delete-users"],
  "final-phase": ["interruption-rule"],
  "no-user": ["skipped-delete-users"],
  "root-gone": ["live-checks", "teardown-clone-attempts"],
  "namespace-not-virtual": ["live-checks"],
  "pod-gone": ["live-checks"],
  "uid-mismatch": ["live-checks"],
  "live-pod-not-interrupted": ["live-checks"],
  "not-owned-by-root": ["live-checks", "clone-owner"],
  "simulation-over": ["teardown-clone-attempts"],
  "root-deleting": ["teardown-clone-attempts"],
  "namespace-terminating": ["teardown-clone-attempts"],
  "namespace-gone": ["teardown-clone-attempts"],
  "already-handled": ["clone-attempts"],
  "rescheduling-off": ["delete-webhook-per-deployment"],
  error: ["transient-retries"],
  "answer-deadline": ["clone-after-deletion"],
  "no-deletion-seen": ["clone-after-deletion"],
  "pending-full": ["clone-after-deletion"],
  "deletion-pending": ["clone-attempts"],
  "deletion-not-this-reviews": ["live-checks", "interruption-rule"],
  "clone-name-taken": ["clone-attempts"],
  "clone-replaced": ["clone-attempts"],
  malformed: { same: "a body SimKube cannot parse is answered invalid (mutation.rs L67–72)" },
  cloned: ["eviction-api-clone", "taint-eviction-clone", "clone-name"],
};

function checkExplained(reasons: Record<string, Explained>) {
  for (const [reason, explained] of Object.entries(reasons)) {
    if ("same" in explained) {
      assert.ok(explained.same.length > 20, `${reason}: say why it is the same`);
      continue;
    }
    assert.ok(explained.length > 0, `${reason}: no row`);
    for (const row of explained) {
      assert.ok(DIFFERENCE_ROWS.has(row) || SAME_ROWS.has(row), `${reason}: the page has no row ${row}`);
    }
  }
}

describe("every decision reason maps to a row of the page, or to the same as SimKube", () => {
  it("mutate-create's decisions and lifecycle results", () => checkExplained(MUTATE_REASONS));

  it("reschedule-delete's outcomes, each of RESCHEDULE_OUTCOMES and no other", () => {
    assert.deepEqual(Object.keys(RESCHEDULE_REASONS).sort(), [...RESCHEDULE_OUTCOMES].sort());
    checkExplained(RESCHEDULE_REASONS);
  });
});
