// Knative Serving's own webhook logic (SetDefaults, then Validate, as on a CREATE; knative-validate, built
// from knative.dev/serving) judges everything `simkube-fn manifests` renders: every Knative platform with
// each option that reaches a Knative object, and every combination of the replica knobs. What the CLI
// renders, Knative accepts; what the CLI refuses, it refuses with exit 2 naming a flag, and Knative would
// have refused the same values too. Needs Go: skipped loudly without it, failed under CI=true.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { runManifests } from "../../functions/cli/manifests/command.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildService, renderManifests } from "../../knative/manifests.js";
import type { DeployedFunction } from "../../knative/options.js";
import {
  type KnativeVerdict,
  knativeValidateBinary,
  validateWithKnative,
} from "../support/knative-validate.js";

const validator = knativeValidateBinary();
if ("skip" in validator) {
  process.stderr.write(
    `\n*** SKIPPED Knative admission tests (knative-admission.test.ts): ${validator.skip} ***\n\n`,
  );
}
const skip = "skip" in validator ? validator.skip : false;
const binary = "binary" in validator ? validator.binary : "";

const PLATFORMS: Record<string, string[]> = {
  kind: ["--platform", "kind"],
  k3s: ["--platform", "k3s"],
  "kind traefik": ["--platform", "kind", "--ingress", "traefik"],
  managed: ["--platform", "managed", "--domain", "fn.example.com"],
  "knative url": ["--target", "knative", "--webhook-url-base", "https://fn.example.com"],
  "knative service": ["--target", "knative", "--webhook-mode", "service"],
};

const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;
const SIM = ["--sim-name", "s1", "--reschedule"];

/** One option at a time (on top of a simulation with both functions), each reaching a rendered object. */
const VARIANTS: string[][] = [
  [],
  ["--no-reschedule"],
  ["--sim-name", "s1"],
  ["--sim-name", "s1", "--no-reschedule"],
  ["--reschedule"],
  [...SIM],
  [...SIM, "--cluster-local", "true"],
  [...SIM, "--cluster-local", "false"],
  [...SIM, "--image", `registry.example.com/team/simkube-fn@${DIGEST}`],
  [...SIM, "--image", "localhost:5000/simkube-fn:1.0"],
  [...SIM, "--image", "simkube-fn:latest"],
  [...SIM, "--cpu-request", "250m", "--memory-request", "256Mi", "--cpu-limit", "1", "--memory-limit", "1Gi"],
  [...SIM, "--memory-limit", "512Mi"],
  [...SIM, "--scale-down-delay-mutate-create", "1h", "--scale-down-delay-reschedule-delete", "0s"],
  [...SIM, "--timeout-mutate-create", "1", "--timeout-reschedule-delete", "30"],
  [...SIM, "--name", "a"],
  [...SIM, "--name", "n".repeat(37)],
  [...SIM, "--namespace", "functions"],
  [...SIM, "--issuer", "my-ca"],
  [...SIM, "--kourier-namespace", "ingress", "--cert-manager-namespace", "certs"],
  [...SIM, "--ca-inject-from", "certs/my-ca"],
  [...SIM, "--trace-path", "https://traces.example.com/t.sktrace", "--log-level", "debug"],
  [...SIM, "--driver-users", "a,system:serviceaccount:simkube:sk-ctrl-sa", "--sequence-store", "memory"],
  [...SIM, "--path-secret", "p".repeat(24), "--virtual-ns-prefix", "sim"],
  [...SIM, "--without-webhook", "--owner-resource", "widgets.example.com"],
];

interface Rendered {
  label: string;
  args: string[];
  yaml?: string;
  refusal?: string;
}

/** Every rendering's path secret, unless its flags name one (a render makes none). */
const PATH_SECRET = "0123456789abcdef".repeat(4);

async function render(label: string, args: string[]): Promise<Rendered> {
  const named = args.includes("--path-secret") || args.includes("--path-secret-from");
  const command = parseManifestsArgs(named ? args : [...args, "--path-secret", PATH_SECRET]);
  if (command.kind === "help") throw new Error("help");
  let yaml = "";
  try {
    await runManifests(command, (text) => {
      yaml += text;
    });
  } catch (err) {
    return { label, args, refusal: (err as Error).message };
  }
  return { label, args, yaml };
}

