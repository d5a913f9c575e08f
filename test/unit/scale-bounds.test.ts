// Replica bounds Knative accepts (knative/scale-bounds.ts): min-scale <= activation-scale <= max-scale with
// activation-scale >= 2 when the annotation is there. Defaults are fitted to what the user set; values the
// user gave that break the rule are refused, naming the flags. Knative itself judges the renderings in
// test/e2e/knative-admission.test.ts.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifestsArgs } from "../../functions/cli/manifests/args.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildServices } from "../../knative/manifests.js";
import type { DeploymentOptions } from "../../knative/options.js";

const BASE: DeploymentOptions = {
  clusterPlatform: "kind",
  simName: "s",
  rescheduleInterruptedBarePods: true,
};

function fromFlags(...flags: string[]): DeploymentOptions {
  const command = parseManifestsArgs(["--platform", "kind", "--sim-name", "s", "--reschedule", ...flags]);
  return command.kind === "help" ? assert.fail("help") : command.options;
}

/** Each function's activation-scale annotation, undefined when absent. */
function activation(options: DeploymentOptions): (string | undefined)[] {
  return buildServices(options).map(
    (s) => s.spec?.template?.metadata?.annotations?.["autoscaling.knative.dev/activation-scale"],
  );
}

describe("activation-scale", () => {
  it("defaults: none for mutate-create (Knative's own 1), 2 for reschedule-delete", () => {
    assert.deepEqual(activation(BASE), [undefined, "2"]);
  });

  it("the default is fitted: dropped under a max-scale of 1 or a min-scale above it, kept at min = 2", () => {
    assert.deepEqual(activation(fromFlags("--min-scale", "3")), [undefined, undefined]);
    assert.deepEqual(activation(fromFlags("--max-scale-reschedule-delete", "1")), [undefined, undefined]);
    assert.deepEqual(activation(fromFlags("--min-scale", "2")), [undefined, "2"]);
    assert.deepEqual(activation(fromFlags("--max-scale-reschedule-delete", "0")), [undefined, "2"]);
  });

  it("a given value is rendered when it fits; 1 renders none", () => {
    assert.deepEqual(
      activation(
        fromFlags("--activation-scale-mutate-create", "3", "--activation-scale-reschedule-delete", "1"),
      ),
      ["3", undefined],
    );
    assert.deepEqual(
      activation(fromFlags("--max-scale-mutate-create", "0", "--activation-scale-mutate-create", "50")),
      ["50", "2"],
    );
    assert.deepEqual(activation(fromFlags("--min-scale", "2", "--activation-scale-reschedule-delete", "2")), [
      undefined,
      "2",
    ]);
  });

  it("a given value below min-scale or above max-scale is refused, naming the flags", () => {
    assert.throws(
      () => resolveOptions(fromFlags("--min-scale", "3", "--activation-scale-reschedule-delete", "2")),
      /^DeploymentOptionsError: --activation-scale-reschedule-delete 2 is below --min-scale 3: Knative requires min-scale <= activation-scale <= max-scale$/,
    );
    assert.throws(
      () =>
        resolveOptions(fromFlags("--min-scale-mutate-create", "2", "--activation-scale-mutate-create", "1")),
      /--activation-scale-mutate-create 1 is below --min-scale-mutate-create 2/,
    );
    assert.throws(
      () =>
        resolveOptions(
          fromFlags("--max-scale-reschedule-delete", "1", "--activation-scale-reschedule-delete", "2"),
        ),
      /--activation-scale-reschedule-delete 2 is above --max-scale-reschedule-delete 1/,
    );
    assert.throws(
      () => resolveOptions(fromFlags("--activation-scale-mutate-create", "4")),
      /--activation-scale-mutate-create 4 is above mutate-create's max-scale 3 \(the default; set --max-scale-mutate-create\)/,
    );
  });

  it("OpenFaaS has no activation scale: the Knative rule does not apply there", () => {
    assert.doesNotThrow(() =>
      resolveOptions({
        clusterPlatform: "openfaas",
        gateway: "https://gw.example.com",
        simName: "s",
        openfaasEdition: "pro",
        minScale: 3,
        tuning: { "mutate-create": { activationScale: 2 } },
      }),
    );
  });
});

describe("min-scale and max-scale", () => {
  it("max below min is refused, naming the flags or the default", () => {
    assert.throws(
      () => resolveOptions(fromFlags("--min-scale", "2", "--max-scale-reschedule-delete", "1")),
      /--max-scale-reschedule-delete 1 is below --min-scale 2/,
    );
    assert.throws(
      () => resolveOptions(fromFlags("--min-scale-mutate-create", "4")),
      /mutate-create's max-scale 3 \(the default; set --max-scale-mutate-create\) is below --min-scale-mutate-create 4/,
    );
    assert.doesNotThrow(() =>
      resolveOptions(fromFlags("--min-scale", "4", "--max-scale-mutate-create", "0")),
    );
  });
});
