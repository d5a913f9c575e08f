// loadTrace from s3://, gs:// and azure:// through the real SDKs, each pointed at a local stand-in on
// 127.0.0.1 by its standard endpoint variable (test/support/object-stores.ts): s3rver, fake-gcs-server and
// Azurite. Not mocks: the requests, errors and bodies are the stand-ins' own.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { exampleTrace } from "../../functions/cli/trace/example.js";
import { loadTrace, loadTraceForLookupsIfChanged } from "../../shared/trace/reader.js";
import {
  fakeGcsServerBinary,
  type LocalStore,
  startAzurite,
  startFakeGcs,
  startS3,
  startStalledServer,
} from "../support/object-stores.js";
import { buildTraceBytes } from "../support/trace-builder.js";
import { rejectsWithTraceError } from "../support/trace-errors.js";

const BIG = Buffer.alloc(3 * 1024 * 1024, 0x90);

/** Runs `body` with these variables set in process.env (the readers and SDKs read it), then restores it. */
async function withEnv<T>(env: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(env);
  try {
    return await body();
  } finally {
    apply(saved);
  }
}

interface StoreCase {
  name: string;
  start: (objects: Record<string, Uint8Array>) => Promise<LocalStore>;
  /** Other schemes of the same store (object_store's aliases). */
  aliases: string[];
  missingBucket: RegExp;
  /** The variable that, pointed at a server that never answers, makes the store stall. */
  endpointVariable: string;
  /** The endpoint value for a stalled server at `url`. */
  stalledEndpoint: (url: string) => string;
  /** Variables with a secret the stand-in refuses (none for fake-gcs-server, which checks no credentials). */
  wrongCredentials?: Record<string, string>;
}

const WRONG_SECRET = "d3Jvbmctc2VjcmV0LW5ldmVyLWluLWEtbWVzc2FnZQ==";

const gcs = fakeGcsServerBinary();
const cases: StoreCase[] = [
  {
    name: "S3 (s3rver)",
    start: startS3,
    aliases: ["s3a"],
    missingBucket: /: no such bucket$/,
    endpointVariable: "AWS_ENDPOINT_URL",
    stalledEndpoint: (url) => url,
    wrongCredentials: { AWS_ACCESS_KEY_ID: "AKIAWRONGKEY", AWS_SECRET_ACCESS_KEY: WRONG_SECRET },
  },
  {
    name: "Azure Blob Storage (Azurite)",
    start: startAzurite,
    aliases: ["az", "abfs", "abfss"],
    missingBucket: /: no such container$/,
    endpointVariable: "AZURE_STORAGE_ENDPOINT",
    stalledEndpoint: (url) => `${url}/devstoreaccount1`,
    wrongCredentials: { AZURE_STORAGE_ACCOUNT_KEY: WRONG_SECRET },
  },
  {
    name: "Google Cloud Storage (fake-gcs-server)",
    start: (objects) => {
      if ("skip" in gcs) throw new Error(gcs.skip);
      return startFakeGcs(gcs.binary, objects);
    },
    aliases: [],
    missingBucket: /: no such bucket$/,
    endpointVariable: "STORAGE_EMULATOR_HOST",
    stalledEndpoint: (url) => `${url}/storage/v1`,
  },
];