/** Every rendering through one knative-validate run; verdicts handed back per rendering, in order. */
function judge(renders: readonly Rendered[]): Map<Rendered, KnativeVerdict[]> {
  const counts = renders.map(
    (r) => parseAllDocuments(r.yaml ?? "").filter((d) => d.contents !== null).length,
  );
  const verdicts = validateWithKnative(binary, renders.map((r) => r.yaml ?? "").join("\n---\n"));
  assert.equal(
    verdicts.length,
    counts.reduce((a, b) => a + b, 0),
    "one verdict per document",
  );
  const out = new Map<Rendered, KnativeVerdict[]>();
  let at = 0;
  renders.forEach((r, i) => {
    out.set(r, verdicts.slice(at, at + (counts[i] as number)));
    at += counts[i] as number;
  });
  return out;
}

function describeRejections(verdicts: Map<Rendered, KnativeVerdict[]>): string[] {
  const problems: string[] = [];
  for (const [r, list] of verdicts) {
    for (const v of list) {
      if (v.result === "reject") problems.push(`${r.label}: ${v.kind} ${v.name}: ${v.error}`);
      if (v.unknownFields)
        problems.push(`${r.label}: ${v.kind} ${v.name}: unknown fields ${v.unknownFields}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------
// The replica knobs, crossed per function: --min-scale (both functions) with that function's
// --max-scale-FUNCTION and --activation-scale-FUNCTION. Each Service's annotations come from its own knobs
// and --min-scale only, so crossing each function's knobs covers every combination of both.

const MIN_SCALES = [undefined, 0, 1, 2, 3];
const MAX_SCALES = [undefined, 0, 1, 2, 3];
const ACTIVATION_SCALES = [undefined, 1, 2, 3];
const FUNCTIONS: DeployedFunction[] = ["mutate-create", "reschedule-delete"];

interface ScaleCase {
  min: number | undefined;
  max: Partial<Record<DeployedFunction, number>>;
  activation: Partial<Record<DeployedFunction, number>>;
}

function scaleCases(): ScaleCase[] {
  const cases: ScaleCase[] = [];
  for (const fn of FUNCTIONS)
    for (const min of MIN_SCALES)
      for (const max of MAX_SCALES)
        for (const activation of ACTIVATION_SCALES) {
          cases.push({
            min,
            max: max === undefined ? {} : { [fn]: max },
            activation: activation === undefined ? {} : { [fn]: activation },
          });
        }
  return cases;
}

function scaleArgs(c: ScaleCase): string[] {
  const args = c.min === undefined ? [] : ["--min-scale", String(c.min)];
  for (const fn of FUNCTIONS) {
    const max = c.max[fn];
    const activation = c.activation[fn];
    if (max !== undefined) args.push(`--max-scale-${fn}`, String(max));
    if (activation !== undefined) args.push(`--activation-scale-${fn}`, String(activation));
  }
  return args;
}

/**
 * The Services as a renderer without any checks would write them: the given min-scale and max-scale (or
 * their defaults) and the given activation-scale (none when not given) straight into Knative's annotations.
 */
function uncheckedServices(c: ScaleCase): string {
  const o = resolveOptions({ clusterPlatform: "kind", simName: "s1", rescheduleInterruptedBarePods: true });
  const services = FUNCTIONS.map((fn) => {
    const service = buildService(o, fn);
    const annotations = service.spec?.template?.metadata?.annotations as Record<string, string>;
    annotations["autoscaling.knative.dev/min-scale"] = String(c.min ?? 0);
    annotations["autoscaling.knative.dev/max-scale"] = String(c.max[fn] ?? o.maxScale[fn]);
    const activation = c.activation[fn];
    if (activation === undefined) delete annotations["autoscaling.knative.dev/activation-scale"];
    else annotations["autoscaling.knative.dev/activation-scale"] = String(activation);
    return service;
  });
  return renderManifests(services);
}

describe("Knative's own admission of what `manifests` renders", { skip }, () => {
  it("accepts every object of every Knative platform, one option at a time", async () => {
    const renders: Rendered[] = [];
    for (const [platform, base] of Object.entries(PLATFORMS)) {
      for (const variant of VARIANTS) {
        renders.push(await render(`${platform} ${variant.join(" ")}`, [...base, ...variant]));
      }
    }
    const refused = renders.filter((r) => r.refusal !== undefined);
    assert.deepEqual(
      refused.map((r) => `${r.label}: ${r.refusal}`),
      [],
    );
    const verdicts = judge(renders);
    assert.deepEqual(describeRejections(verdicts), []);
    // Knative judged something in each rendering: both Services unless --no-reschedule, and the DomainMappings on
    // kind/k3s behind Kourier (behind Traefik the route is Traefik's own objects, which Knative ignores).
    for (const [r, list] of verdicts) {
      const services = list.filter((v) => v.kind === "Service" && v.apiVersion === "serving.knative.dev/v1");
      assert.equal(services.length, r.args.includes("--no-reschedule") ? 1 : 2, r.label);
      const mappings = list.filter((v) => v.kind === "DomainMapping").length;
      const kourier = /^(kind|k3s) /.test(r.label) && !r.args.includes("traefik");
      assert.equal(mappings, kourier ? services.length : 0, r.label);
      for (const v of [...services, ...list.filter((x) => x.kind === "DomainMapping")]) {
        assert.equal(v.result, "accept", `${r.label}: ${v.name}`);
      }
    }
  });

  it("every combination of --min-scale, --max-scale-FUNCTION and --activation-scale-FUNCTION: Knative accepts the rendering, or the CLI refuses what Knative refuses", async () => {
    const cases = scaleCases();
    const renders: Rendered[] = [];
    for (const c of cases)
      renders.push(await render(scaleArgs(c).join(" "), ["--platform", "kind", ...SIM, ...scaleArgs(c)]));
    const rendered = renders.filter((r) => r.yaml !== undefined);
    assert.deepEqual(describeRejections(judge(rendered)), []);

    const refusedCases = cases.filter((_, i) => renders[i]?.refusal !== undefined);
    for (const c of refusedCases) {
      const r = renders[cases.indexOf(c)] as Rendered;
      const flags = scaleArgs(c).filter((a) => a.startsWith("--"));
      assert.ok(
        flags.some((f) => r.refusal?.includes(f)),
        `${r.label}: "${r.refusal}" names one of its flags`,
      );
    }
    const unchecked = refusedCases.map(
      (c): Rendered => ({ label: scaleArgs(c).join(" "), args: [], yaml: uncheckedServices(c) }),
    );
    for (const [r, list] of judge(unchecked)) {
      assert.ok(
        list.some((v) => v.result === "reject"),
        `${r.label}: refused by the CLI, but Knative accepts it unchecked`,
      );
    }
    // Both kinds of outcome occur: the matrix is not all one thing.
    assert.ok(
      rendered.length > 0 && refusedCases.length > 0,
      `${rendered.length} rendered, ${refusedCases.length} refused`,
    );
  });

  it("images and quantities the CLI refuses, Knative refuses when written unchecked", async () => {
    const values: [string, string][] = [
      ["--image", "Foo:1"],
      ["--image", "a:1"],
      ["--image", "ab@sha256:abc"],
      ["--image", "a b"],
      ["--cpu-request", "abc"],
      ["--memory-limit", "1m0"],
    ];
    const o = resolveOptions({ clusterPlatform: "kind", simName: "s1" });
    const unchecked: Rendered[] = [];
    for (const [flag, value] of values) {
      const r = await render(`${flag} ${value}`, ["--platform", "kind", "--sim-name", "s1", flag, value]);
      assert.match(r.refusal ?? "", new RegExp(`^${flag} `), `${flag} ${value}: refused naming the flag`);
      const service = buildService(o, "mutate-create");
      const container = service.spec?.template?.spec?.containers[0] as { image: string; resources: object };
      if (flag === "--image") container.image = value;
      else
        container.resources =
          flag === "--cpu-request" ? { requests: { cpu: value } } : { limits: { memory: value } };
      unchecked.push({ label: r.label, args: [], yaml: renderManifests([service]) });
    }
    for (const [r, list] of judge(unchecked)) assert.equal(list[0]?.result, "reject", r.label);
  });

  it("the oracle can fail: Knative rejects the old rendering's activation-scale 1, and a DomainMapping under the cluster domain", () => {
    const o = resolveOptions({ clusterPlatform: "kind", simName: "s1" });
    const service = buildService(o, "mutate-create");
    const annotations = service.spec?.template?.metadata?.annotations as Record<string, string>;
    annotations["autoscaling.knative.dev/activation-scale"] = "1";
    const mapping = {
      apiVersion: "serving.knative.dev/v1beta1",
      kind: "DomainMapping",
      metadata: { name: "fn.simkube-fn.svc.cluster.local", namespace: "simkube-fn" },
      spec: {
        ref: { apiVersion: "serving.knative.dev/v1", kind: "Service", name: "simkube-fn-mutate-create" },
      },
    };
    const verdicts = validateWithKnative(binary, renderManifests([service, mapping]));
    assert.deepEqual(
      verdicts.map((v) => v.result),
      ["reject", "reject"],
    );
    assert.match(verdicts[0]?.error ?? "", /activation-scale=1 must be greater than 1/);
    assert.match(verdicts[1]?.error ?? "", /must not be a subdomain of cluster local domain/);
  });
});
