// parseObjectLocation: object-store trace locations as SimKube's driver (object_store) names them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TraceError } from "../../shared/trace/error.js";
import { objectStoreOf, parseObjectLocation } from "../../shared/trace/object-location.js";
import { assertTraceError } from "../support/trace-errors.js";

describe("parseObjectLocation", () => {
  it("reads the bucket from the host and the key from the path, for every scheme", () => {
    const cases: Array<[string, string, string, string]> = [
      ["s3://traces/runs/one.sktrace", "s3", "traces", "runs/one.sktrace"],
      ["s3a://traces/one.sktrace", "s3", "traces", "one.sktrace"],
      ["gs://my-bucket/a/b/c.sktrace", "gcs", "my-bucket", "a/b/c.sktrace"],
      ["azure://container/t.sktrace", "azure", "container", "t.sktrace"],
      ["az://container/t.sktrace", "azure", "container", "t.sktrace"],
      ["abfss://container/t.sktrace", "azure", "container", "t.sktrace"],
      ["S3://Traces/Mixed Case.sktrace", "s3", "Traces", "Mixed Case.sktrace"],
      ["gs://b/with%20space/and-slash.sktrace", "gcs", "b", "with space/and-slash.sktrace"],
    ];
    for (const [location, store, bucket, key] of cases) {
      const parsed = parseObjectLocation(location);
      assert.deepEqual([parsed.store, parsed.bucket, parsed.key], [store, bucket, key], location);
      assert.equal(parsed.account, undefined, location);
    }
  });

  it("takes the Azure account from an abfs(s) URL that names it", () => {
    const parsed = parseObjectLocation("abfss://traces@myaccount.dfs.core.windows.net/sim/t.sktrace");
    assert.deepEqual(
      { bucket: parsed.bucket, account: parsed.account, key: parsed.key, display: parsed.display },
      {
        bucket: "traces",
        account: "myaccount",
        key: "sim/t.sktrace",
        display: "abfss://traces@myaccount.dfs.core.windows.net/sim/t.sktrace",
      },
    );
  });

  it("names the location without a query string or user info", () => {
    assert.equal(parseObjectLocation("s3://b/k.sktrace?versionId=1#x").display, "s3://b/k.sktrace");
    assert.throws(
      () => parseObjectLocation("s3://user:secret@b/"),
      (err: unknown) => err instanceof TraceError && !err.message.includes("secret"),
    );
  });

  it("refuses a location without a bucket or an object name", () => {
    const cases: Array<[string, RegExp]> = [
      ["s3://", /"s3:\/\/": no bucket/],
      ["s3://bucket", /no object name after the bucket/],
      ["gs://bucket/", /no object name after the bucket/],
      ["azure://container/dir/", /no object name after the bucket/],
      ["az:///t.sktrace", /no container/],
      ["gs://b/%E0%A4%A", /not valid percent-encoding/],
    ];
    for (const [location, pattern] of cases) {
      assertTraceError(() => parseObjectLocation(location), pattern, location);
    }
  });

  it("knows exactly object_store's schemes it supports", () => {
    assert.deepEqual(
      ["s3", "s3a", "gs", "azure", "az", "abfs", "abfss", "http", "file", "adl", "constructor"].map(
        objectStoreOf,
      ),
      ["s3", "s3", "gcs", "azure", "azure", "azure", "azure", undefined, undefined, undefined, undefined],
    );
  });

  it("refuses keys with encoded separators or dot segments, whatever the store (issue 35)", () => {
    for (const scheme of ["s3", "gs", "azure", "abfss"]) {
      for (const key of [
        "..%2Fother/t.sktrace",
        "%2E%2E/t.sktrace",
        "a/../t.sktrace",
        "./t.sktrace",
        "a%5Ct.sktrace",
        "a%2ft.sktrace",
      ]) {
        const location = `${scheme}://bucket/sims/${key}`;
        assert.throws(
          () => parseObjectLocation(location),
          (err: unknown) =>
            err instanceof TraceError && /encoded separator or a dot segment/.test(err.message),
          location,
        );
      }
      assert.equal(parseObjectLocation(`${scheme}://bucket/sims/a%20b.sktrace`).key, "sims/a b.sktrace");
    }
  });
});
