// Local stand-ins for the object stores SimKube reads traces from, each on 127.0.0.1, for the real SDKs to
// be pointed at through their standard endpoint variables:
//   S3     s3rver (npm), in this process
//   Azure  Azurite (npm), Microsoft's emulator, as a child process, in memory, telemetry off
//   GCS    fake-gcs-server (Go), built once by scripts/fake-gcs-server.sh, as a child process, in memory
// Each starter resolves to the store, with `env` (the variables that point the SDK at it) and `put` (an
// upload through the same SDK); or to a reason it cannot run, which only a machine without Go can give.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../functions/local-cluster/ports.js";
import { stopChild } from "./child-process.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface LocalStore {
  /** The variables that point the store's SDK (and our reader) at the stand-in, with test credentials. */
  env: Record<string, string>;
  /** The URL scheme's store: s3, gs or azure. */
  scheme: string;
  bucket: string;
  /** Writes an object (a new one, or a new version of one) through the store's own SDK. */
  put(key: string, body: Uint8Array): Promise<void>;
  stop(): Promise<void>;
}

// The SDKs' credential chains must never reach for a cloud's metadata address from a test.
const NO_CLOUD = { AWS_EC2_METADATA_DISABLED: "true", GCE_METADATA_HOST: "127.0.0.1:1" };

// ---------------------------------------------------------------------------------------------------------
// S3: s3rver

export async function startS3(objects: Record<string, Uint8Array>): Promise<LocalStore> {
  const { default: S3rver } = await import("s3rver");
  const directory = mkdtempSync(path.join(tmpdir(), "s3rver-"));
  const bucket = "traces";
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory });
  const address = (await server.run()) as { port: number };
  const env = {
    ...NO_CLOUD,
    AWS_ENDPOINT_URL: `http://127.0.0.1:${address.port}`,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_REGION: "us-east-1",
  };
  const { S3Client, CreateBucketCommand, PutObjectCommand } = await import("@aws-sdk/client-s3");
  const client = new S3Client({
    endpoint: env.AWS_ENDPOINT_URL,
    region: env.AWS_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const put = async (Key: string, Body: Uint8Array) => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
  };
  for (const [key, body] of Object.entries(objects)) await put(key, body);
  return {
    env,
    scheme: "s3",
    bucket,
    put,
    stop: async () => {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Azure: Azurite

// Azurite's well-known development account (public, the same in every Azurite).
const AZURITE_ACCOUNT = "devstoreaccount1";
const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export async function startAzurite(objects: Record<string, Uint8Array>): Promise<LocalStore> {
  const workspace = mkdtempSync(path.join(tmpdir(), "azurite-"));
  const main = path.join(root, "node_modules/azurite/dist/src/blob/main.js");
  const args = ["--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence", "--disableTelemetry"];
  const child = spawn(process.execPath, [main, ...args, "--skipApiVersionCheck", "--loose"], {
    cwd: workspace,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await lineMatching(child, /successfully listens on (http:\/\/127\.0\.0\.1:\d+)/);
  const container = "traces";
  const env = {
    ...NO_CLOUD,
    AZURE_STORAGE_ACCOUNT_NAME: AZURITE_ACCOUNT,
    AZURE_STORAGE_ACCOUNT_KEY: AZURITE_KEY,
    AZURE_STORAGE_ENDPOINT: `${url}/${AZURITE_ACCOUNT}`,
  };
  const { BlobServiceClient, StorageSharedKeyCredential } = await import("@azure/storage-blob");
  const service = new BlobServiceClient(
    env.AZURE_STORAGE_ENDPOINT,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  );
  const client = service.getContainerClient(container);
  await client.create();
  const put = async (name: string, body: Uint8Array) => {
    await client.getBlockBlobClient(name).uploadData(Buffer.from(body));
  };
  for (const [name, body] of Object.entries(objects)) await put(name, body);
  return {
    env,
    scheme: "azure",
    bucket: container,
    put,
    stop: async () => {
      await stopChild(child);
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// GCS: fake-gcs-server

/** The binary, built when missing; or why it cannot be (no Go). CI=true never accepts a reason. */
export function fakeGcsServerBinary(): { binary: string } | { skip: string } {
  const run = spawnSync("bash", [path.join(root, "scripts/fake-gcs-server.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const binary = run.stdout.trim().split("\n").at(-1);
  if (run.status === 0 && binary) return { binary };
  const why = `scripts/fake-gcs-server.sh failed (exit ${run.status}): Go is needed to build fake-gcs-server`;
  if (run.status === 127 && process.env.CI !== "true") return { skip: why };
  throw new Error(why);
}

export async function startFakeGcs(binary: string, objects: Record<string, Uint8Array>): Promise<LocalStore> {
  const data = mkdtempSync(path.join(tmpdir(), "fake-gcs-"));
  const bucket = "traces";
  // -data preloads <dir>/<bucket>/<object> into the memory backend.
  for (const [name, body] of Object.entries(objects)) {
    mkdirSync(path.dirname(path.join(data, bucket, name)), { recursive: true });
    writeFileSync(path.join(data, bucket, name), body);
  }
  const port = await freePort();
  const args = ["-scheme", "http", "-host", "127.0.0.1", "-port", String(port), "-backend", "memory"];
  const child = spawn(binary, [...args, "-data", data, "-log-level", "info"], {
    cwd: data,
    stdio: ["ignore", "pipe", "pipe"],
  });
  await lineMatching(child, /server started at/);
  const url = `http://127.0.0.1:${port}`;
  return {
    // The Node SDK takes the variable as its JSON API base URL, path included.
    env: { ...NO_CLOUD, STORAGE_EMULATOR_HOST: `${url}/storage/v1` },
    scheme: "gs",
    bucket,
    // The JSON API's simple upload, as the SDK sends it (each upload is a new generation).
    put: async (name: string, body: Uint8Array) => {
      const upload = `${url}/upload/storage/v1/b/${bucket}/o?uploadType=media&name=${encodeURIComponent(name)}`;
      const response = await fetch(upload, { method: "POST", body });
      if (!response.ok) throw new Error(`fake-gcs-server upload: HTTP ${response.status}`);
    },
    stop: async () => {
      await stopChild(child);
      rmSync(data, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** A server that accepts connections and never answers: the stand-in for a store that stalls. */
export async function startStalledServer(): Promise<{ url: string; stop: () => Promise<void> }> {
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/** Resolves with the first capture of the first output line matching `pattern`; rejects if the child exits. */
function lineMatching(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`no "${pattern}" within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${err.message}; output:\n${output}`));
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = pattern.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1] ?? match[0]);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => fail(new Error(`exited (${code ?? signal}) before it was ready`)));
  });
}