for (const c of cases) {
  const skip = c.name.startsWith("Google") && "skip" in gcs ? gcs.skip : undefined;
  if (skip) process.stderr.write(`\n*** SKIPPED the gs:// trace tests: ${skip} ***\n\n`);
  describe(`loadTrace from ${c.name}`, { skip, timeout: 120_000 }, () => {
    let store: LocalStore;
    let example: Uint8Array;
    const at = (key: string, scheme = store.scheme) => `${scheme}://${store.bucket}/${key}`;
    const load = (location: string, options = {}) => withEnv(store.env, () => loadTrace(location, options));

    before(async () => {
      example = (await exampleTrace()).bytes;
      store = await c.start({ "runs/example.sktrace": example, "big.bin": BIG });
    });
    after(async () => store?.stop());

    it("loads SimKube's example trace, as written by `trace build`", async () => {
      const started = performance.now();
      const trace = await load(at("runs/example.sktrace"));
      const ms = performance.now() - started;
      process.stderr.write(
        `# ${c.name}: example trace (${example.length} bytes) loaded in ${ms.toFixed(0)} ms\n`,
      );
      assert.equal(trace.version, 2);
      assert.ok(trace.events.length > 0);
      assert.ok(trace.podLifecycles.size > 0);
      for (const alias of c.aliases) {
        const again = await load(at("runs/example.sktrace", alias));
        assert.equal(again.events.length, trace.events.length, alias);
      }
    });

    it("tells a changed object by its version, and reads an unchanged one no more", async () => {
      const location = at("runs/changing.sktrace");
      const ifChanged = (known?: string) =>
        withEnv(store.env, () => loadTraceForLookupsIfChanged(location, {}, known));
      await store.put("runs/changing.sktrace", example);
      const first = await ifChanged();
      assert.ok(first?.version, "the store gives a version");
      assert.equal(first?.bytes, example.byteLength);
      assert.equal(await ifChanged(first.version), undefined);
      const other = buildTraceBytes({ index: { "apps/v1.Deployment": ["ns/changed"] } });
      await store.put("runs/changing.sktrace", other);
      const second = await ifChanged(first.version);
      assert.notEqual(second?.version, first.version);
      assert.deepEqual([...(second?.trace.index.get("apps/v1.Deployment")?.keys() ?? [])], ["ns/changed"]);
      assert.equal(await ifChanged(second?.version), undefined);
    });

    it("names a missing object", async () => {
      const location = at("runs/missing.sktrace");
      await rejectsWithTraceError(
        load(location),
        new RegExp(`^could not read trace from ${location}: no such object$`),
      );
    });

    it("names a missing bucket", async () => {
      const location = `${store.scheme}://no-such-bucket/t.sktrace`;
      await rejectsWithTraceError(load(location), new RegExp(`^could not read trace from ${location}`));
      await rejectsWithTraceError(load(location), c.missingBucket);
    });

    // fake-gcs-server checks no credentials, so only the stores whose stand-in does get this case.
    const wrongCredentials = c.wrongCredentials;
    if (wrongCredentials) {
      it("says access was denied for a wrong secret, without the secret", async () => {
        const location = at("runs/example.sktrace");
        const message = await rejectsWithTraceError(
          withEnv({ ...store.env, ...wrongCredentials }, () => loadTrace(location)),
          new RegExp(`^could not read trace from ${location}: access denied \\(\\w+\\)$`),
        );
        assert.doesNotMatch(message, new RegExp(WRONG_SECRET));
      });
    }

    it("stops at the byte cap", async () => {
      await rejectsWithTraceError(
        load(at("big.bin"), { maxBytes: 1024 * 1024 }),
        /^could not read trace from \S+\/big\.bin: (the object is 3145728 bytes, over|larger than) the limit of 1048576 bytes/,
      );
    });

    it("gives up on a store that never answers, within the deadline", async () => {
      const stalled = await startStalledServer();
      try {
        const env = { ...store.env, [c.endpointVariable]: c.stalledEndpoint(stalled.url) };
        const started = performance.now();
        await rejectsWithTraceError(
          withEnv(env, () => loadTrace(at("runs/example.sktrace"), { timeoutMs: 500 })),
          `could not read trace from ${at("runs/example.sktrace")}: timed out after 500 ms`,
        );
        assert.ok(performance.now() - started < 3_000, "the deadline ended the read");
      } finally {
        await stalled.stop();
      }
    });
  });
}

describe("object-store locations that are wrong before any request", () => {
  it("refuses a URL with no object name", async () => {
    for (const location of ["s3://bucket", "s3://bucket/", "gs://bucket/dir/", "azure://container"]) {
      await rejectsWithTraceError(
        loadTrace(location),
        /^invalid trace location ".*": no object name after the bucket/,
      );
    }
  });

  it("needs the Azure account name, which an azure:// URL does not carry", async () => {
    await withEnv({ AZURE_STORAGE_ACCOUNT_NAME: undefined, AZURE_STORAGE_ACCOUNT_KEY: "a2V5" }, async () => {
      await rejectsWithTraceError(
        loadTrace("azure://container/t.sktrace"),
        /^could not read trace from azure:\/\/container\/t\.sktrace: no Azure storage account: set AZURE_STORAGE_ACCOUNT_NAME/,
      );
    });
  });
});
