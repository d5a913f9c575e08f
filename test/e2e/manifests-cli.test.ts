// `simkube-fn manifests` from the built CLI: it makes no path secret (the same flags render the same bytes),
// the one given reaches the webhook URLs and the Secret alike, and --virtual-ns-prefix reaches the match
// conditions.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../bundle/simkube-fn.mjs");

interface Doc {
  kind: string;
  stringData?: Record<string, string>;
  webhooks?: { clientConfig: { url?: string }; matchConditions: { expression: string }[] }[];
}

function render(...args: string[]): Doc[] {
  const run = spawnSync(
    process.execPath,
    [
      CLI,
      "manifests",
      "--sim-name",
      "s",
      "--webhook-url-base",
      "https://fn.example.com",
      "--reschedule",
      ...(args.includes("--path-secret") ? [] : ["--path-secret", "0123456789abcdef".repeat(4)]),
      ...args,
    ],
    { encoding: "utf8", timeout: 20_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as Doc);
}

function secretAndUrls(docs: Doc[]) {
  const secret = docs.find((d) => d.kind === "Secret")?.stringData?.["path-secret"] ?? "";
  const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration");
  return { secret, urls: (config?.webhooks ?? []).map((w) => w.clientConfig.url ?? "") };
}

describe("simkube-fn manifests (built CLI)", () => {
  it("makes no path secret: without --path-secret or --path-secret-from it refuses with one line, exit 2", () => {
    const run = spawnSync(process.execPath, [CLI, "manifests", "--platform", "kind", "--sim-name", "s"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, "");
    assert.match(
      run.stderr,
      /^simkube-fn: manifests makes no path secret[^\n]*--path-secret-from SECRET[^\n]*\n$/,
    );
  });

  it("two renders with the same flags are byte-identical", () => {
    const secret = "0123456789abcdef".repeat(4);
    const args = [
      CLI,
      "manifests",
      "--platform",
      "kind",
      "--sim-name",
      "s",
      "--reschedule",
      "--path-secret",
      secret,
    ];
    const renders = [0, 1].map(() =>
      spawnSync(process.execPath, args, { encoding: "utf8", timeout: 20_000 }),
    );
    for (const r of renders) assert.equal(r.status, 0, r.stderr);
    assert.ok((renders[0]?.stdout.length ?? 0) > 1000);
    assert.equal(renders[1]?.stdout, renders[0]?.stdout);
  });

  it("keeps a given --path-secret and applies --virtual-ns-prefix to the match conditions", () => {
    const secret = "given-secret-0123456789abcdefgh";
    const docs = render("--path-secret", secret, "--virtual-ns-prefix", "sim");
    assert.equal(secretAndUrls(docs).secret, secret);
    const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration");
    for (const wh of config?.webhooks ?? []) {
      assert.ok(wh.matchConditions.some((mc) => mc.expression.includes(".startsWith('sim-')")));
    }
  });

  it("refuses a bad path secret with one clear line and exit status 2", () => {
    const run = spawnSync(process.execPath, [CLI, "manifests", "--sim-name", "s", "--path-secret", "short"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /pathSecret must be 24 to 256 characters/);
  });

  it("--help and -h print its usage; an unknown flag is exit 2 with where that usage is", () => {
    for (const flag of ["--help", "-h"]) {
      const run = spawnSync(process.execPath, [CLI, "manifests", flag], {
        encoding: "utf8",
        timeout: 20_000,
      });
      assert.equal(run.status, 0);
      assert.match(run.stdout, /--platform kind\|k3s\|managed\|openfaas/);
    }
    const bad = spawnSync(process.execPath, [CLI, "manifests", "--nope"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(bad.status, 2);
    assert.equal(
      bad.stderr,
      "simkube-fn: Unknown option '--nope'\nrun 'simkube-fn help manifests' for its usage\n",
    );
  });

  it("refuses a replica combination Knative would refuse with exit 2 and the flags named; fits the defaults to the rest", () => {
    const kind = [CLI, "manifests", "--platform", "kind", "--sim-name", "s", "--reschedule"];
    kind.push("--path-secret", "0123456789abcdef".repeat(4));
    const refused = spawnSync(
      process.execPath,
      [...kind, "--min-scale", "3", "--activation-scale-reschedule-delete", "2"],
      { encoding: "utf8", timeout: 20_000 },
    );
    assert.equal(refused.status, 2);
    assert.equal(refused.stdout, "");
    assert.match(refused.stderr, /--activation-scale-reschedule-delete 2 is below --min-scale 3/);
    const fitted = spawnSync(process.execPath, [...kind, "--min-scale", "3"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(fitted.status, 0, fitted.stderr);
    assert.doesNotMatch(fitted.stdout, /activation-scale/);
    assert.match(fitted.stdout, /image: dev\.local\/simkube-fn:\d+\.\d+\.\d+/);
  });

  it("manifests webhook prints only sk-NAME-mutatepods", () => {
    const run = spawnSync(
      process.execPath,
      [
        CLI,
        "manifests",
        "webhook",
        "--platform",
        "kind",
        "--sim-name",
        "sim-b",
        "--path-secret",
        "given-secret-0123456789abcdefgh",
      ],
      { encoding: "utf8", timeout: 20_000 },
    );
    assert.equal(run.status, 0, run.stderr);
    const docs = parseAllDocuments(run.stdout).map((d) => d.toJS() as Doc & { metadata: { name: string } });
    assert.deepEqual(
      docs.map((d) => `${d.kind}/${d.metadata.name}`),
      ["MutatingWebhookConfiguration/sk-sim-b-mutatepods"],
    );
  });
});
