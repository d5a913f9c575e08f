import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AdmissionResponse,
  type AdmissionReview,
  allow,
  decodePatch,
  deny,
  parseReview,
  rejectReview,
  reviewJson,
  toReview,
  withPatch,
} from "../../shared/admission/review.js";

const request = (extra: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "u-1", operation: "CREATE", ...extra },
});

describe("parseReview", () => {
  it("accepts a well-formed review", () => {
    const parsed = parseReview(request({ kind: { group: "", version: "v1", kind: "Pod" }, namespace: "ns" }));
    assert.equal(parsed.ok, true);
  });

  for (const [name, body, message] of [
    ["not an object", 7, /must be a JSON object/],
    ["no request", { kind: "AdmissionReview" }, /has no request/],
    ["wrong kind", { kind: "Pod", request: { uid: "u" } }, /expected kind AdmissionReview/],
    [
      "old apiVersion",
      { apiVersion: "admission.k8s.io/v1beta1", request: { uid: "u" } },
      /only admission.k8s.io\/v1/,
    ],
    ["no uid", { request: { operation: "CREATE" } }, /no uid/],
    ["unknown operation", request({ operation: "PATCH" }), /unknown operation/],
    ["null kind", request({ kind: null }), /request.kind must be an object/],
    ["numeric kind.kind", request({ kind: { kind: 3 } }), /request.kind.kind must be a string/],
    ["numeric username", request({ userInfo: { username: 42 } }), /username must be a string/],
    ["array userInfo", request({ userInfo: [] }), /userInfo must be an object/],
    ["numeric namespace", request({ namespace: 1 }), /request.namespace must be a string/],
    ["string dryRun", request({ dryRun: "true" }), /dryRun must be a boolean/],
  ] as const) {
    it(`rejects ${name} with a message`, () => {
      const parsed = parseReview(body);
      assert.equal(parsed.ok, false);
      if (!parsed.ok) assert.match(parsed.message, message);
    });
  }

  it("echoes the uid it could read when rejecting", () => {
    const parsed = parseReview(request({ operation: "PATCH" }));
    assert.equal(parsed.ok, false);
    if (!parsed.ok)
      assert.deepEqual(rejectReview(parsed).response, {
        uid: "u-1",
        allowed: false,
        status: { code: 400, message: "unknown operation PATCH" },
      });
  });
});

describe("answers", () => {
  it("allow, deny and patch echo the uid; an empty patch is no patch", () => {
    assert.deepEqual(allow({ uid: "a" }).response, { uid: "a", allowed: true });
    assert.deepEqual(deny({ uid: "b" }, "no").response, {
      uid: "b",
      allowed: false,
      status: { code: 403, message: "no" },
    });
    assert.deepEqual(withPatch({ uid: "c" }, []).response, { uid: "c", allowed: true });
    const patched = withPatch({ uid: "d" }, [{ op: "add", path: "/metadata/labels", value: {} }]).response;
    assert.equal(patched?.patchType, "JSONPatch");
    assert.deepEqual(decodePatch(patched ?? { uid: "", allowed: true }), [
      { op: "add", path: "/metadata/labels", value: {} },
    ]);
  });
});

describe("reviewJson", () => {
  const ops = [
    { op: "add" as const, path: "/metadata/labels/simkube.io~1simulation", value: 'sim-é"quoted"' },
    { op: "add" as const, path: "/spec/nodeSelector", value: { type: "virtual" } },
  ];
  const reviews: [string, AdmissionReview][] = [
    ["a patch", withPatch({ uid: "u-1" }, ops)],
    ["a uid that needs escaping", withPatch({ uid: 'u"\\\n\u2028ü' }, ops)],
    [
      "a patch and warnings",
      toReview({ ...(withPatch({ uid: "u" }, ops).response as AdmissionResponse), warnings: ['"patch":""'] }),
    ],
    ["no patch", allow({ uid: "u-2" }, ["careful"])],
    ["a denial", deny({ uid: "u-3" }, 'no "patch":"" here')],
    ["an empty patch", toReview({ uid: "u-4", allowed: true, patchType: "JSONPatch", patch: "" })],
    [
      "a patch that is not base64",
      toReview({ uid: "u-5", allowed: true, patchType: "JSONPatch", patch: 'x"y' }),
    ],
    [
      "a request beside the response",
      {
        ...withPatch({ uid: "u-6" }, ops),
        request: { uid: "u-6", operation: "CREATE", options: { patch: "" } },
      },
    ],
  ];
  for (const [what, review] of reviews) {
    it(`writes what JSON.stringify writes: ${what}`, () => {
      assert.equal(reviewJson(review), JSON.stringify(review));
    });
  }

  it("round-trips the patch", () => {
    const parsed = JSON.parse(reviewJson(withPatch({ uid: "u" }, ops))) as AdmissionReview;
    assert.deepEqual(decodePatch(parsed.response as AdmissionResponse), ops);
  });
});
