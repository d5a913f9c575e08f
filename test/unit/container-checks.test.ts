// The function container's image and resources (knative/container-checks.ts): what Knative's image parser
// (go-containerregistry, weak validation) or the container runtime's reference grammar refuses, and what
// the API server's quantity parser and resource validation refuse, is refused before rendering.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { usage } from "../../functions/cli/args.js";
import { checkImage, checkResources, quantityValue } from "../../knative/container-checks.js";
import { DEFAULT_IMAGE, DEFAULT_OPENFAAS_IMAGE } from "../../knative/defaults.js";
import { resolveOptions } from "../../knative/deployment-options.js";
import { buildStack, openfaasImage } from "../../knative/openfaas-stack.js";
import { VERSION } from "../../shared/base/version.js";

const DIGEST = `sha256:${"ab".repeat(32)}`;

describe("--image", () => {
  it("accepts references with and without registry, port, tag and digest", () => {
    for (const image of [
      "ab",
      "simkube-fn:latest",
      "dev.local/simkube-fn:0.1.0",
      "localhost/ab",
      "localhost:5000/team/simkube-fn:1.0",
      "registry.example.com/a/b/c_d__e-f.g:v1.2-rc.3",
      `ab@${DIGEST}`,
      `ab:1@${DIGEST}`,
      "[::1]:5000/ab:1",
    ]) {
      assert.equal(checkImage(image), image);
    }
  });

  it("refuses what Knative or the container runtime refuses, naming --image", () => {
    for (const image of [
      "",
      "a", // go-containerregistry: a repository has 2 to 255 characters
      "a:1",
      "AB:1", // upper case repository
      "A/b",
      "ab:.x", // a tag starts with a word character
      "ab@sha256:abc", // a digest is sha256 with 64 hex digits
      `ab@sha512:${"ab".repeat(64)}`,
      "a..b/c",
      "a b",
      "ab:",
      "https://registry.example.com/ab",
    ]) {
      assert.throws(() => checkImage(image), /^Error: --image ".*" is not an image reference/, image);
    }
  });

  it("the default is dev.local/simkube-fn:<package.json version> on Knative and on OpenFaaS", () => {
    assert.equal(DEFAULT_IMAGE, `dev.local/simkube-fn:${VERSION}`);
    assert.match(VERSION, /^\d+\.\d+\.\d+/);
    assert.equal(resolveOptions({ clusterPlatform: "kind", simName: "s" }).image, DEFAULT_IMAGE);
    const openfaas = resolveOptions({ clusterPlatform: "openfaas", gateway: "https://gw.example.com" });
    assert.equal(openfaas.image, DEFAULT_OPENFAAS_IMAGE);
    // scripts/build-openfaas-image.sh builds dev.local/simkube-fn-<function>:<version>: the stack's default.
    assert.equal(
      openfaasImage(openfaas.image, "mutate-create"),
      `dev.local/simkube-fn-mutate-create:${VERSION}`,
    );
  });

  it("manifests --help names the defaults the rendering uses, on Knative and on OpenFaaS", () => {
    const help = usage("manifests");
    const named = (pattern: RegExp) => pattern.exec(help)?.[1];
    assert.equal(named(/--image IMAGE \(([^;)\s]+);/), DEFAULT_IMAGE);
    const openfaasDefault = named(/--image IMAGE \(default ([^)\s]+)\)/);
    assert.equal(openfaasDefault, DEFAULT_OPENFAAS_IMAGE);
    const stack = buildStack({
      target: "openfaas-stack",
      gateway: "https://gw.example.com",
      rescheduleInterruptedBarePods: true,
    });
    const images = Object.entries(stack.functions).map(([, fn]) => fn.image);
    assert.deepEqual(images.sort(), [
      openfaasImage(DEFAULT_OPENFAAS_IMAGE, "mutate-create"),
      openfaasImage(DEFAULT_OPENFAAS_IMAGE, "reschedule-delete"),
    ]);
  });
});

describe("resources", () => {
  it("reads Kubernetes quantities", () => {
    const cases: [string, number][] = [
      ["100m", 0.1],
      ["0.5", 0.5],
      [".5", 0.5],
      ["5.", 5],
      ["128Mi", 128 * 1024 ** 2],
      ["1Gi", 1024 ** 3],
      ["1e3", 1000],
      ["2k", 2000],
      ["1E", 1e18],
      ["+1", 1],
      ["-1", -1],
    ];
    for (const [text, value] of cases) assert.equal(quantityValue(text), value, text);
    for (const text of ["abc", "1m0", "1 Gi", "1gi", "", "1.2.3", "e3", "1KiB"]) {
      assert.equal(quantityValue(text), undefined, text);
    }
  });

  it("refuses a malformed or negative quantity and a request above its limit, naming the flags", () => {
    assert.throws(
      () => checkResources({ requests: { cpu: "abc" } }),
      /--cpu-request "abc" is not a Kubernetes quantity/,
    );
    assert.throws(
      () => checkResources({ limits: { memory: "-1Gi" } }),
      /--memory-limit -1Gi must not be negative/,
    );
    assert.throws(
      () => checkResources({ requests: { memory: "1Gi" }, limits: { memory: "512Mi" } }),
      /--memory-request 1Gi is above --memory-limit 512Mi/,
    );
    assert.doesNotThrow(() =>
      checkResources({ requests: { cpu: "1" }, limits: { cpu: "1000m", memory: "1Gi" } }),
    );
  });

  it("resolveOptions refuses them as option errors", () => {
    assert.throws(
      () => resolveOptions({ clusterPlatform: "kind", resources: { requests: { cpu: "1m0" } } }),
      /^DeploymentOptionsError: --cpu-request "1m0"/,
    );
    assert.throws(
      () => resolveOptions({ clusterPlatform: "kind", image: "Foo:1" }),
      /^DeploymentOptionsError: --image/,
    );
  });
});
