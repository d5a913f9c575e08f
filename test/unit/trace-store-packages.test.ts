// The object-store SDKs are optional dependencies (package.json): an install without them
// (npm ci --omit=optional) reads file and http(s) traces, and an s3://, gs:// or azure:// trace then fails
// with the package to install, not a bare module-resolution error.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { readerLoadFailure, STORE_PACKAGES } from "../../shared/trace/source.js";

const PACKAGE_JSON = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../package.json");

/** The real error Node gives for an import of `pkg` from a folder where it is not installed. */
async function missingPackageError(pkg: string): Promise<unknown> {
  const dir = mkdtempSync(path.join(tmpdir(), "simkube-fn-no-sdk-"));
  try {
    const probe = path.join(dir, "probe.mjs");
    writeFileSync(probe, `import ${JSON.stringify(pkg)};\n`);
    await import(probe);
  } catch (err) {
    return err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error(`${pkg} resolved from an empty folder`);
}

describe("object-store SDKs: optional", () => {
  it("are optional dependencies in package.json, and every one a reader needs is listed", () => {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as {
      dependencies: Record<string, string>;
      optionalDependencies: Record<string, string>;
    };
    for (const name of Object.values(STORE_PACKAGES).flat()) {
      assert.ok(pkg.optionalDependencies[name], `${name} is optional`);
      assert.equal(pkg.dependencies[name], undefined, `${name} is not a required dependency`);
    }
  });

  it("a reader whose SDK is not installed says which packages to install", async () => {
    const err = await missingPackageError("@aws-sdk/client-s3");
    assert.equal(
      readerLoadFailure("s3", err),
      "the s3 reader needs @aws-sdk/client-s3, an optional dependency that is not installed (npm install @aws-sdk/client-s3)",
    );
    const azure = readerLoadFailure("azure", await missingPackageError("@azure/identity"));
    assert.match(azure, /npm install @azure\/storage-blob @azure\/identity\)$/);
  });

  it("any other load failure keeps its own message", async () => {
    const other = await missingPackageError("left-pad-not-ours");
    assert.match(readerLoadFailure("gcs", other), /^the gcs reader could not be loaded: Cannot find package/);
    assert.equal(readerLoadFailure("s3", new Error("boom")), "the s3 reader could not be loaded: boom");
  });
});
